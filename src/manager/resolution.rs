//! What every operation that resolves shares: the plugins' requirements read from their
//! store trees, and the one place a resolution [`Request`] is built — from what it resolves
//! against ([`Against`]: a home's [`Context`], or the flags alone for `resolve` and
//! `catalog resolve-all`) — and `catalog resolve-all` itself.

use std::path::Path;

use super::{Context, ManagerError};
use crate::catalog::resolve_all::{self, ResolveAll};
use crate::exit::Code;
use crate::generation::doc::GenPlugin;
use crate::home::Layout;
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
            let input = inputs::plugin_from_dir(&dir).map(|mut input| {
                with_extras(&mut input, &p.source.spec);
                input
            });
            input.map_err(|e| {
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

/// Where the resolution finds the plugins that are local wheel files: their store trees, as
/// `--find-links` locations (a published plugin's wheel is nowhere else).
pub fn wheel_links(store: &Store, plugins: &[GenPlugin]) -> Vec<String> {
    plugins
        .iter()
        .filter(|p| matches!(p.source.spec, crate::source::SourceSpec::Wheel { .. }))
        .map(|p| store.path_of(&p.store_key).display().to_string())
        .collect()
}

/// A distribution from the package index asked with extras (`pypi:NAME[extra]`) installs them:
/// its store tree says `NAME==VERSION`, the extras are the source's.
fn with_extras(input: &mut PluginInput, spec: &crate::source::SourceSpec) {
    let crate::source::SourceSpec::Pypi { requirement } = spec else {
        return;
    };
    let Ok(asked) = crate::source::spec::pypi_requirement(requirement) else {
        return;
    };
    for r in &mut input.requirements {
        if r.requirement.name == asked.name && !asked.extras.is_empty() {
            r.requirement.extras = asked.extras.clone();
            r.raw = r.requirement.to_string();
        }
    }
}

/// What a resolution is against: core, interpreter, indexes, the quarantine window and its
/// "now".
#[derive(Debug, Clone)]
pub struct Against {
    /// Hermes core (`None`: no core).
    pub core: Option<crate::resolve::inputs::CoreInputs>,
    /// Core extras.
    pub extras: Vec<String>,
    /// The target interpreter.
    pub python: std::path::PathBuf,
    /// The shared interpreter cache (see [`crate::resolve::engine::UvCache`]).
    pub interpreter_cache: Option<std::path::PathBuf>,
    /// Where packages come from.
    pub index: crate::resolve::engine::IndexConfig,
    /// Quarantine window (days).
    pub quarantine_days: u32,
    /// "Now" for the quarantine.
    pub now: jiff::Timestamp,
}

impl Against {
    /// What the operation's context resolves against.
    pub fn of(cx: &Context) -> Against {
        Against {
            core: cx.core.clone(),
            extras: cx.extras.clone(),
            python: cx.python.clone(),
            interpreter_cache: cx.interpreter_cache.clone(),
            index: cx.index.clone(),
            quarantine_days: cx.quarantine_days,
            now: cx.now,
        }
    }

    /// The request resolving `plugins` with uv's cache in `layout`, preferring `previous`
    /// (a lock) when given.
    pub fn request(
        self,
        layout: &Layout,
        plugins: Vec<PluginInput>,
        previous: Option<Lock>,
    ) -> Request {
        Request {
            core: self.core,
            extras: self.extras,
            plugins,
            python: self.python,
            cache: super::uv_cache(layout, self.interpreter_cache),
            index: self.index,
            quarantine_days: self.quarantine_days,
            now: self.now,
            previous,
        }
    }
}

/// The request resolving `plugins` with the context's core, interpreter, indexes and
/// quarantine, preferring `previous` (the current lock) when given.
pub fn request(cx: &Context, plugins: Vec<PluginInput>, previous: Option<Lock>) -> Request {
    Against::of(cx).request(&cx.layout, plugins, previous)
}

/// `catalog resolve-all DIR`: every entry of the catalog in `dir` resolved with core, alone
/// and together, against `against` (never a home's settings: a catalog is checked against
/// the core named for it). `layout` lends uv's cache and the git cache; checkouts go to a
/// scratch directory removed afterwards. `progress` hears each step.
pub fn resolve_catalog(
    dir: &Path,
    against: Against,
    layout: &Layout,
    progress: &mut dyn FnMut(&str),
) -> Result<ResolveAll, ManagerError> {
    let (entries, unusable) =
        resolve_all::usable(crate::catalog::check::check(&[dir.to_path_buf()]));
    if entries.is_empty() && unusable.is_empty() {
        return Err(ManagerError::Usage(format!(
            "{}: no catalog entries",
            dir.display()
        )));
    }
    let base = against.request(layout, Vec::new(), None);
    let scratch = tempfile::tempdir().map_err(ManagerError::environment)?;
    Ok(resolve_all::resolve_all(
        &entries,
        &unusable,
        &base,
        &layout.git_cache(),
        scratch.path(),
        progress,
    )?)
}
