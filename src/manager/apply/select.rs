//! Phase 1, selections: every profile's `config.yaml` text with the change's selection edits
//! applied (a removed plugin's grants revoked with it), the new per-profile selections, and
//! the plugins the generation will hold.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{Change, SelectionEdit};
use crate::consent::audit::AuditEntry;
use crate::generation::doc::ProfileSelection;
use crate::manager::{Context, Feedback, ManagerError};
use crate::state::config_edit;
use crate::state::installed::Installed;
use crate::state::profiles;

/// One profile's `config.yaml`: as read, and as it will be written.
pub(super) struct ProfileState {
    /// The file.
    pub config: PathBuf,
    /// Its text when read (`None`: it did not exist).
    pub original: Option<String>,
    /// Its text with every decision so far applied.
    pub text: String,
    /// `plugins.enabled` after the edits.
    pub enabled: BTreeSet<String>,
    /// `plugins.disabled` after the edits.
    pub disabled: BTreeSet<String>,
    /// `memory.provider`, as read.
    pub memory_provider: Option<String>,
}

/// What phase 1 decided.
pub(super) struct Selected {
    /// Every profile's config, by profile name.
    pub states: BTreeMap<String, ProfileState>,
    /// The generation's selection per profile (grants are filled in by consent).
    pub selections: BTreeMap<String, ProfileSelection>,
    /// The installed plugins some profile enables: what the generation holds.
    pub keys: BTreeSet<String>,
    /// Grants revoked because their plugin was removed, to audit after the commit.
    pub revocations: Vec<AuditEntry>,
    /// External plugins (see [`ProfileSelection::external`]): name and directory, every
    /// profile's, each directory once.
    pub external: Vec<(String, PathBuf)>,
}

/// The directory of `name` in a profile's own `plugins/` (flat or `category/name`), when it
/// holds a manifest there — what Hermes itself would load.
fn user_plugin_dir(user_plugins: &Path, name: &str) -> Option<PathBuf> {
    let dir = crate::home::join_key(user_plugins, name).ok()?;
    (dir.join("plugin.yaml").is_file() || dir.join("plugin.yml").is_file()).then_some(dir)
}

/// Unmanaged plugins in a profile's own `plugins/` that Hermes loads without
/// `plugins.enabled`, and so stay loaded under a generation: every model provider in
/// `model-providers/<dir>/` (Hermes's provider loader imports each directory with an
/// `__init__.py`), and the directory `memory.provider` names. Disabled ones are left out.
fn unasked_providers(
    state: &ProfileState,
    installed: &Installed,
    user_plugins: &Path,
) -> Vec<(String, PathBuf)> {
    let unmanaged = |key: &str| installed.find(key).is_none() && !state.disabled.contains(key);
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(user_plugins.join("model-providers")) {
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| e.path().join("__init__.py").is_file())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        names.sort();
        for name in names {
            let key = format!("model-providers/{name}");
            if crate::home::check_key(&key).is_ok() && unmanaged(&key) {
                found.push((key, user_plugins.join("model-providers").join(&name)));
            }
        }
    }
    if let Some(name) = &state.memory_provider
        && crate::home::check_name(name).is_ok()
        && unmanaged(name)
        && let Ok(dir) = crate::home::join_key(user_plugins, name)
        && dir.join("__init__.py").is_file()
    {
        found.push((name.clone(), dir));
    }
    found
}

