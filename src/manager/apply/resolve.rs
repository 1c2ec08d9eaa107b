//! Phase 5, resolution: core + every enabled plugin, preferring the current lock — or
//! reusing it unchanged when nothing that decides it changed (then nothing touches the
//! network).

use super::digest::resolution_digest;
use crate::exit::Code;
use crate::generation::doc::{GenPlugin, GenerationDoc};
use crate::manager::{Context, Feedback, ManagerError};
use crate::resolve::inputs::{self, PluginInput};
use crate::resolve::lock::Lock;
use crate::resolve::{self, Failure, Request};
use crate::store::Store;

/// What phase 5 produced.
pub(super) struct Resolved {
    /// The lock the generation installs.
    pub lock: Lock,
    /// Its resolution digest (recorded in `generation.json`).
    pub digest: String,
    /// Each plugin's requirements, as resolved.
    pub inputs: Vec<PluginInput>,
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
    let mut plugin_inputs = Vec::new();
    for p in plugins {
        let dir = store.path_of(&p.store_key);
        plugin_inputs.push(inputs::plugin_from_dir(&dir).map_err(|e| {
            ManagerError::caused(
                Code::Environment,
                format!(
                    "plugin `{}`: its store tree {} cannot be read (reinstall it)",
                    p.key,
                    dir.display()
                ),
                &e,
            )
        })?);
    }
    plugin_inputs.extend(external.iter().cloned());
    let started = std::time::Instant::now();
    let request = Request {
        core: cx.core.clone(),
        extras: cx.extras.clone(),
        plugins: plugin_inputs.clone(),
        python: cx.python.clone(),
        cache_dir: cx.layout.uv_cache(),
        index: cx.index.clone(),
        quarantine_days: cx.quarantine_days,
        now: cx.now,
        previous: current.map(|d| d.lock.clone()),
    };
    let digest = resolution_digest(cx, &request);
    let reusable = current
        .filter(|d| d.resolution_digest.as_deref() == Some(digest.as_str()))
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
            let outcome = resolve::run(&request);
            feedback.done();
            match outcome {
                Ok(o) => o.lock,
                Err(Failure::Conflict(c)) => return Err(ManagerError::Conflict(c)),
                Err(Failure::Environment(code, message, causes)) => {
                    return Err(ManagerError::Caused {
                        code,
                        message,
                        causes,
                    });
                }
            }
        }
    };
    tracing::debug!(
        "resolved {} packages in {:?}",
        lock.packages.len(),
        started.elapsed()
    );
    Ok(Resolved {
        lock,
        digest,
        inputs: plugin_inputs,
    })
}
