//! `install`: a prepared plugin recorded in `installed.json` and, with `--enable`, published
//! through [`super::apply`].

use super::admission::{approve_core_patch, core_patch_item, unprovided_imports};
use super::apply::GrantFlags;
use super::apply::{self, Applied, Change, SelectionEdit};
use super::plan::{PlanItem, PlanMode};
use super::prepare::{Accept, DryStore, audit_acceptances, keep, prepare};
use super::{Context, DepsConsent, Feedback, ManagerError, Prompter};
use crate::source::SourceSpec;
use crate::state::installed::InstalledPlugin;

/// What `install` should do.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    /// The source as parsed.
    pub spec: SourceSpec,
    /// `--ref`.
    pub rev: Option<String>,
    /// `--enable`.
    pub enable: bool,
    /// Dependency consent.
    pub deps: DepsConsent,
    /// `--force`: install despite validation errors (never despite a `dangerous` verdict).
    pub force: bool,
    /// `--grant` / `--allow-tool-override` (granted) and `--no-allow-tool-override` (revoked).
    pub grant: Vec<String>,
    /// Capabilities revoked by flag.
    pub revoke: Vec<String>,
    /// `--yes`: accept what a replacement adds to an active plugin's surface.
    pub yes: bool,
    /// `--allow-removed`: install even if the catalog's kill list names it.
    pub allow_removed: bool,
    /// `--allow-core-patch`: approve a plugin that patches Hermes internals.
    pub allow_core_patch: bool,
    /// `--replace`: replace the installed plugin of the same key from another source.
    pub replace: bool,
    /// `--dry-run` (the consent plan, nothing recorded) or `--plan HASH`.
    pub plan: PlanMode,
    /// `--accept-finding ID`: security findings accepted for this plugin alone.
    pub accept_findings: Vec<String>,
}

/// What `install` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InstallOutcome {
    /// The plugin key.
    pub key: String,
    /// The installed record.
    pub plugin: InstalledPlugin,
    /// Whether the plugin is enabled in the profile now.
    pub enabled: bool,
    /// Validation warnings shown.
    pub warnings: Vec<String>,
    /// The publication, when one happened.
    pub applied: Option<Applied>,
}

fn is_active(cx: &Context, key: &str) -> bool {
    super::reads::current_doc(cx).is_some_and(|d| d.plugin(key).is_some())
}

