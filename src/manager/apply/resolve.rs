//! Phase 5, resolution: core + every enabled plugin, preferring the current lock — or
//! reusing it unchanged when nothing that decides it changed (then nothing touches the
//! network).

use super::digest::resolution_digest;
use crate::exit::Code;
use crate::generation::doc::{GenPlugin, GenerationDoc};
use crate::manager::LockMode;
use crate::manager::resolution;
use crate::manager::{Context, Feedback, ManagerError};
use crate::resolve::inputs::PluginInput;
use crate::resolve::lock::{Lock, LockDiff, LockInput};
use crate::resolve::{self, Request};
use crate::store::Store;

/// What phase 5 produced.
pub(super) struct Resolved {
    /// The lock the generation installs.
    pub lock: Lock,
    /// Its resolution digest (recorded in `generation.json`): `None` only under `--frozen`
    /// when the current generation records none — never an empty one.
    pub digest: Option<String>,
    /// Each plugin's requirements, as resolved.
    pub inputs: Vec<PluginInput>,
    /// The earlier generation (not the current one) whose lock was reused because it was
    /// resolved for exactly these inputs — `enable` after `disable` — whose environment the
    /// build then reuses too.
    pub earlier: Option<GenerationDoc>,
}

/// Resolves the generation's environment (managed plugins from the store, external ones
/// from their directories); refuses (`no-core`) when nobody chose a core.
pub(super) fn resolve(
    cx: &Context,
    plugins: &[GenPlugin],
    external: &[PluginInput],
    current: Option<&GenerationDoc>,
    store: &Store,
    feedback: &mut dyn Feedback,
) -> Result<Resolved, ManagerError> {
    if !cx.core_known {
        return Err(ManagerError::coded(
            Code::NoCore,
            "no Hermes core is known to resolve against: pass --core (a checkout with pyproject.toml and uv.lock, or installed:PYTHON for an installed Hermes; it is recorded) or --no-core to resolve without core pins and quarantine; nothing was changed",
        ));
    }
    let mut plugin_inputs = resolution::store_inputs(store, plugins)?;
    plugin_inputs.extend(external.iter().cloned());
    let started = std::time::Instant::now();
    let mut request =
        resolution::request(cx, plugin_inputs.clone(), current.map(|d| d.lock.clone()));
    request
        .index
        .find_links
        .extend(resolution::wheel_links(store, plugins));
    let digest = resolution_digest(cx, &request);
    if cx.lock_mode == LockMode::Frozen {
        return frozen(current, &request, plugin_inputs);
    }
    // Plugins that are wheels (from the package index or a file) install the very file
    // validated: a lock that would install another is not reused, and a fresh one must agree.
    let wheels: Vec<(&str, &crate::source::PackagePin)> = plugins
        .iter()
        .filter_map(|p| p.source.package.as_ref().map(|pin| (p.key.as_str(), pin)))
        .collect();
    let same = |d: &GenerationDoc| {
        d.resolution_digest.as_deref() == Some(digest.as_str())
            && crate::manager::pypi::check_locked_wheels(&d.lock, &wheels).is_ok()
    };
    // The current generation's lock first; else the newest earlier generation resolved for
    // the same inputs (a plugin enabled again after a disable).
    let earlier = match current {
        Some(d) if same(d) => None,
        _ => earlier_resolved_alike(cx, current.map(|d| d.number), &same),
    };
    let reusable = current
        .filter(|d| same(d))
        .or(earlier.as_ref())
        .map(|d| d.lock.clone());
    let lock = match reusable {
        // Same requirements, core, interpreter and indexes: the current lock's packages stand;
        // its record of the inputs is brought up to date.
        Some(mut lock) => {
            (lock.inputs, lock.excluded) = request.lock_inputs();
            lock
        }
        None => {
            feedback.phase("resolving dependencies");
            let outcome = resolve::run_remembered(&request, &cx.resolutions);
            feedback.done();
            outcome?.lock
        }
    };
    crate::manager::pypi::check_locked_wheels(&lock, &wheels)?;
    if cx.lock_mode == LockMode::Locked {
        let diff = match current {
            Some(d) => LockDiff::between(&d.lock, &lock),
            None => LockDiff {
                added: lock
                    .packages
                    .iter()
                    .map(|p| (p.name.clone(), p.version.clone()))
                    .collect(),
                ..LockDiff::default()
            },
        };
        if !diff.is_empty() {
            return Err(ManagerError::coded(
                Code::LockChanged,
                format!(
                    "--locked: the lock would change ({}); nothing was changed — run without --locked to accept it",
                    describe(&diff)
                ),
            ));
        }
    }
    tracing::debug!(
        "resolved {} packages in {:?}",
        lock.packages.len(),
        started.elapsed()
    );
    Ok(Resolved {
        lock,
        digest: Some(digest),
        inputs: plugin_inputs,
        earlier,
    })
}

