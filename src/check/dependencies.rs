//! VAL-8 (`dependency-bounds`) and VAL-9 (`dependency-quarantine`): shape and compatibility of
//! the managed Python requirements. (PEP 508 hygiene, VAL-7, is reported while loading.) And
//! VAL-7's warning for dependencies a plugin lists only where nothing installs them
//! ([`undeclared`]: a `requirements.txt` beside the manifest).

use uv_pep440::{Operator, Version, VersionSpecifiers};
use uv_pep508::VersionOrUrl;

use crate::diag::{CheckId, Diagnostic};
use crate::hermes_core::CoreLock;
use crate::package::declarations::{Declarations, DeclaredRequirement, DepSource};

/// Runs the dependency rules on the managed requirements.
pub fn check(decl: &Declarations, core: Option<&CoreLock>, out: &mut Vec<Diagnostic>) {
    for req in &decl.managed {
        bounds(req, out);
        if let Some(core) = core {
            excludes_core_pin(req, core, out);
        }
    }
}

/// Largest `requirements.txt` read for [`undeclared`].
const REQUIREMENTS_LIMIT: u64 = 256 * 1024;

/// Requirements a plugin lists in a `requirements.txt` beside its manifest but declares
/// nowhere that is installed: Hermes's package manager (and hermes-plugins) install only
/// `pyproject.toml`'s `[project].dependencies` or the manifest's `python_dependencies` /
/// `pip_dependencies`, so such a plugin fails to import after a clean install (two real
/// plugins did). Packages Hermes core pins (`--core`) are present anyway and not reported.
/// One warning, at the first such line, naming them all and the field to use.
pub fn undeclared(
    root: &crate::pkgfs::PackageRoot,
    decl: &Declarations,
    manifest_file: &str,
    core: Option<&CoreLock>,
    out: &mut Vec<Diagnostic>,
) {
    const FILE: &str = "requirements.txt";
    let Ok(text) = root.read_text(FILE, REQUIREMENTS_LIMIT) else {
        return;
    };
    let declared: std::collections::BTreeSet<&uv_normalize::PackageName> = decl
        .managed
        .iter()
        .chain(decl.unmanaged.iter().map(|(r, _)| r))
        .map(|r| &r.requirement.name)
        .collect();
    let mut missing: Vec<(u32, String)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.split(" #").next().unwrap_or_default().trim();
        // Comments, options (`-r`, `-e`, `--index-url`) and URLs are not requirements here.
        if line.is_empty() || line.starts_with('#') || line.starts_with('-') || line.contains("://")
        {
            continue;
        }
        if line.len() > crate::package::declarations::MAX_REQUIREMENT {
            continue;
        }
        let Ok(req) = std::str::FromStr::from_str(line) else {
            continue;
        };
        let req: uv_pep508::Requirement = req;
        if declared.contains(&req.name)
            || core.is_some_and(|c| c.get(&req.name).is_some())
            || missing.iter().any(|(_, m)| *m == line)
        {
            continue;
        }
        missing.push((
            u32::try_from(index + 1).unwrap_or(u32::MAX),
            line.to_string(),
        ));
    }
    let Some((line, _)) = missing.first() else {
        return;
    };
    let listed: Vec<&str> = missing.iter().map(|(_, r)| r.as_str()).collect();
    let field = match decl.source {
        DepSource::Pyproject => "pyproject.toml's [project].dependencies",
        DepSource::Manifest | DepSource::None => "`python_dependencies`",
    };
    out.push(
        Diagnostic::warning(
            CheckId::PythonDependencies,
            FILE,
            crate::located::Pos {
                line: *line,
                column: 1,
            },
            format!(
                "{FILE} lists {}, which the plugin does not declare: nothing installs {FILE}, so the plugin may fail to import after a clean install",
                listed.join(", ")
            ),
        )
        .value(listed.join(", "))
        .hint(format!(
            "Declare them in {field} ({manifest_file}): only declared dependencies are resolved with Hermes core and installed."
        )),
    );
}

