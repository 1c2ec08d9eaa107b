//! What `install` and `update` let in (seed 003 draws the lines): a fetched package is
//! validated as Hermes would load it — load-gate errors refuse, catalog-admission errors are
//! warnings, a `dangerous` verdict always refuses ([`validate`]); code that patches Hermes
//! itself is asked like a capability ([`core_patch_item`], [`approve_core_patch`]); and after
//! publication, modules the plugin imports that nothing provides are named
//! ([`unprovided_imports`]).

use std::path::Path;

use super::apply::Applied;
use super::plan::PlanItem;
use super::{Context, ManagerError, Prompter};
use crate::check;
use crate::check::static_py::load_imports::LoadImport;
use crate::check::static_py::overrides;
use crate::diag::{CheckId, Gate, Severity};
use crate::exit::Code;
use crate::package::{self, Content, Mode};

/// A fetched package as install judges it.
pub(super) struct Validated {
    pub(super) loaded: package::LoadedPackage,
    /// Warnings to show, catalog-admission errors among them.
    pub(super) warnings: Vec<String>,
    /// The Hermes internals its code rebinds (`no-core-override` targets): Hermes loads it,
    /// so installing it is asked like a capability ([`core_patch_item`]).
    pub(super) core_patches: Vec<String>,
    /// The Hermes versions it loads on as validate judges each release
    /// (`compatibility.loads_on_as_installed`: imports and override grants aside).
    pub(super) loads_on: Vec<String>,
    /// Outside modules imported while it loads.
    pub(super) load_imports: Vec<LoadImport>,
    /// The findings that make it `dangerous`: only an acceptance lets it in
    /// ([`accept_findings`]).
    pub(super) blocking: Vec<BlockingFinding>,
}

/// A security finding that makes a package `dangerous`, as install judges it.
#[derive(Debug, Clone)]
pub(super) struct BlockingFinding {
    /// `<rule>@<file>:<line>`.
    pub(super) id: String,
    /// The SHA-256 (hex) of the flagged file in the fetched package (empty if unreadable).
    pub(super) sha256: String,
    /// For people: where and what.
    pub(super) shown: String,
    /// It makes the verdict `dangerous` (else it is code the analysis could not read).
    pub(super) dangerous: bool,
}

/// Lets a `dangerous` package (or one with code the analysis could not read) in only if every
/// such finding is accepted for it:
/// by id on this command (`explicit`, `--accept-finding`), or recorded for the installed
/// version with the flagged file unchanged (`recorded`). Returns the acceptances to record
/// (all of them) and those given on this command (to audit). `--force` never does this.
/// An explicit id the package does not have is a usage error (a typo must not look like
/// consent).
pub(super) fn accept_findings(
    name: &str,
    blocking: &[BlockingFinding],
    explicit: &[String],
    recorded: &[crate::state::installed::AcceptedFinding],
) -> Result<
    (
        Vec<crate::state::installed::AcceptedFinding>,
        Vec<crate::state::installed::AcceptedFinding>,
    ),
    ManagerError,
