//! Phase 2, consent (CAP-2…CAP-10): surface additions of replaced plugins, capability grants
//! per profile, `requires_env` values — decided now (or, when planning, listed), written
//! with the generation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::Change;
use super::select::Selected;
use crate::consent::surface::SurfaceDiff;
use crate::generation::doc::GenerationDoc;
use crate::manager::consent_step::{self, Decisions, Declared};
use crate::manager::{Context, Feedback, ManagerError, Prompter};
use crate::state::installed::Installed;
use crate::store::Store;

/// Each plugin's declared facts, read from its store tree once.
pub(super) struct Manifests<'a> {
    store: &'a Store,
    installed: &'a Installed,
    read: BTreeMap<String, Declared>,
}

impl<'a> Manifests<'a> {
    /// Reads lazily from `store` the plugins `installed` records.
    pub fn new(store: &'a Store, installed: &'a Installed) -> Manifests<'a> {
        Manifests {
            store,
            installed,
            read: BTreeMap::new(),
        }
    }

    /// What `key` declares (nothing, for a key that is not installed).
    pub fn of(&mut self, key: &str) -> &Declared {
        let (store, installed) = (self.store, self.installed);
        self.read.entry(key.to_string()).or_insert_with(|| {
            installed
                .plugins
                .get(key)
                .map(|p| consent_step::declared(&store.path_of(&p.store_key)))
                .unwrap_or_default()
        })
    }
}

/// Asks (or plans) everything the change needs consent for; edits the profiles' texts and
/// fills in the selections' grants. Returns the surface diffs of replaced plugins.
#[allow(clippy::too_many_arguments)]
pub(super) fn consent(
    cx: &Context,
    change: &Change,
    installed: &Installed,
    selected: &mut Selected,
    current: Option<&GenerationDoc>,
    manifests: &mut Manifests,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
    decisions: &mut Decisions,
) -> Result<BTreeMap<String, SurfaceDiff>, ManagerError> {
    change.grants.check()?;
    let store = manifests.store;
    let replaced: Vec<(String, PathBuf, PathBuf)> = selected
        .keys
        .iter()
        .filter_map(|k| {
            let old = current?.plugin(k)?;
            let new = installed.plugins.get(k)?;
            (old.tree != new.tree).then(|| {
                (
                    k.clone(),
                    store.path_of(&old.store_key),
                    store.path_of(&new.store_key),
                )
            })
        })
        .collect();
    let diffs = consent_step::surface(
        &replaced,
        change.accept_surface,
        prompter,
        feedback,
        decisions,
    )?;
    let cap_changes = |key: &str, added: bool| -> Option<BTreeSet<String>> {
        diffs.get(key).map(|d| {
            let list = if added { &d.added } else { &d.removed };
            list.iter()
                .filter(|c| c.kind == "capability")
                .map(|c| c.item.clone())
                .collect()
        })
    };
    for (profile, state) in selected.states.iter_mut() {
        let Some(selection) = selected.selections.get_mut(profile) else {
            continue;
        };
        let mut consider: BTreeSet<String> = selection.enabled.iter().cloned().collect();
        if profile == &cx.profile {
            consider.extend(
                change
                    .grants
                    .targets
                    .iter()
                    .filter_map(|t| installed.find(t).map(|p| p.key.clone())),
            );
        }
        for key in consider {
            let Some(record) = installed.plugins.get(&key) else {
                continue;
            };
            let was_enabled = current.is_some_and(|d| {
                d.profiles
                    .get(profile)
                    .is_some_and(|s| s.enabled.contains(&key))
            });
            // A target may be named by key or by manifest name, as on the command line.
            let targeted = profile == &cx.profile
                && change
                    .grants
                    .targets
                    .iter()
                    .any(|t| installed.find(t).is_some_and(|p| p.key == key));
            let updated = diffs.contains_key(&key);
            let declared = manifests.of(&key).clone();
            let origin = consent_step::grant_origin(&record.source);
            let recorded =
                crate::consent::capabilities::read(&state.text, &key).unwrap_or_default();
            let granted =
                if was_enabled && !updated && !targeted && !recorded.for_another_source(&origin) {
                    recorded.granted
                } else {
                    let (text, granted) = consent_step::capabilities_for(
                        profile,
                        &key,
                        &origin,
                        &state.text,
                        &declared.capabilities,
                        cap_changes(&key, true).as_ref(),
                        &no_longer_declared(
                            cx,
                            store,
                            profile,
                            &key,
                            &declared.capabilities,
                            cap_changes(&key, false),
                            !was_enabled && !recorded.granted.is_empty(),
                        ),
                        targeted.then_some(&change.grants),
                        prompter,
                        feedback,
                        decisions,
                    )?;
                    state.text = text;
                    granted
                };
            // Asked whenever a plugin comes into the profile or changes — by `enable`, by a
            // `sync` of a hand-edited selection, by `update` — not only when named.
            if selection.enabled.contains(&key) && (!was_enabled || updated) {
                consent_step::environment(
                    cx, profile, &key, &declared, prompter, feedback, decisions,
                )?;
            }
            if selection.enabled.contains(&key) && !granted.is_empty() {
                selection
                    .grants
                    .insert(key.clone(), granted.into_iter().collect());
            }
        }
    }
    Ok(diffs)
}

/// CAP-3's "no longer declared": the capabilities an update of the plugin now stops
/// declaring (`removed`, from its surface diff) — and, when it comes back into `profile`
/// after a stretch disabled (`returning`), those it declared when the profile last had it
/// enabled and does not declare now: an update while it was disabled has no surface diff,
/// and its grants must not outlive the declaration. Read from the newest generation that
/// selects it there (its store tree lives as long as that generation).
fn no_longer_declared(
    cx: &Context,
    store: &crate::store::Store,
    profile: &str,
    key: &str,
    declared: &BTreeSet<String>,
    removed: Option<BTreeSet<String>>,
    returning: bool,
) -> BTreeSet<String> {
    let mut out = removed.unwrap_or_default();
    if !returning {
        return out;
    }
    let layout = &cx.layout;
    let then = crate::generation::current::numbers(layout)
        .into_iter()
        .rev()
        .filter_map(|n| GenerationDoc::read(&layout.generation(n)).ok())
        .find(|doc| {
            doc.profiles
                .get(profile)
                .is_some_and(|s| s.enabled.iter().any(|k| k == key))
        });
    if let Some(plugin) = then.as_ref().and_then(|doc| doc.plugin(key)) {
        let before = consent_step::declared(&store.path_of(&plugin.store_key)).capabilities;
        out.extend(before.difference(declared).cloned());
    }
    out
}
