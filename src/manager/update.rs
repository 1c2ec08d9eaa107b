//! `update`: every plugin named (all by default) fetched again, and what changed recorded and
//! published in one generation, asking only about the added surface (CAP-7).

use super::admission::{approve_core_patch, core_patch_item};
use super::apply::GrantFlags;
use super::apply::{self, Applied, Change};
use super::plan::PlanMode;
use super::prepare::{Accept, AcceptedNow, DryStore, Prepared, audit_acceptances, prepare, store};
use super::{Context, DepsConsent, Feedback, ManagerError, Prompter};
use crate::consent::surface::{Surface, SurfaceDiff};
use crate::exit::Code;
use crate::state::installed::InstalledPlugin;
use crate::store::Store;

/// What `update` found for one plugin.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpdateItem {
    /// The plugin key.
    pub key: String,
    /// What happened to it.
    pub status: UpdateStatus,
    /// Commit before (the version, for a distribution from the package index).
    pub from: Option<String>,
    /// Commit after (likewise).
    pub to: Option<String>,
    /// What the new version adds and removes (CAP-7), when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface: Option<crate::consent::surface::SurfaceDiff>,
}

/// What `update` did with one plugin (the human output's column, JSON `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateStatus {
    /// A new tree was recorded (and published with the others).
    Updated,
    /// The source gave the tree that is installed.
    Unchanged,
    /// Installed with `--ref`: skipped.
    Pinned,
    /// `--dry-run`: it would be updated.
    WouldUpdate,
}

impl UpdateStatus {
    /// The word the JSON and the human output use.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateStatus::Updated => "updated",
            UpdateStatus::Unchanged => "unchanged",
            UpdateStatus::Pinned => "pinned",
            UpdateStatus::WouldUpdate => "would-update",
        }
    }

    /// Whether a new tree was (or, dry, would be) taken.
    pub fn changes(self) -> bool {
        matches!(self, UpdateStatus::Updated | UpdateStatus::WouldUpdate)
    }
}

impl std::fmt::Display for UpdateStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// What `update` should do.
#[derive(Debug, Clone, Default)]
pub struct UpdateRequest {
    /// Plugins to update (all when empty).
    pub names: Vec<String>,
    /// Show what would change and the consent plan; change nothing.
    pub dry_run: bool,
    /// `--plan HASH`: apply only if the consent plan is still this one.
    pub plan: PlanMode,
    /// `--yes`: accept surface additions (and the dependency changes).
    pub yes: bool,
    /// `--yes-deps`: accept the dependency changes only (as `install` and `enable` take it).
    pub yes_deps: bool,
    /// Capability flags.
    pub grants: GrantFlags,
    /// `--allow-removed`.
    pub allow_removed: bool,
    /// `--allow-core-patch`: approve new patches of Hermes internals.
    pub allow_core_patch: bool,
    /// `--accept-finding ID`: security findings a new version has, accepted.
    pub accept_findings: Vec<String>,
}

/// How many times `update` fetches when other writers keep changing what it fetched.
const UPDATE_ATTEMPTS: usize = 3;

/// Plugins fetched for `update`, each with its record as it was before the fetch.
type UpdateFetches = Vec<(String, InstalledPlugin, Prepared)>;

/// How many plugins `update` fetches at once (the network, not the CPU, is the wait).
const FETCHES: usize = 4;