/// `install SOURCE`: fetches and validates without the writer lock, then takes it (with
/// crash recovery) to store, record and publish.
pub fn install(
    cx: &Context,
    request: &InstallRequest,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<InstallOutcome, ManagerError> {
    // The wheel of a distribution is read several times below; unpacked once.
    let _unpacked = crate::package::pip::unpacked::Operation::begin();
    // The kill list first: a removed entry is never fetched.
    super::check_removed_source(cx, &request.spec, request.allow_removed, feedback)?;
    // A distribution from the index, told to go ahead with the dependencies and to publish:
    // its environment is made while its release is chosen and checked (installing wheels runs
    // nothing; see `generation::ahead`).
    if matches!(request.spec, SourceSpec::Pypi { .. })
        && request.enable
        && request.deps == DepsConsent::Yes
        && request.plan == PlanMode::Off
    {
        cx.ahead.open(&cx.layout, &cx.python, cx.uv_cache());
    }
    let prepared = prepare(
        cx,
        &request.spec,
        request.rev.as_deref(),
        request.force,
        Accept::Strict(&request.accept_findings),
        feedback,
    )?;
    let previous_patches = super::installed(cx)?
        .plugins
        .get(&prepared.plugin.key)
        .map(|p| p.core_patches.clone())
        .unwrap_or_default();
    let core_patch = core_patch_item(
        &prepared.plugin.key,
        &prepared.core_patches,
        &previous_patches,
    );
    if let Some(item) = &core_patch
        && request.plan != PlanMode::Dry
    {
        approve_core_patch(item, request.allow_core_patch, prompter)?;
    }
    let command = format!("install {}", request.spec.display());
    let _lock = super::begin_writing(cx, &command, feedback)?;
    let _dry = DryStore::begin(cx, request.plan == PlanMode::Dry)?;
    let requires_auth = prepared.requires_auth.clone();
    let load_imports = prepared.load_imports.clone();
    let accepted_now = prepared.accepted_now.clone();
    let (plugin, mut warnings) = keep(
        cx,
        prepared,
        request.replace,
        request.allow_removed,
        feedback,
    )?;
    if !plugin.source.reviewed {
        feedback.note(&format!(
            "`{}` comes from an unreviewed source ({}); its code has not been through catalog review",
            plugin.key,
            request.spec.display()
        ));
    }
    if !requires_auth.is_empty() {
        feedback.note(&format!(
            "`{}` requires sign-in with: {}",
            plugin.key,
            requires_auth.join(", ")
        ));
    }
    let mut installed = super::installed(cx)?;
    let key = plugin.key.clone();
    let active = is_active(cx, &key);
    if active && request.deps == DepsConsent::No {
        return Err(super::Refusal::ActiveWithoutDeps { key }.into());
    }
    installed.plugins.insert(key.clone(), plugin.clone());
    let enable = request.enable && request.deps != DepsConsent::No;
    if request.enable && !enable {
        feedback.note(&format!(
            "`{key}` was fetched but stays disabled (--no-deps); enable it with `hermes-plugins enable {key}`"
        ));
    }
    let edits = if enable {
        vec![(cx.profile.clone(), SelectionEdit::Enable(key.clone()))]
    } else {
        Vec::new()
    };
    let keep = installed.clone();
    let applied = apply::apply(
        cx,
        Change {
            operation: format!("install {}", request.spec.display()),
            edits,
            installed: Some(installed),
            deps: request.deps,
            grants: GrantFlags {
                targets: if enable {
                    vec![key.clone()]
                } else {
                    Vec::new()
                },
                grant: request.grant.clone(),
                revoke: request.revoke.clone(),
            },
            accept_surface: request.yes,
            plan: request.plan.clone(),
            plan_notes: core_patch
                .into_iter()
                .chain((!requires_auth.is_empty()).then(|| PlanItem::Auth {
                    plugin: key.clone(),
                    providers: requires_auth.clone(),
                }))
                .collect(),
        },
        prompter,
        feedback,
    );
    let applied = match applied {
        // CAP-6: refused dependency consent keeps the plugin installed and disabled.
        Err(ManagerError::NotConsented {
            code, asked, way, ..
        }) if enable && !active => {
            // Kept installed only if that needs no consent either (a profile listing it by
            // hand would enable it): otherwise the refusal stands and nothing changes.
            let kept = apply::apply(
                cx,
                Change {
                    operation: format!("install {} (not enabled)", request.spec.display()),
                    edits: Vec::new(),
                    installed: Some(keep),
                    deps: DepsConsent::No,
                    grants: GrantFlags::default(),
                    accept_surface: false,
                    plan: PlanMode::Off,
                    plan_notes: Vec::new(),
                },
                &mut super::NoInput,
                feedback,
            );
            let outcome = if kept.is_err() {
                apply::NOTHING_CHANGED.to_string()
            } else {
                audit_acceptances(cx, &key, &accepted_now);
                format!(
                    "`{key}` is installed but not enabled; enable it with `hermes-plugins enable {key}`"
                )
            };
            return Err(ManagerError::NotConsented {
                code,
                asked,
                outcome,
                way,
            });
        }
        other => other?,
    };
    if applied.plan.is_none() {
        audit_acceptances(cx, &key, &accepted_now);
    }
    warnings.extend(unprovided_imports(cx, &key, &load_imports, &applied));
    Ok(InstallOutcome {
        key,
        plugin,
        enabled: enable || active,
        warnings,
        applied: Some(applied),
    })
}