> {
    use crate::state::installed::AcceptedFinding;
    let ids = || {
        if blocking.is_empty() {
            "it has none".to_string()
        } else {
            format!(
                "its findings: {}",
                blocking
                    .iter()
                    .map(|b| b.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    };
    if let Some(unknown) = explicit
        .iter()
        .find(|id| !blocking.iter().any(|b| &b.id == *id))
    {
        return Err(ManagerError::Usage(format!(
            "--accept-finding {}: `{name}` has no such dangerous finding ({})",
            crate::text::escape(unknown),
            ids()
        )));
    }
    let mut accepted = Vec::new();
    let mut given = Vec::new();
    let mut refused = Vec::new();
    for b in blocking {
        let by_flag = explicit.contains(&b.id);
        let kept = recorded
            .iter()
            .any(|r| r.id == b.id && r.sha256 == b.sha256 && !b.sha256.is_empty());
        if by_flag || kept {
            let acceptance = AcceptedFinding {
                id: b.id.clone(),
                sha256: b.sha256.clone(),
            };
            if by_flag {
                given.push(acceptance.clone());
            }
            accepted.push(acceptance);
        } else {
            refused.push(b);
        }
    }
    if refused.is_empty() {
        return Ok((accepted, given));
    }
    let what = if refused.iter().any(|b| b.dangerous) {
        "is dangerous (security scan)"
    } else {
        "ships code the security scan could not read"
    };
    Err(ManagerError::coded(
        Code::Dangerous,
        format!(
            "`{name}` {what}; it cannot be installed, not even with --force:\n  {}\nRead the code; to accept a finding for this plugin alone (recorded, and asked again when that file changes): {}",
            refused
                .iter()
                .map(|b| b.shown.as_str())
                .collect::<Vec<_>>()
                .join("\n  "),
            refused
                .iter()
                .map(|b| format!("--accept-finding {}", b.id))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    ))
}

/// Validates a fetched package as Hermes would load it (seed 003): errors of load-gate checks
/// — what Hermes would fail to load — block (unless `force`), and so does a key that cannot
/// be a plugin key; the findings of a dangerous verdict are returned for
/// [`accept_findings`] (never passed by `force`). Catalog-admission errors
/// (undeclared tools, credential access, …) are warnings here: they stay errors in
/// `validate` and `catalog review`. See [`crate::diag::Gate`]. `shown` is how messages
/// name the package: what the user named, not the scratch copy in `dir`.
pub(super) fn validate(dir: &Path, shown: &str, force: bool) -> Result<Validated, ManagerError> {
    let loaded = package::load_dir(dir, Mode::Validate).map_err(|e| {
        ManagerError::coded(Code::Invalid, format!("{shown}: not a plugin package: {e}"))
    })?;
    if let Content::Pip(p) = &loaded.content
        && matches!(p.source, crate::package::pip::PipSource::Project)
    {
        return Err(super::Refusal::ProjectSource {
            shown: shown.to_string(),
            project: p.project.clone(),
        }
        .into());
    }
    if let Content::Pip(p) = &loaded.content
        && p.registers_nothing()
    {
        let instead = if p.console_scripts.is_empty() {
            "a plain library: it has no console scripts either".to_string()
        } else {
            format!(
                "a command-line tool (console scripts: {}), perhaps an installer that sets a plugin up itself: run it as its documentation says, not through hermes-plugins",
                p.console_scripts.join(", ")
            )
        };
        return Err(ManagerError::coded(
            Code::Invalid,
            format!(
                "{shown} ({}) registers no Hermes plugin: it has no `{}` or `{}` entry point, so Hermes would never load it. It is {instead}",
                p.project.as_deref().unwrap_or("a Python distribution"),
                crate::package::pip::PLUGINS_GROUP,
                crate::package::pip::MEMORY_PROVIDERS_GROUP
            ),
        ));
    }
    // The files findings name are in the package root (a wheel's unpacked copy).
    let files_root = loaded
        .root
        .as_ref()
        .map_or_else(|| dir.to_path_buf(), |r| r.path().to_path_buf());
    let outcome =
        check::run(&loaded, &check::Context::default()).map_err(ManagerError::environment)?;
    let blocking: Vec<BlockingFinding> = outcome
        .analysis
        .iter()
        .flat_map(|a| a.security.iter().filter(|f| f.blocks()))
        .map(|f| BlockingFinding {
            id: f.id(),
            sha256: crate::hash::sha256_file_bounded(&files_root.join(&f.file), 1 << 40)
                .map(|d| crate::hash::hex(&d))
                .unwrap_or_default(),
            shown: format!(
                "{}:{}: [security-scan/{}] {}",
                f.file, f.pos.line, f.rule, f.message
            ),
            dangerous: f.level >= crate::check::static_py::security::Level::High,
        })
        .collect();
    let describe = |d: &crate::diag::Diagnostic| {
        format!(
            "{}:{}: [{}] {}",
            d.file,
            d.pos.line,
            d.check.as_str(),
            d.message
        )
    };
    let errors_of = |gate: Gate| {
        outcome
            .findings
            .iter()
            .filter(move |d| d.severity == Severity::Error && d.check.gate() == gate)
    };
    let errors = shortened(errors_of(Gate::Load).map(describe), "error");
    // Patches of Hermes itself are asked (below); every other admission error is a warning.
    let patch_target = |d: &crate::diag::Diagnostic| {
        d.value
            .clone()
            .filter(|t| d.check == CheckId::NoCoreOverride && overrides::patches_hermes(t))
    };
    let mut core_patches: Vec<String> = errors_of(Gate::Admission)
        .filter_map(patch_target)
        .collect();
    core_patches.sort();
    core_patches.dedup();
    let admission = errors_of(Gate::Admission)
        .filter(|d| patch_target(d).is_none())
        .map(|d| format!("catalog admission: {}", describe(d)));
    let warnings = shortened(
        outcome
            .findings
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(describe)
            .chain(admission),
        "warning",
    );
    let name = crate::text::escape(&loaded.name()).into_owned();
    if let Err(e) = crate::home::check_key(&loaded.key) {
        return Err(ManagerError::coded(
            Code::Invalid,
            format!(
                "`{name}` cannot be installed: {e} (its manifest `name` becomes the plugin key, a directory name)"
            ),
        ));
    }
    if !errors.is_empty() && !force {
        return Err(ManagerError::coded(
            Code::Invalid,
            format!(
                "Hermes would not load `{name}`; nothing was installed (--force installs it anyway):\n  {}",
                errors.join("\n  ")
            ),
        ));
    }
    if !loaded.accepted() {
        return Err(ManagerError::coded(
            Code::Invalid,
            format!("`{name}` cannot be loaded at all: {}", errors.join("; ")),
        ));
    }
    Ok(Validated {
        loaded,
        warnings,
        core_patches,
        // Imports are judged at publication against the real core's interpreter
        // (`unprovided_imports`), not against the release's reference install; an override
        // grant is the user's to give.
        loads_on: outcome.compatibility.loads_on_as_installed(),
        load_imports: outcome.analysis.map(|a| a.load_imports).unwrap_or_default(),
        blocking,
    })
}

/// What a plugin that patches Hermes internals (`no-core-override`) asks: the targets not
/// approved for the version installed before (`previous`). Hermes loads such a plugin, but it
/// breaks when Hermes changes and can collide with other plugins patching the same code, so
/// it is asked like a capability, once per target. The item is part of the consent plan
/// (`--dry-run`, `--plan HASH`) whether or not `--allow-core-patch` approves it.
pub(super) fn core_patch_item(
    key: &str,
    targets: &[String],
    previous: &[String],
) -> Option<PlanItem> {
    let added: Vec<String> = targets
        .iter()
        .filter(|t| !previous.contains(t))
        .cloned()
        .collect();
    (!added.is_empty()).then(|| PlanItem::CorePatch {
        plugin: key.to_string(),
        targets: added,
    })
}

/// Asks for a [`core_patch_item`]: `--allow-core-patch` approves; without a terminal the
/// operation is refused naming the flag, before anything is stored.
pub(super) fn approve_core_patch(
    item: &PlanItem,
    allowed: bool,
    prompter: &mut dyn Prompter,
) -> Result<(), ManagerError> {
    let PlanItem::CorePatch { plugin, targets } = item else {
        return Ok(());
    };
    if allowed {
        return Ok(());
    }
    let text = format!(
        "`{plugin}` patches Hermes internals at run time: {}.\nHermes loads it, but such code breaks when Hermes changes and can collide with other plugins patching the same code; the catalog does not admit it.\n",
        targets.join(", ")
    );
    if !prompter.interactive() {
        return Err(ManagerError::coded(
            Code::ConsentRequired,
            format!(
                "{}Nothing was changed; approve it with --allow-core-patch",
                text.replace('\n', " ")
            ),
        ));
    }
    if prompter.confirm(&text, "Install it anyway?") {
        Ok(())
    } else {
        Err(ManagerError::coded(
            Code::ConsentRefused,
            format!("`{plugin}` was not installed: patching Hermes internals was not approved"),
        ))
    }
}

/// After a publication that holds `key`: the outside modules it imports while loading that
/// the agent's interpreter cannot import with the generation's site-packages — neither
/// Hermes's environment nor the plugin's declared dependencies provide them, so Hermes will
/// fail to load it (two real plugins listed theirs only in requirements.txt). Asked of the
/// installed core's interpreter; with a checkout or no core there is none to ask, and nothing
/// is said. One warning naming each module and where it is imported, with the field to use.
pub(super) fn unprovided_imports(
    cx: &Context,
    key: &str,
    imports: &[LoadImport],
    applied: &Applied,
) -> Option<String> {
    if imports.is_empty() || applied.plan.is_some() || !applied.plugins.iter().any(|k| k == key) {
        return None;
    }
    let core = cx.core.as_ref()?;
    if core.origin != crate::resolve::inputs::CoreOrigin::Installed {
        return None;
    }
    let number = applied.generation?;
    let doc = crate::generation::doc::GenerationDoc::read(&cx.layout.generation(number)).ok()?;
    let site = cx.layout.generation(number).join(&doc.python.site_packages);
    let names: Vec<String> = imports.iter().map(|i| i.top.clone()).collect();
    let missing = match crate::agent::unimportable(&core.dir, &site, &names) {
        Ok(missing) => missing,
        Err(e) => {
            tracing::debug!("import check of `{key}` skipped: {e}");
            return None;
        }
    };
    if missing.is_empty() {
        return None;
    }
    let listed: Vec<String> = imports
        .iter()
        .filter(|i| missing.contains(&i.top))
        .map(|i| format!("`{}` ({}:{})", i.top, i.file, i.pos.line))
        .collect();
    Some(format!(
        "`{key}` imports {} while it loads, which neither Hermes's environment nor its declared dependencies provide: Hermes will fail to load it until the package is declared (python_dependencies in plugin.yaml, or [project].dependencies in its pyproject.toml)",
        listed.join(", ")
    ))
}

/// The first [`SHOWN_FINDINGS`] lines, and a last line counting the rest.
fn shortened(lines: impl Iterator<Item = String>, what: &str) -> Vec<String> {
    let all: Vec<String> = lines.collect();
    let rest = all.len().saturating_sub(SHOWN_FINDINGS);
    let mut shown: Vec<String> = all.into_iter().take(SHOWN_FINDINGS).collect();
    if rest > 0 {
        shown.push(format!(
            "… and {rest} more {what}(s) (`hermes-plugins validate` lists them all)"
        ));
    }
    shown
}

/// Findings listed in install messages before the rest are counted.
const SHOWN_FINDINGS: usize = 20;
