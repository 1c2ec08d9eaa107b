//! Rules on native manifest fields: required fields (VAL-2), `requires_hermes` (VAL-3),
//! environment variable names (VAL-5), capabilities (VAL-13), `requires_auth` (VAL-18),
//! platforms.

use std::collections::HashSet;

use crate::diag::{CheckId, Diagnostic, did_you_mean};
use crate::known;
use crate::located::Pos;
use crate::package::Spanned;
use crate::package::manifest::Manifest;

/// Runs the manifest-field rules.
pub fn check(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    required_fields(m, file, out);
    if let Some(spec) = &m.requires_hermes {
        check_requires_hermes(spec, file, out);
    }
    env_names(m, file, out);
    capabilities(m, file, out);
    requires_auth(m, file, out);
    platforms(m, file, out);
    external_checks(m, file, out);
    yml_only(file, out);
}

/// Hermes 0.19.0's `hermes plugins install` and every memory-provider reader open only
/// `plugin.yaml`; the loader falls back to `plugin.yml`.
fn yml_only(file: &str, out: &mut Vec<Diagnostic>) {
    if std::path::Path::new(file).file_name() == Some("plugin.yml".as_ref()) {
        out.push(
            Diagnostic::warning(
                CheckId::Layout,
                file,
                Pos::START,
                "the manifest is `plugin.yml`: Hermes loads it, but `hermes plugins install` reads only `plugin.yaml` (the directory is named after the repository, `requires_env` is never asked, `manifest_version` never checked)",
            )
            .hint("Rename it to `plugin.yaml`."),
        );
    }
}

/// Words a shell understands but no program is called: `command -v x` only works in a shell.
const SHELL_ONLY: &[&str] = &[
    "command", "type", "hash", "test", "[", "builtin", "source", ".",
];

/// `external_dependencies[].check` is run by Hermes without a shell (`shlex.split`, then the
/// program directly): pipes, redirections, `&&`, `$(…)` and shell builtins never work there,
/// so the check always fails and `install` is offered every time.
fn external_checks(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    for dep in &m.external_dependencies {
        let Some(check) = dep.check.as_deref() else {
            continue;
        };
        let first = check.split_whitespace().next().unwrap_or("");
        let shell_syntax = ["|", "&", ";", ">", "<", "$(", "`", "~/"]
            .iter()
            .find(|t| check.contains(**t));
        let why = if SHELL_ONLY.contains(&first) {
            format!("`{first}` is a shell builtin")
        } else if let Some(token) = shell_syntax {
            format!("`{token}` is shell syntax")
        } else {
            continue;
        };
        out.push(
            Diagnostic::warning(
                CheckId::ManifestFields,
                file,
                dep.pos,
                format!("external dependency check `{check}` cannot succeed: Hermes runs `check` without a shell and {why}, so the dependency always looks missing"),
            )
            .value(check)
            .hint("Call the program itself, e.g. `check: \"ffmpeg -version\"`."),
        );
    }
}

fn required_fields(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    let fields = [
        ("name", &m.name),
        ("version", &m.version),
        ("description", &m.description),
    ];
    for (field, value) in fields {
        match value {
            // Written but empty: Hermes keys an empty `name:` as `None` (never enabled).
            None if m.is_null(field) => out.push(
                Diagnostic::error(
                    CheckId::ManifestFields,
                    file,
                    m.field_pos(field).unwrap_or(Pos::START),
                    format!("`{field}` is empty (null)"),
                )
                .hint(match field {
                    "name" => "Write the name: Hermes reads an empty `name:` as None and keys the plugin `None`, which can never be enabled.",
                    _ => "Write a string value.",
                }),
            ),
            // Written but of the wrong type: loading already said so.
            None if m.has_field(field) => {}
            None => out.push(
                Diagnostic::error(CheckId::ManifestFields, file, Pos::START, format!("`{field}` is missing"))
                    .hint(match field {
                        "name" => "Add `name:` (Hermes falls back to the directory name, but catalogs and reports need it).",
                        "version" => "Add `version: \"1.0.0\"` (a string).",
                        _ => "Add `description:` — one sentence on what the plugin does.",
                    }),
            ),
            Some(v) if v.value.trim().is_empty() => out.push(
                Diagnostic::error(CheckId::ManifestFields, file, v.pos, format!("`{field}` is empty"))
                    .value(&v.value),
            ),
            Some(v) if field == "name" => {
                if let Err(e) = crate::home::check_name(&v.value) {
                    out.push(
                        Diagnostic::error(
                            CheckId::ManifestFields,
                            file,
                            v.pos,
                            format!("`name` cannot be a plugin name: {}", e.reason),
                        )
                        .value(crate::text::escape(&v.value))
                        .hint("Hermes uses the name as a directory and module name: use 1-64 ASCII letters, digits, `-` and `_`, e.g. `my-plugin`."),
                    );
                }
            }
            Some(_) => {}
        }
    }
}

/// VAL-3: every clause of a `requires_hermes` spec parses (as `enable` will read it:
/// [`crate::package::requires_hermes`]), and no floor is a date (CalVer).
pub fn check_requires_hermes(spec: &Spanned<String>, file: &str, out: &mut Vec<Diagnostic>) {
    use crate::package::requires_hermes::{SpecError, clauses};
    for clause in clauses(&spec.value) {
        let clause = match clause {
            Ok(c) => c,
            Err(e) => {
                let d = Diagnostic::error(CheckId::RequiresHermes, file, spec.pos, e.to_string());
                out.push(match &e {
                    SpecError::Empty => {
                        d.hint("Write a constraint such as `>=0.19, <1.0`, or remove the field.")
                    }
                    SpecError::EmptyClause => d.value(&spec.value),
                    SpecError::Clause(text) => d.value(text),
                });
                if e == SpecError::Empty {
                    return;
                }
                continue;
            }
        };
        let major = clause.version.release().first().copied().unwrap_or(0);
        if matches!(clause.op, ">=" | ">" | "==") && major >= 1900 {
            out.push(
                Diagnostic::error(
                    CheckId::RequiresHermes,
                    file,
                    spec.pos,
                    format!("requires_hermes clause `{}{}` is a date-like (CalVer) floor; Hermes versions are 0.x.y, so it can never be satisfied", clause.op, clause.version),
                )
                .value(format!("{}{}", clause.op, clause.version))
                .hint("Use the Hermes release you need, e.g. `>=0.19`."),
            );
        }
    }
}