/// `update`'s fetch phase, without the writer lock: the items for pinned plugins (skipped)
/// and, for every other plugin named (all when `names` is empty), its record and fetched tree.
fn fetch_updates(
    cx: &Context,
    names: &[String],
    allow_removed: bool,
    accept: &[String],
    feedback: &mut dyn Feedback,
) -> Result<(Vec<UpdateItem>, UpdateFetches), ManagerError> {
    let snapshot = super::installed(cx)?;
    let keys: Vec<String> = if names.is_empty() {
        snapshot.plugins.keys().cloned().collect()
    } else {
        names
            .iter()
            .map(|n| {
                snapshot.find(n).map(|p| p.key.clone()).ok_or_else(|| {
                    ManagerError::coded(Code::NotFound, format!("`{n}` is not installed"))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let mut items = Vec::new();
    let mut todo = Vec::new();
    for key in keys {
        let Some(old) = snapshot.plugins.get(&key).cloned() else {
            continue;
        };
        if let Some(pinned) = &old.source.pinned_ref {
            feedback.note(&format!(
                "`{key}` is pinned to `{pinned}`; re-pin it with `hermes-plugins install {} --ref NEW`",
                old.source.spec.display()
            ));
            items.push(UpdateItem {
                key,
                status: UpdateStatus::Pinned,
                from: old.source.revision(),
                to: old.source.revision(),
                surface: None,
            });
            continue;
        }
        super::check_removed_source(cx, &old.source.spec, allow_removed, feedback)?;
        todo.push((key, old));
    }
    // One source is fetched with live progress. Several are fetched and validated
    // [`FETCHES`] at a time; each one's notes are kept and told in key order afterwards, and
    // the first failure in key order is the answer.
    // An id given with `update` concerns whichever plugin has it.
    let mode = Accept::Any(accept);
    let mut fetched = Vec::new();
    if let [(key, old)] = &todo[..] {
        let prepared = prepare(cx, &old.source.spec, None, false, mode, feedback)?;
        fetched.push((key.clone(), old.clone(), prepared));
    } else if !todo.is_empty() {
        feedback.phase(&format!("fetching {} plugins", todo.len()));
        let prepared = crate::parallel::map(&todo, FETCHES, None, |(_, old)| {
            let mut notes = super::Notes::default();
            let prepared = prepare(cx, &old.source.spec, None, false, mode, &mut notes);
            (prepared, notes)
        });
        feedback.done();
        for ((key, old), (prepared, notes)) in todo.into_iter().zip(prepared) {
            notes.replay(feedback);
            fetched.push((key, old, prepared?));
        }
    }
    if let Some(unknown) = accept
        .iter()
        .find(|id| !fetched.iter().any(|(_, _, p)| p.accepted_now.has(id)))
    {
        return Err(ManagerError::Usage(format!(
            "--accept-finding {}: no plugin being updated has that dangerous finding",
            crate::text::escape(unknown)
        )));
    }
    Ok((items, fetched))
}

/// `update [NAME]...`: re-fetch each plugin from its recorded source (the tracked branch, the
/// catalog's current pin, or the local directory again), and publish everything that changed
/// in one switch.
pub fn update(
    cx: &Context,
    request: &UpdateRequest,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<(Vec<UpdateItem>, Option<Applied>), ManagerError> {
    let UpdateRequest {
        names,
        dry_run,
        plan: plan_mode,
        yes,
        yes_deps,
        grants,
        allow_removed,
        allow_core_patch,
        accept_findings,
    } = request;
    let (dry_run, yes, allow_removed) = (*dry_run, *yes, *allow_removed);
    // Fetch first, without the writer lock; then take it and check nothing moved meanwhile.
    // When another writer changed a plugin while it was fetched, fetch again (a few times:
    // under a steady stream of writers the refusal says to retry later).
    let mut attempt = 1;
    let (mut items, fetched, _lock, mut installed) = loop {
        let (items, fetched) = fetch_updates(cx, names, allow_removed, accept_findings, feedback)?;
        let lock = super::begin_writing(cx, "update", feedback)?;
        let installed = super::installed(cx)?;
        let Some(moved) = fetched
            .iter()
            .find(|(key, old, _)| installed.plugins.get(key) != Some(old))
            .map(|(key, ..)| key.clone())
        else {
            break (items, fetched, lock, installed);
        };
        if attempt == UPDATE_ATTEMPTS {
            return Err(super::Refusal::KeptChanging {
                key: moved,
                attempts: UPDATE_ATTEMPTS,
            }
            .into());
        }
        feedback.note(&format!(
            "`{moved}` changed while it was being fetched (another hermes-plugins ran); fetching again"
        ));
        attempt += 1;
    };
    let _dry = DryStore::begin(cx, dry_run || *plan_mode == PlanMode::Dry)?;
    // Patches of Hermes internals a new version adds are asked before anything is stored.
    let mut plan_notes = Vec::new();
    for (key, old, prepared) in &fetched {
        if let Some(item) = core_patch_item(key, &prepared.core_patches, &old.core_patches) {
            if !dry_run && *plan_mode != PlanMode::Dry {
                approve_core_patch(&item, *allow_core_patch, prompter)?;
            }
            plan_notes.push(item);
        }
    }
    let acceptances: Vec<(String, AcceptedNow)> = fetched
        .iter()
        .map(|(key, _, p)| (key.clone(), p.accepted_now.clone()))
        .collect();
    let mut changed = false;
    let mut recorded: Vec<String> = Vec::new();
    for (key, old, prepared) in fetched {
        let (mut new, _warnings) = store(cx, prepared)?;
        super::check_removed(
            cx,
            &new.name,
            new.source.url.as_deref(),
            allow_removed,
            feedback,
        )?;
        if new.key != key {
            return Err(super::Refusal::Renamed {
                key: key.clone(),
                new: new.key.clone(),
            }
            .into());
        }
        let status = if new.tree == old.tree {
            UpdateStatus::Unchanged
        } else if dry_run {
            UpdateStatus::WouldUpdate
        } else {
            UpdateStatus::Updated
        };
        let surface = (new.tree != old.tree).then(|| {
            let store = Store::open(cx.layout.store()).ok();
            let of = |k: &str| {
                store
                    .as_ref()
                    .and_then(|s| Surface::of(&s.path_of(k)).ok())
                    .unwrap_or_default()
            };
            SurfaceDiff::between(&of(&old.store_key), &of(&new.store_key))
        });
        items.push(UpdateItem {
            key: key.clone(),
            status,
            from: old.source.revision(),
            to: new.source.revision(),
            surface,
        });
        let moved = new.source.revision() != old.source.revision();
        if new.tree != old.tree || (moved && !dry_run) {
            if new.tree != old.tree {
                changed = true;
            } else {
                // The same tree at a newer commit (the commit touched nothing of the
                // plugin's): nothing to publish, but the source is recorded where it is now,
                // so `outdated` does not list it as behind for good.
                recorded.push(key.clone());
            }
            if let (Some(t), None) = (&old.source.tracked_ref, &new.source.tracked_ref) {
                new.source.tracked_ref = Some(t.clone());
            }
            installed.plugins.insert(key, new);
        }
    }
    if !changed && recorded.is_empty() {
        return Ok((items, None));
    }
    let plan = if dry_run {
        PlanMode::Dry
    } else {
        plan_mode.clone()
    };
    let applied = apply::apply(
        cx,
        Change {
            operation: format!(
                "update {}",
                items
                    .iter()
                    .filter(|i| i.status.changes() || recorded.contains(&i.key))
                    .map(|i| i.key.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            edits: Vec::new(),
            installed: Some(installed),
            deps: if yes || *yes_deps {
                DepsConsent::Yes
            } else {
                DepsConsent::Ask
            },
            grants: grants.clone(),
            accept_surface: yes,
            plan: plan.clone(),
            plan_notes,
        },
        prompter,
        feedback,
    )?;
    if applied.plan.is_none() {
        for (key, accepted) in &acceptances {
            audit_acceptances(cx, key, accepted);
        }
    }
    if !changed {
        // Only records moved: no generation was published.
        return Ok((items, None));
    }
    Ok((items, Some(applied)))
}