/// Reads every profile, applies the change's edits and works out the selections.
pub(super) fn select(
    cx: &Context,
    change: &Change,
    installed: &Installed,
    feedback: &mut dyn Feedback,
) -> Result<Selected, ManagerError> {
    let (read, warnings) =
        profiles::read_profiles(&cx.layout.home).map_err(ManagerError::environment)?;
    for w in warnings {
        feedback.note(&format!("skipping a profile: {w}"));
    }
    let mut states: BTreeMap<String, ProfileState> = BTreeMap::new();
    for p in read {
        let original = crate::manager::read_user_file(&p.config)?;
        states.insert(
            p.name.clone(),
            ProfileState {
                config: p.config.clone(),
                text: original.clone().unwrap_or_default(),
                original,
                enabled: p.enabled,
                disabled: p.disabled,
                memory_provider: p.memory_provider,
            },
        );
    }
    let mut revocations = Vec::new();
    for (profile, edit) in &change.edits {
        if !states.contains_key(profile) {
            let config = cx.config_path(profile);
            if profile != "default" && !config.parent().is_some_and(|d| d.is_dir()) {
                return Err(ManagerError::coded(
                    crate::exit::Code::NotFound,
                    format!(
                        "there is no profile `{profile}` ({} does not exist)",
                        config
                            .parent()
                            .map(|d| d.display().to_string())
                            .unwrap_or_default()
                    ),
                ));
            }
            states.insert(
                profile.clone(),
                ProfileState {
                    config,
                    original: None,
                    text: String::new(),
                    enabled: BTreeSet::new(),
                    disabled: BTreeSet::new(),
                    memory_provider: None,
                },
            );
        }
        let state = states.get_mut(profile).expect("inserted above");
        let aliases = match edit {
            SelectionEdit::Enable(_) | SelectionEdit::Seed(..) => Vec::new(),
            SelectionEdit::Disable(name) | SelectionEdit::Forget(name) => {
                aliases_of(&state.enabled, installed, name)
            }
        };
        let edited = edit.edit_text(&state.text).and_then(|text| match edit {
            SelectionEdit::Enable(name) => {
                state.enabled.insert(name.clone());
                state.disabled.remove(name);
                Ok(text)
            }
            SelectionEdit::Seed(..) => Ok(text),
            SelectionEdit::Disable(name) => {
                state.enabled.remove(name);
                state.disabled.insert(name.clone());
                forget_all(text, &aliases, &mut state.enabled)
            }
            SelectionEdit::Forget(name) => {
                state.enabled.remove(name);
                state.disabled.remove(name);
                forget_all(text, &aliases, &mut state.enabled).and_then(|text| {
                    // Removed: nothing it was granted survives for whatever comes next
                    // under this name.
                    let (text, revoked) = crate::consent::capabilities::revoke_all(&text, name)?;
                    if !revoked.is_empty() {
                        revocations.push(AuditEntry::now(
                            profile.clone(),
                            name.clone(),
                            "revoke",
                            revoked.into_iter().collect(),
                            "remove",
                        ));
                    }
                    Ok(text)
                })
            }
        });
        state.text = edited.map_err(|source| crate::manager::Refusal::Config {
            path: state.config.clone(),
            source,
        })?;
    }

    let mut selections: BTreeMap<String, ProfileSelection> = BTreeMap::new();
    let mut keys: BTreeSet<String> = BTreeSet::new();
    let mut external: Vec<(String, PathBuf)> = Vec::new();
    for (name, state) in &states {
        let user_plugins = cx.layout.user_plugins(name);
        let mut outside: Vec<String> = Vec::new();
        let found = state
            .enabled
            .iter()
            .filter(|k| !state.disabled.contains(*k) && installed.find(k).is_none())
            .filter_map(|plugin| Some((plugin.clone(), user_plugin_dir(&user_plugins, plugin)?)))
            .chain(unasked_providers(state, installed, &user_plugins));
        for (plugin, dir) in found {
            if outside.contains(&plugin) {
                continue;
            }
            outside.push(plugin.clone());
            if !external.iter().any(|(_, d)| d == &dir) {
                external.push((plugin, dir));
            }
        }
        let mut enabled: Vec<String> = state
            .enabled
            .iter()
            .filter(|k| !state.disabled.contains(*k))
            .filter_map(|k| installed.find(k).map(|p| p.key.clone()))
            .collect();
        enabled.sort();
        enabled.dedup();
        keys.extend(enabled.iter().cloned());
        selections.insert(
            name.clone(),
            ProfileSelection {
                enabled,
                grants: BTreeMap::new(),
                external: outside,
            },
        );
    }
    for (plugin, dir) in &external {
        feedback.note(&format!(
            "`{plugin}` is enabled but not managed by hermes-plugins: Hermes loads {} as it is (its requirements are resolved into the generation); `hermes-plugins install {}` would pin, validate and manage it",
            dir.display(),
            dir.display()
        ));
    }
    Ok(Selected {
        states,
        selections,
        keys,
        revocations,
        external,
    })
}

/// The other entries of a profile's enabled list that name the plugin keyed `key` — its
/// manifest name, when `config.yaml` lists it by name — so that disabling or removing the
/// plugin leaves none of them selecting it.
fn aliases_of(enabled: &BTreeSet<String>, installed: &Installed, key: &str) -> Vec<String> {
    enabled
        .iter()
        .filter(|entry| entry.as_str() != key)
        .filter(|entry| installed.find(entry).is_some_and(|p| p.key == key))
        .cloned()
        .collect()
}

/// Removes each of `aliases` from both lists of `text` and from `enabled`.
fn forget_all(
    mut text: String,
    aliases: &[String],
    enabled: &mut BTreeSet<String>,
) -> Result<String, config_edit::EditError> {
    for alias in aliases {
        text = config_edit::forget(&text, alias)?;
        enabled.remove(alias);
    }
    Ok(text)
}
