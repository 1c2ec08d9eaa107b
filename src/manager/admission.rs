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
    /// The Hermes versions every ctx call fits (`compatibility.loads_on`).
    pub(super) loads_on: Vec<String>,
    /// Outside modules imported while it loads.
    pub(super) load_imports: Vec<LoadImport>,
}

/// Validates a fetched package as Hermes would load it (seed 003): errors of load-gate checks
/// — what Hermes would fail to load — block (unless `force`), a dangerous verdict always
/// blocks, and so does a key that cannot be a plugin key. Catalog-admission errors
/// (undeclared tools, credential access, …) are warnings here: they stay errors in
/// `validate` and `catalog review`. See [`crate::diag::Gate`].
pub(super) fn validate(dir: &Path, force: bool) -> Result<Validated, ManagerError> {
    let loaded = package::load_dir(dir, Mode::Validate).map_err(|e| {
        ManagerError::coded(
            Code::Invalid,
            format!("{}: not a plugin package: {e}", dir.display()),
        )
    })?;
    if let Content::Pip(p) = &loaded.content {
        return Err(ManagerError::Refused(format!(
            "{} is a pip-distributed plugin ({}): Hermes discovers it through its entry points once it is installed with pip into the environment Hermes runs in; hermes-plugins installs plugin directories (plugin.yaml or plugin.json)",
            dir.display(),
            p.project.as_deref().unwrap_or("a Python project")
        )));
    }
    let outcome =
        check::run(&loaded, &check::Context::default()).map_err(ManagerError::environment)?;
    let dangerous = outcome
        .analysis
        .as_ref()
        .is_some_and(|a| a.verdict == crate::check::static_py::security::Verdict::Dangerous);
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
    if dangerous {
        let all = shortened(
            outcome
                .findings
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(describe),
            "error",
        );
        return Err(ManagerError::coded(
            Code::Dangerous,
            format!(
                "`{name}` is dangerous (security scan); it cannot be installed, not even with --force:\n  {}",
                all.join("\n  ")
            ),
        ));
    }
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
        loads_on: outcome.compatibility.loads_on,
        load_imports: outcome.analysis.map(|a| a.load_imports).unwrap_or_default(),
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
