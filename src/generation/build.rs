//! Building a generation in its staging directory: the virtualenv with the lock installed
//! (through [`super::venv`]), the plugin links into the store, and `generation.json`.

use std::path::{Path, PathBuf};

use uv_normalize::PackageName;
use uv_pep440::Version;

pub use super::doc::plugin_path;
use super::doc::{GenPlugin, GenerationDoc, PythonEnv};
use super::faults;
use super::venv::{self, InstallRequest, Pin};
use crate::resolve::engine::IndexConfig;
use crate::resolve::lock::Lock;

/// What the build needs besides the document.
#[derive(Debug, Clone)]
pub struct BuildInputs {
    /// The base interpreter.
    pub python: PathBuf,
    /// uv's caches.
    pub cache: crate::resolve::engine::UvCache,
    /// Where packages come from.
    pub index: IndexConfig,
    /// The store root (plugin links point into it).
    pub store: PathBuf,
    /// Where admitted wheels are kept.
    pub wheel_cache: PathBuf,
    /// Bounds on each wheel.
    pub wheel_limits: super::wheels::WheelLimits,
    /// The current generation, when its venv serves this one as it is (same lock): linked,
    /// not installed (see [`super::reuse`]).
    pub reuse: Option<super::reuse::ReusableVenv>,
    /// The environment the run installed ahead, taken (moved in) when it has the lock's
    /// packages for this interpreter ([`super::ahead`]).
    pub ahead: super::ahead::Ahead,
}

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Creating the venv or installing failed.
    #[error(transparent)]
    Install(#[from] crate::resolve::engine::EngineError),
    /// File system trouble.
    #[error("{0}")]
    Io(String),
    /// The lock names something that is not a package.
    #[error("the lock has an invalid entry: {0}")]
    BadLock(String),
}

fn io(context: &str, e: std::io::Error) -> BuildError {
    BuildError::Io(format!("{context}: {e}"))
}

/// The pins to install: every package of the lock.
pub fn pins(lock: &Lock) -> Result<Vec<Pin>, BuildError> {
    lock.packages
        .iter()
        .map(|p| {
            Ok(Pin {
                name: p
                    .name
                    .parse::<PackageName>()
                    .map_err(|e| BuildError::BadLock(format!("{}: {e}", p.name)))?,
                version: p
                    .version
                    .parse::<Version>()
                    .map_err(|e| BuildError::BadLock(format!("{} {}: {e}", p.name, p.version)))?,
                sha256: p.sha256.clone(),
                wheel: match (p.kind.as_str(), &p.file, &p.url) {
                    ("wheel", Some(file), Some(url)) => Some((file.clone(), url.clone())),
                    _ => None,
                },
            })
        })
        .collect()
}

/// The relative target of the link `plugins/<key>` that points at `store/<store_key>`, where
/// `store/` sits `levels` directories above `plugins/` (1 in a self-contained generation,
/// 3 under `pm/`: `generations/<N>/plugins`). Category keys (`tools/weather`) nest one deeper.
pub fn store_link(key: &str, levels: usize, store_key: &str) -> PathBuf {
    let mut target = PathBuf::new();
    for _ in 0..levels + key.matches('/').count() {
        target.push("..");
    }
    target.join("store").join(store_key)
}

/// The link target from `generations/<N>/plugins/<key>` up to `pm/store/<store_key>`.
fn link_target(key: &str, store_key: &str) -> PathBuf {
    store_link(key, 3, store_key)
}

