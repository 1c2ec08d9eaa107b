//! The one path every mutating operation takes, in named phases — each a function returning
//! a typed value, so each rule lives in exactly one of them and the CLI renders prompts and
//! diffs from those values:
//!
//! 1. [`select`] — every profile's `config.yaml` with the selection edits applied (a removed
//!    plugin's grants revoked with it), the new selections, the plugins the generation holds;
//! 2. [`consent`] — surface additions of replaced plugins, capability grants per profile,
//!    `requires_env` values (decided, or listed when planning);
//! 3. [`requirements`] — `requires_hermes` against core, `requires_plugins` against the
//!    selection;
//! 4. no-op — the inputs digest ([`digest`]) equals the current generation's: only the user
//!    files change;
//! 5. [`resolve`] — core + every enabled plugin, the current lock preferred or reused;
//! 6. [`dependencies`] — consent for requirements the current generation does not have;
//! 7. [`publish`] — build, publish, edit the user files, switch: one transaction.
//!
//! `--dry-run` runs phases 1–6 asking nothing and returns the consent plan; `--plan HASH`
//! first recomputes that plan and refuses if it moved.

mod consent;
mod dependencies;
mod digest;
pub(super) mod publish;
mod requirements;
mod resolve;
mod select;

use super::plan::{Plan, PlanItem, PlanMode};
use super::{Context, DepsConsent, Feedback, ManagerError, Prompter};
use crate::exit::Code;
use crate::generation::doc::GenPlugin;
use crate::known;
use crate::state::installed::Installed;
use crate::store::Store;

/// A change to one profile's selection.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectionEdit {
    /// Add to `plugins.enabled`, remove from `plugins.disabled`.
    Enable(String),
    /// Remove from `plugins.enabled`, add to `plugins.disabled`.
    Disable(String),
    /// Remove from both.
    Forget(String),
    /// Set keys of `plugins.entries.<plugin>` that are not set yet (a pack's config seeds:
    /// what the user set always wins).
    Seed(String, Vec<(String, crate::state::config_edit::EntryValue)>),
}

/// Capability flags of the command (CAP-4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantFlags {
    /// The plugin keys the flags apply to (in the command's profile).
    pub targets: Vec<String>,
    /// `--grant CAP` (and `--allow-tool-override`).
    pub grant: Vec<String>,
    /// `--revoke CAP` (and `--no-allow-tool-override`).
    pub revoke: Vec<String>,
}

impl GrantFlags {
    /// Checks every id against the registry (unknown ids are a usage error).
    pub fn check(&self) -> Result<(), ManagerError> {
        for id in self.grant.iter().chain(&self.revoke) {
            if known::capability(id).is_none() {
                let ids: Vec<&str> = known::CAPABILITIES.iter().map(|c| c.id).collect();
                return Err(ManagerError::Usage(format!(
                    "unknown capability `{id}` (known: {})",
                    ids.join(", ")
                )));
            }
        }
        Ok(())
    }
}

impl SelectionEdit {
    /// The edit applied to a `config.yaml` text: the lists only (what else a disable or a
    /// removal takes with it is [`select`]'s).
    pub fn edit_text(&self, text: &str) -> Result<String, crate::state::config_edit::EditError> {
        use crate::state::config_edit;
        match self {
            SelectionEdit::Enable(n) => config_edit::enable(text, n),
            SelectionEdit::Disable(n) => config_edit::disable(text, n),
            SelectionEdit::Forget(n) => config_edit::forget(text, n),
            SelectionEdit::Seed(n, values) => {
                let mut text = text.to_string();
                for (key, value) in values {
                    if config_edit::read_entry(&text, n, &[key])?.is_none() {
                        text = config_edit::set_entry(&text, n, &[key], value)?;
                    }
                }
                Ok(text)
            }
        }
    }
}