fn env_names(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    let mut seen: HashSet<&str> = HashSet::new();
    for (field, vars) in [
        ("requires_env", &m.requires_env),
        ("optional_env", &m.optional_env),
    ] {
        for var in vars {
            let name = &var.name.value;
            if known::ENV_DENYLIST.contains(&name.as_str()) {
                out.push(
                    Diagnostic::error(
                        CheckId::RequiresEnv,
                        file,
                        var.name.pos,
                        format!("{field} asks for `{name}`, which Hermes refuses to write to .env (it changes what runs): `hermes plugins install` aborts when the user answers"),
                    )
                    .value(name)
                    .hint("Ask for a variable of the plugin's own (e.g. `MYPLUGIN_EXTRA_PATH`) and apply it in code."),
                );
            }
            if let Some(pos) = var.password_only {
                out.push(
                    Diagnostic::warning(
                        CheckId::RequiresEnv,
                        file,
                        pos,
                        format!("`{name}` is marked `password: true`; `hermes plugins install` hides input only for `secret: true`, so the value would be typed in the clear"),
                    )
                    .value(name)
                    .hint("Write `secret: true` (hermes-plugins reads both)."),
                );
            }
            if !crate::package::fields::is_env_name(name) {
                let upper: String = name
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_uppercase()
                        } else {
                            '_'
                        }
                    })
                    .collect();
                out.push(
                    Diagnostic::error(
                        CheckId::RequiresEnv,
                        file,
                        var.name.pos,
                        format!(
                            "{field} name `{name}` is not UPPER_SNAKE_CASE (^[A-Z][A-Z0-9_]*$)"
                        ),
                    )
                    .value(name)
                    .hint(format!("Rename it, e.g. `{upper}`.")),
                );
            }
            if !seen.insert(name) {
                out.push(
                    Diagnostic::warning(
                        CheckId::RequiresEnv,
                        file,
                        var.name.pos,
                        format!("environment variable `{name}` is listed more than once"),
                    )
                    .value(name)
                    .hint("List each variable once, in requires_env or optional_env."),
                );
            }
        }
    }
}

fn capabilities(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    let mut seen = HashSet::new();
    for cap in &m.capabilities {
        if known::capability(&cap.value).is_none() {
            let ids = known::CAPABILITIES.iter().map(|c| c.id);
            let mut d = Diagnostic::warning(
                CheckId::Capabilities,
                file,
                cap.pos,
                format!("unknown capability `{}` is ignored by Hermes", cap.value),
            )
            .value(&cap.value);
            d = match did_you_mean(&cap.value, ids) {
                Some(s) => d.hint(format!("Did you mean `{s}`?")),
                None => d.hint(format!(
                    "Known capabilities: {}.",
                    known::CAPABILITIES
                        .iter()
                        .map(|c| c.id)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
            out.push(d);
        } else if !seen.insert(cap.value.as_str()) {
            out.push(
                Diagnostic::info(
                    CheckId::Capabilities,
                    file,
                    cap.pos,
                    format!("capability `{}` is listed more than once", cap.value),
                )
                .value(&cap.value),
            );
        }
    }
}

fn requires_auth(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    for provider in &m.requires_auth {
        if !known::AUTH_PROVIDERS.contains(&provider.value.as_str()) {
            let mut d = Diagnostic::warning(
                CheckId::RequiresAuth,
                file,
                provider.pos,
                format!(
                    "requires_auth provider `{}` is not one Hermes 0.19 knows (known: {})",
                    provider.value,
                    known::AUTH_PROVIDERS.join(", ")
                ),
            )
            .value(&provider.value);
            if let Some(s) = did_you_mean(&provider.value, known::AUTH_PROVIDERS.iter().copied()) {
                d = d.hint(format!("Did you mean `{s}`?"));
            }
            out.push(d);
        }
    }
}

fn platforms(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    for p in &m.platforms {
        if !known::PLATFORMS.contains(&p.value.as_str()) {
            let mut d = Diagnostic::warning(
                CheckId::ManifestFields,
                file,
                p.pos,
                format!(
                    "unknown platform `{}` (known: {})",
                    p.value,
                    known::PLATFORMS.join(", ")
                ),
            )
            .value(&p.value);
            if let Some(s) = did_you_mean(&p.value, known::PLATFORMS.iter().copied()) {
                d = d.hint(format!("Did you mean `{s}`?"));
            }
            out.push(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(spec: &str) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        check_requires_hermes(
            &Spanned::new(spec.to_string(), Pos::START),
            "plugin.yaml",
            &mut out,
        );
        out
    }

    #[test]
    fn requires_hermes_clauses() {
        assert!(run(">=0.19, <1.0").is_empty());
        assert!(run("0.19").is_empty());
        assert!(run(">=v0.19.0-rc1").is_empty());
        assert_eq!(run(">=2025.10.1").len(), 1);
        assert_eq!(run(">=0.19,,<1").len(), 1);
        assert_eq!(run("~=0.19").len(), 1);
        assert_eq!(run(">= latest").len(), 1);
    }
}
