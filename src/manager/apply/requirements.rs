//! Phase 3, requirements between a plugin and its surroundings, checked before anything is
//! resolved: `requires_hermes` against the core's version (refused naming both, unless
//! `--ignore-requires-hermes`, which is recorded per plugin and core version), and
//! `requires_plugins` against the profile's selection (the other plugin enabled beside it,
//! its version inside `version_range`). And [`compatibility`]: every plugin against the
//! core's version with the `loads_on` recorded at install (its ctx calls against that
//! release's `PluginContext`).

use std::str::FromStr;

use uv_pep440::{Version, VersionSpecifiers};

use super::HeldBack;
use super::consent::Manifests;
use super::select::Selected;
use crate::consent::audit::AuditEntry;
use crate::exit::Code;
use crate::generation::doc::GenerationDoc;
use crate::manager::{Context, Feedback, ManagerError};
use crate::state::installed::Installed;

/// Checks every plugin the generation holds; returns the keys whose `requires_hermes` was
/// overridden now (the caller records the core version in `installed.json`).
pub(super) fn check(
    cx: &Context,
    installed: &Installed,
    selected: &Selected,
    manifests: &mut Manifests,
    feedback: &mut dyn Feedback,
    audit_entries: &mut Vec<AuditEntry>,
) -> Result<Vec<(String, String)>, ManagerError> {
    let mut overridden = Vec::new();
    let core_version = cx
        .core
        .as_ref()
        .and_then(|c| c.project.version.clone())
        .filter(|_| cx.core_known);
    for key in &selected.keys {
        let Some(spec) = manifests.of(key).requires_hermes.clone() else {
            continue;
        };
        let Some(version) = &core_version else {
            continue;
        };
        let parsed = Version::from_str(version).map_err(|e| {
            ManagerError::caused(
                Code::Environment,
                format!("the core's version `{version}` is not a PEP 440 version"),
                &e,
            )
        })?;
        // A spec that cannot be read is answered like one that excludes the core: refused,
        // unless --ignore-requires-hermes (validate reports it with the same reader).
        let unreadable = match crate::package::requires_hermes::specifiers(&spec) {
            Ok(specifiers) if specifiers.contains(&parsed) => continue,
            Ok(_) => None,
            Err(e) => Some(e),
        };
        let recorded = installed
            .plugins
            .get(key)
            .and_then(|p| p.requires_hermes_ignored_for.as_deref());
        if recorded == Some(version.as_str()) {
            continue;
        }
        if cx.ignore_requires_hermes {
            feedback.note(&format!(
                "`{key}` requires Hermes {spec}, core is {version}: published anyway (--ignore-requires-hermes, recorded)"
            ));
            audit_entries.push(AuditEntry::now(
                cx.profile.clone(),
                key.clone(),
                "ignore-requires-hermes",
                vec![format!("{spec} (core {version})")],
                "--ignore-requires-hermes",
            ));
            overridden.push((key.clone(), version.clone()));
            continue;
        }
        if let Some(e) = unreadable {
            return Err(ManagerError::coded(
                Code::Invalid,
                format!(
                    "`{key}`: {e} (`{spec}`): nothing was changed (pass --ignore-requires-hermes to publish it anyway)"
                ),
            ));
        }
        return Err(ManagerError::coded(
            Code::RequiresHermes,
            format!(
                "`{key}` requires Hermes {spec}, but the core is {version}: nothing was changed (pass --ignore-requires-hermes to publish it anyway)"
            ),
        ));
    }
    for (profile, selection) in &selected.selections {
        let configured = selected.states.get(profile).map(|s| &s.enabled);
        for key in &selection.enabled {
            for (id, range) in manifests.of(key).requires_plugins.clone() {
                let managed = installed.find(&id);
                let beside = managed.is_some_and(|p| selection.enabled.contains(&p.key));
                let wanted = range
                    .as_deref()
                    .map(|r| format!("`{id}` {r}"))
                    .unwrap_or_else(|| format!("`{id}`"));
                let Some(other) = managed.filter(|_| beside) else {
                    // Enabled in config.yaml but not managed here (bundled, or in
                    // <home>/plugins): present, its version unknown.
                    if managed.is_none() && configured.is_some_and(|c| c.contains(&id)) {
                        if range.is_some() {
                            feedback.note(&format!(
                                "`{key}` requires {wanted}: `{id}` is not managed by hermes-plugins, its version is not checked"
                            ));
                        }
                        continue;
                    }
                    return Err(ManagerError::coded(
                        Code::RequiresPlugins,
                        format!(
                            "`{key}` requires the plugin {wanted}, which is not {} in profile `{profile}`: nothing was changed (install and enable it too, or disable `{key}`)",
                            if managed.is_some() {
                                "enabled"
                            } else {
                                "installed"
                            }
                        ),
                    ));
                };
                let Some(range) = range else {
                    continue;
                };
                let specifiers = VersionSpecifiers::from_str(&range).map_err(|e| {
                    ManagerError::coded(
                        Code::Invalid,
                        format!("`{key}`: version_range `{range}` of `{id}` cannot be read: {e}"),
                    )
                })?;
                let found = other
                    .version
                    .as_deref()
                    .and_then(|v| Version::from_str(v).ok());
                if found.as_ref().is_some_and(|v| specifiers.contains(v)) {
                    continue;
                }
                return Err(ManagerError::coded(
                    Code::RequiresPlugins,
                    format!(
                        "`{key}` requires the plugin {wanted}, but profile `{profile}` has `{}` {}: nothing was changed",
                        other.key,
                        other.version.as_deref().unwrap_or("without a version")
                    ),
                ));
            }
        }
    }
    Ok(overridden)
}