/// What to change.
#[derive(Debug, Clone)]
pub struct Change {
    /// The operation, for the journal and `generation.json` (`enable weather`).
    pub operation: String,
    /// Selection edits per profile.
    pub edits: Vec<(String, SelectionEdit)>,
    /// The installed state to write (when it changes).
    pub installed: Option<Installed>,
    /// How dependency consent is answered.
    pub deps: DepsConsent,
    /// Capability flags and the plugins they (and `requires_env` prompts) apply to.
    pub grants: GrantFlags,
    /// `--yes`: accept what replaced plugins add to their surface.
    pub accept_surface: bool,
    /// `--dry-run` (return the consent plan, change nothing) or `--plan HASH`.
    pub plan: PlanMode,
    /// Items the caller already knows the plan has (`requires_auth` of an installed plugin).
    pub plan_notes: Vec<PlanItem>,
}

/// How a refusal says that nothing moved (an install refused at dependency consent replaces
/// it: the plugin stays installed, disabled).
pub const NOTHING_CHANGED: &str = "nothing was changed";

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Applied {
    /// The generation now current (`None` if there is none).
    pub generation: Option<u64>,
    /// The generation before.
    pub previous: Option<u64>,
    /// Whether a new generation was published.
    pub published: bool,
    /// Packages added/removed/changed in the environment (`name version` strings).
    pub changes: Vec<String>,
    /// Plugins in the new generation.
    pub plugins: Vec<String>,
    /// Plugins of the generation the agent will not load now, and why (absent from the
    /// agent until the reason goes away; `list` says the same).
    pub held_back: Vec<HeldBack>,
    /// With `--dry-run`: what the operation would ask, and how to approve it (printed
    /// beside the publication, not inside it).
    #[serde(skip)]
    pub plan: Option<Plan>,
}

/// An enabled plugin that Hermes will not load as things stand: a `requires_env` variable
/// unset (the agent's reader skips it), or the core's Hermes version cannot load it (kept out
/// of the generation, [`requirements::compatibility`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeldBack {
    /// The plugin key.
    pub plugin: String,
    /// Its `requires_env` variables set neither in the environment nor in `<home>/.env`
    /// (empty when held back for another reason).
    pub missing_env: Vec<String>,
    /// Why, for people.
    pub reason: String,
}

