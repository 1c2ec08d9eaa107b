//! What every operation that resolves shares: the plugins' requirements read from their
//! store trees, and the resolution [`Request`] built from the operation's [`Context`].

use super::{Context, ManagerError};
use crate::exit::Code;
use crate::generation::doc::GenPlugin;
use crate::resolve::Request;
use crate::resolve::inputs::{self, PluginInput};
use crate::resolve::lock::Lock;
use crate::store::Store;

/// The declared requirements of each published plugin, read from its store tree.
pub fn store_inputs(
    store: &Store,
    plugins: &[GenPlugin],
) -> Result<Vec<PluginInput>, ManagerError> {
    plugins
        .iter()
        .map(|p| {
            let dir = store.path_of(&p.store_key);
            inputs::plugin_from_dir(&dir).map_err(|e| {
                ManagerError::caused(
                    Code::Environment,
                    format!(
                        "plugin `{}`: its store tree {} cannot be read (reinstall it)",
                        p.key,
                        dir.display()
                    ),
                    &e,
                )
            })
        })
        .collect()
}

/// The request resolving `plugins` with the context's core, interpreter, indexes and
/// quarantine, preferring `previous` (the current lock) when given.
pub fn request(cx: &Context, plugins: Vec<PluginInput>, previous: Option<Lock>) -> Request {
    Request {
        core: cx.core.clone(),
        extras: cx.extras.clone(),
        plugins,
        python: cx.python.clone(),
        cache_dir: cx.layout.uv_cache(),
        index: cx.index.clone(),
        quarantine_days: cx.quarantine_days,
        now: cx.now,
        previous,
    }
}