/// The core's Hermes version when it is a release whose `PluginContext` is known (so a
/// plugin can be judged against it).
fn judged_version(cx: &Context) -> Option<String> {
    let version = cx
        .core
        .as_ref()
        .filter(|_| cx.core_known)
        .and_then(|c| c.project.version.clone())?;
    crate::known::api::versions()
        .iter()
        .any(|v| v.version == version)
        .then_some(version)
}

/// VAL-21 at publication: each plugin of the generation whose recorded `loads_on` excludes
/// the core's version would make `register(ctx)` raise there. One newly added (not in the
/// current generation) is refused, with the calls that do not fit; one already published
/// (the core changed under it) is kept out of the new generation — its selection stays in
/// `config.yaml` — and returned, so the operation says so. Plugins without a record (older
/// installs) and cores whose release is unknown are not judged.
pub(super) fn compatibility(
    cx: &Context,
    installed: &Installed,
    selected: &mut Selected,
    current: Option<&GenerationDoc>,
    store: &crate::store::Store,
) -> Result<Vec<HeldBack>, ManagerError> {
    let Some(version) = judged_version(cx) else {
        return Ok(Vec::new());
    };
    let mut kept_out = Vec::new();
    for key in selected.keys.clone() {
        let Some(plugin) = installed.plugins.get(&key) else {
            continue;
        };
        if plugin.loads_on.is_empty() || plugin.loads_on.contains(&version) {
            continue;
        }
        let calls = unfitting_calls(&store.path_of(&plugin.store_key), &version);
        let fits = format!("; it loads on Hermes {}", plugin.loads_on.join(", "));
        if current.is_some_and(|doc| doc.plugin(&key).is_some()) {
            selected.keys.remove(&key);
            for selection in selected.selections.values_mut() {
                selection.enabled.retain(|k| k != &key);
            }
            // Said as a warning with the operation's result (`Applied::held_back`).
            kept_out.push(HeldBack {
                reason: format!(
                    "`{key}` does not load on Hermes {version} (the core): {calls}{fits}; it is kept out of this generation (update it, or disable it)"
                ),
                plugin: key,
                missing_env: Vec::new(),
            });
            continue;
        }
        return Err(ManagerError::coded(
            Code::Invalid,
            format!(
                "Hermes {version} (the core) would not load `{key}`: {calls}{fits}; nothing was changed"
            ),
        ));
    }
    Ok(kept_out)
}

/// Why the package in `dir` does not load on `version`, as validate judges that release (its
/// ctx calls, what that loader reads, `requires_hermes` where enforced), for people —
/// re-checked from the stored tree: only on the way to a refusal.
fn unfitting_calls(dir: &std::path::Path, version: &str) -> String {
    let fallback = || format!("validate judges it not to load on Hermes {version}");
    let Ok(loaded) = crate::package::load_dir(dir, crate::package::Mode::Validate) else {
        return fallback();
    };
    let Ok(outcome) = crate::check::run(&loaded, &crate::check::Context::default()) else {
        return fallback();
    };
    let lines: Vec<String> = outcome
        .compatibility
        .why_not
        .get(version)
        .into_iter()
        .flatten()
        .filter(|r| !r.is_conditional())
        .map(|r| r.message.clone())
        .collect();
    if lines.is_empty() {
        fallback()
    } else {
        lines.join("; ")
    }
}