/// Builds the generation in `staging` (which must not exist). `doc.python` is filled in from
/// the venv; the rest of `doc` is written as given.
pub fn build(
    staging: &Path,
    inputs: &BuildInputs,
    mut doc: GenerationDoc,
) -> Result<GenerationDoc, BuildError> {
    std::fs::create_dir_all(staging).map_err(|e| io(&staging.display().to_string(), e))?;
    let venv = staging.join("venv");
    let pins = pins(&doc.lock)?;
    if let Some(built) = inputs.ahead.take(&pins, &inputs.python) {
        // The paths are read where the venv was built; moved, it keeps them relative to its
        // new directory (a relocatable venv names no directory it sits in).
        let paths = python_env(&built.installed, built.root(), &doc.lock)?;
        std::fs::rename(built.venv(), &venv)
            .map_err(|e| io(&format!("cannot move {} in", built.venv().display()), e))?;
        tracing::debug!(
            "the environment built ahead is this generation's: {} packages moved in",
            built.installed.packages.len()
        );
        faults::point("after-venv");
        faults::point("after-install");
        doc.python = paths;
        return finish(staging, doc);
    }
    if let Some(previous) = &inputs.reuse {
        let from = previous.generation.join(&previous.doc.python.venv);
        let carried = super::reuse::link_tree(&from, &venv)
            .map_err(|e| io(&format!("cannot carry the venv {} over", from.display()), e))?;
        tracing::debug!(
            "venv of generation {} carried over: {} files linked, {} copied",
            previous.doc.number,
            carried.linked,
            carried.copied
        );
        faults::point("after-venv");
        faults::point("after-install");
        doc.python = PythonEnv {
            base: previous.doc.python.base.clone(),
            version: doc.lock.python.version.clone(),
            venv: "venv".to_string(),
            executable: previous.doc.python.executable.clone(),
            site_packages: previous.doc.python.site_packages.clone(),
        };
        return finish(staging, doc);
    }
    let installed = venv::install(InstallRequest {
        python: inputs.python.clone(),
        cache: inputs.cache.clone(),
        index: inputs.index.clone(),
        pins,
        venv: venv.clone(),
        wheel_cache: inputs.wheel_cache.clone(),
        wheel_limits: inputs.wheel_limits,
    })?;
    tracing::debug!("venv and {} packages installed", installed.packages.len());
    faults::point("after-venv");
    faults::point("after-install");
    doc.python = python_env(&installed, staging, &doc.lock)?;
    finish(staging, doc)
}

/// `doc.python` for the venv `installed` made under `root` (the staging directory, or the
/// directory it was built ahead in): paths recorded relative to `root`, whatever form
/// (relative, absolute, through symlinks) `root` and uv's answers take.
fn python_env(
    installed: &venv::Installed,
    root: &Path,
    lock: &Lock,
) -> Result<PythonEnv, BuildError> {
    let root_abs = std::fs::canonicalize(root).map_err(|e| io(&root.display().to_string(), e))?;
    let rel = |p: &Path, fallback: PathBuf| -> Result<String, BuildError> {
        let parent = p.parent().and_then(|d| std::fs::canonicalize(d).ok());
        let resolved = match (parent, p.file_name()) {
            (Some(d), Some(name)) => d.join(name),
            _ => fallback.clone(),
        };
        match resolved.strip_prefix(&root_abs) {
            Ok(r) => Ok(r.to_string_lossy().to_string()),
            Err(_) if root_abs.join(&fallback).exists() => {
                Ok(fallback.to_string_lossy().to_string())
            }
            Err(_) => Err(BuildError::Io(format!(
                "uv placed {} outside the generation {}",
                p.display(),
                root_abs.display()
            ))),
        }
    };
    Ok(PythonEnv {
        base: installed.base_python.display().to_string(),
        version: lock.python.version.clone(),
        venv: "venv".to_string(),
        executable: rel(
            &installed.python,
            PathBuf::from(if cfg!(windows) {
                "venv/Scripts/python.exe"
            } else {
                "venv/bin/python"
            }),
        )?,
        site_packages: rel(
            &installed.site_packages,
            Path::new("venv").join(venv::site_packages_relative(&installed.python_version)),
        )?,
    })
}

/// The plugin links and `generation.json`, once the venv is in place.
fn finish(staging: &Path, doc: GenerationDoc) -> Result<GenerationDoc, BuildError> {
    for plugin in &doc.plugins {
        link_plugin(staging, plugin)?;
    }
    faults::point("after-plugins");
    let path = staging.join("generation.json");
    std::fs::write(&path, doc.to_json()).map_err(|e| io(&path.display().to_string(), e))?;
    Ok(doc)
}

fn link_plugin(staging: &Path, plugin: &GenPlugin) -> Result<(), BuildError> {
    let link = crate::home::join_key(&staging.join("plugins"), &plugin.key)
        .map_err(|e| BuildError::Io(e.to_string()))?;
    if let Some(parent) = link.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(&parent.display().to_string(), e))?;
    }
    crate::files::os::link_dir(&link_target(&plugin.key, &plugin.store_key), &link)
        .map_err(|e| io(&link.display().to_string(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_climb_to_pm() {
        assert_eq!(
            link_target("weather", "abc"),
            PathBuf::from("../../../store/abc")
        );
        assert_eq!(
            link_target("tools/weather", "abc"),
            PathBuf::from("../../../../store/abc")
        );
    }
}