/// The plugins held back now: those `kept_out` of the generation, then those among `keys`
/// with a `requires_env` variable unset (the agent's reader skips them, GEN-7).
fn held_back(
    cx: &Context,
    installed: &Installed,
    keys: &[String],
    kept_out: Vec<HeldBack>,
) -> Vec<HeldBack> {
    let unset = keys
        .iter()
        .filter_map(|key| {
            let plugin = installed.plugins.get(key)?;
            let missing = match super::reads::missing_env(cx, &plugin.store_key) {
                Ok(missing) => missing,
                Err(e) => {
                    return Some(HeldBack {
                        plugin: key.clone(),
                        reason: format!(
                            "whether Hermes loads `{key}` cannot be told: {}",
                            crate::exit::layers(&e).join(": ")
                        ),
                        missing_env: Vec::new(),
                    });
                }
            };
            (!missing.is_empty()).then(|| {
                // Names that change what runs (LD_PRELOAD, PATH, …) are never to be put in
                // `.env`: Hermes refuses to write them there, and neither do we advise it.
                let (denied, settable): (Vec<&String>, Vec<&String>) = missing
                    .iter()
                    .partition(|n| crate::known::ENV_DENYLIST.contains(&n.as_str()));
                let mut reason = format!(
                    "`{key}` is held back: Hermes will not load it while a variable it requires is unset (missing: {})",
                    missing.join(", ")
                );
                if !settable.is_empty() {
                    reason.push_str(&format!(
                        "; set {} in the environment or in {}",
                        settable.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", "),
                        cx.layout.env_file(&cx.profile).display()
                    ));
                }
                if !denied.is_empty() {
                    reason.push_str(&format!(
                        "; {} changes what programs run and belongs in no .env file (Hermes refuses to write it there): a plugin that needs it is better not enabled",
                        denied.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                }
                HeldBack {
                    plugin: key.clone(),
                    reason,
                    missing_env: missing,
                }
            })
        });
    kept_out.into_iter().chain(unset).collect()
}

/// `--plan HASH`: the plan a dry run without approvals shows now must be the one approved.
fn check_plan(cx: &Context, change: &Change, expected: &str) -> Result<(), ManagerError> {
    let dry = Change {
        plan: PlanMode::Dry,
        deps: DepsConsent::Ask,
        accept_surface: false,
        grants: GrantFlags {
            targets: change.grants.targets.clone(),
            ..GrantFlags::default()
        },
        ..change.clone()
    };
    let shown = apply(cx, dry, &mut super::NoInput, &mut super::Silent)?
        .plan
        .map(|p| p.hash)
        .unwrap_or_default();
    if shown != expected {
        return Err(ManagerError::coded(
            Code::PlanChanged,
            format!(
                "the consent plan changed since it was shown ({expected}, now {shown}): {NOTHING_CHANGED}; show it again with --dry-run"
            ),
        ));
    }
    Ok(())
}

/// The generation's plugin records.
fn generation_plugins(
    installed: &Installed,
    keys: &std::collections::BTreeSet<String>,
    manifests: &mut consent::Manifests,
) -> Vec<GenPlugin> {
    keys.iter()
        .filter_map(|k| installed.plugins.get(k))
        .map(|p| {
            let requires_env = manifests
                .of(&p.key)
                .env
                .iter()
                .map(|(name, ..)| name.clone());
            GenPlugin::of(p, requires_env.collect())
        })
        .collect()
}

/// The requirements of external plugins (enabled, not managed, in a profile's own
/// `plugins/`); one that cannot be read is left out with a note.
fn external_inputs(
    selected: &select::Selected,
    feedback: &mut dyn Feedback,
) -> Vec<crate::resolve::inputs::PluginInput> {
    selected
        .external
        .iter()
        .filter_map(
            |(name, dir)| match crate::resolve::inputs::plugin_from_dir(dir) {
                Ok(input) => Some(input),
                Err(e) => {
                    feedback.note(&format!(
                        "`{name}` ({}) cannot be read, its requirements are left out: {e}",
                        dir.display()
                    ));
                    None
                }
            },
        )
        .collect()
}

/// What a plan's hash covers besides its items: the inputs digest and every resolved package
/// (a new release on the index changes the plan).
fn planned_environment(digest: &str, lock: &crate::resolve::lock::Lock) -> String {
    let packages: Vec<String> = lock
        .packages
        .iter()
        .map(|p| format!("{}=={}", p.name, p.version))
        .collect();
    format!("{digest} {}", packages.join(","))
}

/// `--ignore-requires-hermes` decisions, recorded with each plugin (the core version).
fn record_overrides(installed: &mut Installed, overridden: Vec<(String, String)>) {
    for (key, version) in overridden {
        if let Some(p) = installed.plugins.get_mut(&key) {
            p.requires_hermes_ignored_for = Some(version);
        }
    }
}

/// What a change with unchanged inputs returns: the user files changed, `current` did not.
fn unpublished(previous: Option<u64>, plugins: Vec<String>, held_back: Vec<HeldBack>) -> Applied {
    Applied {
        generation: previous,
        previous,
        published: false,
        changes: Vec::new(),
        plugins,
        held_back,
        plan: None,
    }
}

/// What a dry run returns: nothing published, the plan beside.
fn planned(
    previous: Option<u64>,
    changes: Vec<String>,
    plugins: Vec<String>,
    plan: Plan,
) -> Applied {
    Applied {
        generation: previous,
        previous,
        published: false,
        changes,
        plugins,
        held_back: Vec::new(),
        plan: Some(plan),
    }
}

/// Applies a change (see the module documentation). Holds no lock itself: the caller has
/// called [`super::begin_writing`].
pub fn apply(
    cx: &Context,
    mut change: Change,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<Applied, ManagerError> {
    if let PlanMode::Expect(expected) = &change.plan {
        check_plan(cx, &change, expected)?;
        change.plan = PlanMode::Off;
    }
    let planning = change.plan == PlanMode::Dry;
    if planning {
        // A plan lists everything to approve, whatever flags came with the dry run.
        change.grants.grant.clear();
        change.grants.revoke.clear();
    }
    let mut installed = match &change.installed {
        Some(i) => i.clone(),
        None => super::installed(cx)?,
    };
    let current = super::reads::current_doc(cx);
    let previous = crate::generation::current::current_number(&cx.layout);
    let store = Store::open(cx.layout.store())?;

    // 1. Selections.
    let mut selected = select::select(cx, &change, &installed, feedback)?;
    let mut decisions = consent::Decisions {
        plan: planning.then(|| change.plan_notes.clone()),
        audit: std::mem::take(&mut selected.revocations),
        ..consent::Decisions::default()
    };
    let snapshot = installed.clone();
    let mut manifests = consent::Manifests::new(&store, &snapshot);

    // 2. Consent.
    let diffs = consent::consent(
        cx,
        &change,
        &snapshot,
        &mut selected,
        current.as_ref(),
        &mut manifests,
        consent::Asker::new(prompter, feedback, &mut decisions),
    )?;

    // 3. Requirements.
    let overridden = requirements::check(
        cx,
        &snapshot,
        &selected,
        &mut manifests,
        feedback,
        &mut decisions.audit,
    )?;
    if !overridden.is_empty() {
        record_overrides(&mut installed, overridden);
        change.installed = Some(installed);
    }
    let kept_out =
        requirements::compatibility(cx, &snapshot, &mut selected, current.as_ref(), &store)?;

    let plugins = generation_plugins(&snapshot, &selected.keys, &mut manifests);
    drop(manifests);
    let external = external_inputs(&selected, feedback);
    let digest = digest::inputs_digest(cx, &plugins, &selected.selections, &external);
    let keys: Vec<String> = selected.keys.iter().cloned().collect();

    // 4. No-op (GEN-5): same inputs as the current generation, or nothing enabled and no
    //    generation yet.
    let unchanged = match &current {
        Some(doc) => doc.inputs_digest == digest,
        None => plugins.is_empty() && external.is_empty(),
    };
    if unchanged {
        if planning {
            let plan = Plan::new(
                &change.operation,
                &digest,
                decisions.plan.take().unwrap_or_default(),
            );
            return Ok(planned(previous, Vec::new(), keys, plan));
        }
        let files = publish::UserFiles::of(&selected.states, &change, &decisions);
        publish::switch(cx, &files, previous)?;
        let held = held_back(cx, &snapshot, &keys, kept_out);
        return Ok(unpublished(previous, keys, held));
    }

    // 5. Resolution.
    let resolved = resolve::resolve(cx, &plugins, &external, current.as_ref(), &store, feedback)?;

    // 6. Dependency consent.
    dependencies::consent(
        cx,
        &change,
        &plugins,
        &resolved.inputs,
        &resolved.lock,
        current.as_ref(),
        &diffs,
        prompter,
        &mut decisions,
    )?;
    if planning {
        let plan = Plan::new(
            &change.operation,
            &planned_environment(&digest, &resolved.lock),
            decisions.plan.take().unwrap_or_default(),
        );
        let changes = digest::lock_changes(current.as_ref(), &resolved.lock);
        return Ok(planned(previous, changes, keys, plan));
    }

    // 7. Publication.
    let files = publish::UserFiles::of(&selected.states, &change, &decisions);
    let (number, changes) = publish::publish(
        cx,
        &files,
        publish::Publication {
            digest,
            plugins,
            selections: selected.selections.clone(),
            resolved,
        },
        current.as_ref(),
        previous,
        feedback,
    )?;
    super::gc::collect_by_policy(cx);
    let held = held_back(cx, &snapshot, &keys, kept_out);
    Ok(Applied {
        generation: Some(number),
        previous,
        published: true,
        changes,
        plugins: keys,
        held_back: held,
        plan: None,
    })
}