fn specifiers(req: &DeclaredRequirement) -> Option<&VersionSpecifiers> {
    match &req.requirement.version_or_url {
        Some(VersionOrUrl::VersionSpecifier(specs)) => Some(specs),
        _ => None,
    }
}

/// The suggested upper bound for a floor: the next major release, or before 1.0 three
/// minor releases up (`>=0.29` → `<0.32`).
pub fn suggested_ceiling(floor: &Version) -> String {
    let release = floor.release();
    let major = release.first().copied().unwrap_or(0);
    if major >= 1 {
        format!("{}", major + 1)
    } else {
        let minor = release.get(1).copied().unwrap_or(0);
        format!("0.{}", minor + 3)
    }
}

fn bounds(req: &DeclaredRequirement, out: &mut Vec<Diagnostic>) {
    let name = req.requirement.name.to_string();
    let Some(specs) = specifiers(req).filter(|s| !s.is_empty()) else {
        out.push(
            Diagnostic::warning(
                CheckId::DependencyBounds,
                &req.file,
                req.pos,
                format!(
                    "`{}` has no version constraint: every future release is accepted unchecked",
                    req.raw
                ),
            )
            .value(&req.raw)
            .hint(format!(
                "Pin the range you tested, e.g. `{name}>=X.Y,<X+1`."
            )),
        );
        return;
    };
    let bounded = specs.iter().any(|s| {
        matches!(
            s.operator(),
            Operator::LessThan
                | Operator::LessThanEqual
                | Operator::Equal
                | Operator::EqualStar
                | Operator::ExactEqual
                | Operator::TildeEqual
        )
    });
    if bounded {
        return;
    }
    let floor = specs
        .iter()
        .filter(|s| {
            matches!(
                s.operator(),
                Operator::GreaterThanEqual | Operator::GreaterThan
            )
        })
        .map(|s| s.version().clone())
        .max();
    let hint = match &floor {
        Some(f) => format!("Use `{name}>={f},<{}`.", suggested_ceiling(f)),
        None => format!("Add an upper bound, e.g. `{name}>=X.Y,<X+1`."),
    };
    out.push(
        Diagnostic::warning(
            CheckId::DependencyBounds,
            &req.file,
            req.pos,
            format!(
                "`{}` has no upper bound: every future release is accepted unchecked",
                req.raw
            ),
        )
        .value(&req.raw)
        .hint(hint),
    );
}

/// VAL-9: a requirement that excludes the version Hermes core pins. (Its public id is
/// `dependency-quarantine`, as SPEC names it; it is not the 14-day window of
/// `resolve::quarantine`, which applies to the same core-pinned packages at resolution.)
fn excludes_core_pin(req: &DeclaredRequirement, core: &CoreLock, out: &mut Vec<Diagnostic>) {
    let Some(locked) = core.get(&req.requirement.name) else {
        return;
    };
    let Some(specs) = specifiers(req) else {
        return;
    };
    if specs.contains(&locked.version) {
        return;
    }
    let when = req
        .raw
        .split_once(';')
        .map(|(_, m)| format!(" (where `{}` applies)", m.trim()))
        .unwrap_or_default();
    out.push(
        Diagnostic::error(
            CheckId::DependencyExcludesCorePin,
            &req.file,
            req.pos,
            format!(
                "`{}` excludes Hermes core's {}=={}{when}: plugins share core's environment, so this can never resolve",
                req.raw, locked.name, locked.version
            ),
        )
        .value(&req.raw)
        .hint(format!(
            "Widen the range to admit {}; a newer release becomes possible only when Hermes core moves its pin.",
            locked.version
        )),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn ceilings() {
        assert_eq!(
            suggested_ceiling(&Version::from_str("0.29").unwrap()),
            "0.32"
        );
        assert_eq!(
            suggested_ceiling(&Version::from_str("2.0.10").unwrap()),
            "3"
        );
    }
}