/// The newest generation other than `current` that `same` accepts (its resolution digest is
/// the new one), read newest first.
fn earlier_resolved_alike(
    cx: &Context,
    current: Option<u64>,
    same: &dyn Fn(&GenerationDoc) -> bool,
) -> Option<GenerationDoc> {
    crate::generation::current::numbers(&cx.layout)
        .into_iter()
        .rev()
        .filter(|n| Some(*n) != current)
        .filter_map(|n| GenerationDoc::read(&cx.layout.generation(n)).ok())
        .find(|d| same(d))
}

/// `--frozen`: the current generation's lock as it is — no resolution — when it was resolved
/// for exactly these requirements (core's and every plugin's, the same exclusions; a plugin
/// without requirements needs nothing from it).
/// Its resolution digest is kept: the next run without `--frozen` re-resolves if anything
/// else that decides the lock changed.
fn frozen(
    current: Option<&GenerationDoc>,
    request: &Request,
    inputs: Vec<PluginInput>,
) -> Result<Resolved, ManagerError> {
    let Some(current) = current else {
        return Err(ManagerError::coded(
            Code::LockChanged,
            "--frozen: there is no current generation, so no lock to install; run without --frozen",
        ));
    };
    let (wanted, excluded) = request.lock_inputs();
    let requiring = |inputs: &[LockInput]| -> Vec<LockInput> {
        inputs
            .iter()
            .filter(|i| !i.requirements.is_empty())
            .cloned()
            .collect()
    };
    let (wanted, had) = (requiring(&wanted), requiring(&current.lock.inputs));
    if wanted != had || current.lock.excluded != excluded {
        return Err(ManagerError::coded(
            Code::LockChanged,
            format!(
                "--frozen: generation {}'s lock was resolved for other requirements ({}); nothing was changed — run without --frozen to resolve",
                current.number,
                requirement_changes(&had, &wanted)
                    .unwrap_or_else(|| "the requirements left out of it changed".to_string()),
            ),
        ));
    }
    Ok(Resolved {
        lock: current.lock.clone(),
        digest: current.resolution_digest.clone(),
        inputs,
        earlier: None,
    })
}

/// What changed between the requirements a lock was resolved for and the ones asked now, per
/// source: `plugin:weather: + weatherlib>=2, - weatherlib>=1` (`None` when only the
/// exclusions differ).
fn requirement_changes(had: &[LockInput], wanted: &[LockInput]) -> Option<String> {
    let of = |inputs: &[LockInput], source: &str| -> Vec<String> {
        inputs
            .iter()
            .filter(|i| i.source == source)
            .flat_map(|i| i.requirements.iter().cloned())
            .collect()
    };
    let sources: std::collections::BTreeSet<&str> = had
        .iter()
        .chain(wanted)
        .map(|i| i.source.as_str())
        .collect();
    let parts: Vec<String> = sources
        .into_iter()
        .filter_map(|source| {
            let (before, now) = (of(had, source), of(wanted, source));
            let lines: Vec<String> = now
                .iter()
                .filter(|r| !before.contains(r))
                .map(|r| format!("+ {r}"))
                .chain(
                    before
                        .iter()
                        .filter(|r| !now.contains(r))
                        .map(|r| format!("- {r}")),
                )
                .collect();
            (!lines.is_empty()).then(|| format!("{source}: {}", lines.join(", ")))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `+name version`, `-name version`, `name old -> new`, comma-separated.
fn describe(diff: &LockDiff) -> String {
    diff.added
        .iter()
        .map(|(n, v)| format!("+{n} {v}"))
        .chain(diff.removed.iter().map(|(n, v)| format!("-{n} {v}")))
        .chain(
            diff.changed
                .iter()
                .map(|(n, a, b)| format!("{n} {a} -> {b}")),
        )
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(source: &str, requirements: &[&str]) -> LockInput {
        LockInput {
            source: source.to_string(),
            requirements: requirements.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn frozen_names_the_requirements_that_changed() {
        let had = [
            input("core", &["httpx==0.28.1"]),
            input("plugin:weather", &["weatherlib>=1"]),
        ];
        let wanted = [
            input("core", &["httpx==0.28.1"]),
            input("plugin:news", &["newslib>=1"]),
            input("plugin:weather", &["weatherlib>=2"]),
        ];
        assert_eq!(
            requirement_changes(&had, &wanted).as_deref(),
            Some("plugin:news: + newslib>=1; plugin:weather: + weatherlib>=2, - weatherlib>=1")
        );
        assert_eq!(requirement_changes(&had, &had), None);
    }
}
