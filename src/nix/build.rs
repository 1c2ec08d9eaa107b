//! `build --offline` (NIX-2): a generation directory built from a Nix lock, the plugins'
//! fetched sources and a directory of pre-fetched wheels, with no network and bit-for-bit
//! reproducibly: every plugin tree is checked against its NAR hash and stored under its
//! content address, the venv is relocatable and gets exactly the lock's packages from the
//! wheel directory (hash-checked), `generation.json` is sorted and its one timestamp is
//! `SOURCE_DATE_EPOCH` (the epoch when unset), and the result is assembled under a fixed
//! name next to `--out` and renamed into place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::lock::{Fetch, NixLock};
use crate::generation::build::{plugin_path, store_link};
use crate::generation::doc::{
    GENERATION_FORMAT, GenPlugin, GenerationDoc, ProfileSelection, PythonEnv,
};
use crate::generation::venv::{self, InstallRequest};
use crate::resolve::engine::IndexConfig;
use crate::resolve::lock::{Lock, LockPython};
use crate::source::{Provenance, SourceSpec};
use crate::store::Store;

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// The lock (`nix lock`).
    pub lock: NixLock,
    /// The lock file's bytes (its digest is the generation's inputs digest).
    pub lock_bytes: Vec<u8>,
    /// Directory of wheels (`--wheels`).
    pub wheels: PathBuf,
    /// The output directory (must not exist).
    pub out: PathBuf,
    /// The interpreter the venv is made for.
    pub python: PathBuf,
    /// Plugin sources by key or name (`--source KEY=PATH`): the fetched repository tree or
    /// the plugin directory itself.
    pub sources: BTreeMap<String, PathBuf>,
    /// A store to find sources in by tree hash when none is given.
    pub store: Option<PathBuf>,
    /// `SOURCE_DATE_EPOCH`: the creation time recorded (the Unix epoch when absent, so two
    /// builds are byte-identical).
    pub source_date_epoch: Option<i64>,
}

/// Why the build failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A plugin source is missing or does not match its hash.
    #[error("{0}")]
    Source(String),
    /// Creating the venv or installing the wheels failed.
    #[error("{0}")]
    Install(String),
    /// File system trouble.
    #[error("{0}")]
    Io(String),
}

fn io(context: &Path, e: impl std::fmt::Display) -> BuildError {
    BuildError::Io(format!("{}: {e}", context.display()))
}

/// The plugin directory for a pin, verified against the lock's hashes.
fn plugin_dir(req: &BuildRequest, pin: &super::lock::NixPin) -> Result<PathBuf, BuildError> {
    let given = req
        .sources
        .get(&pin.key)
        .or_else(|| req.sources.get(&pin.name))
        .cloned()
        .or_else(|| {
            let store = req.store.as_ref()?;
            let key = Store::key_from_sri(&pin.tree)?;
            let path = store.join(key);
            path.is_dir().then_some(path)
        })
        .ok_or_else(|| {
            BuildError::Source(format!(
                "no source for plugin `{}`: pass --source {}=PATH (the fetched tree)",
                pin.key, pin.key
            ))
        })?;
    let hash = super::hash_path(&given).map_err(|e| io(&given, e))?;
    let dir = if hash == pin.hash && !matches!(pin.fetch, Fetch::Path { .. }) {
        match &pin.subdir {
            Some(s) => crate::source::contained_subdir(&given, Some(s))
                .map_err(|e| BuildError::Source(format!("plugin `{}`: {e}", pin.key)))?,
            None => given.clone(),
        }
    } else if hash == pin.tree {
        given.clone()
    } else {
        return Err(BuildError::Source(format!(
            "plugin `{}`: {} has NAR hash {hash}, but the lock pins {} (fetched tree) or {} (plugin tree)",
            pin.key,
            given.display(),
            pin.hash,
            pin.tree
        )));
    };
    let tree = super::hash_path(&dir).map_err(|e| io(&dir, e))?;
    if tree != pin.tree {
        return Err(BuildError::Source(format!(
            "plugin `{}`: the plugin tree {} has NAR hash {tree}, the lock pins {}",
            pin.key,
            dir.display(),
            pin.tree
        )));
    }
    Ok(dir)
}

/// The tree of a distribution pinned by its wheel (`Fetch::Wheel`): a directory holding that
/// wheel alone, as the store keeps it. From `--source KEY=PATH` (that directory, or the wheel
/// file), the store (by tree hash), or the wheel directory (`--wheels`, where the Python
/// lock's wheels are); the file must have the pinned sha256 and the tree the pinned NAR hash.
/// The second value, when there is one, holds the directory made here.
fn wheel_tree(
    req: &BuildRequest,
    pin: &super::lock::NixPin,
    filename: &str,
) -> Result<(PathBuf, Option<tempfile::TempDir>), BuildError> {
    let source = |m: String| BuildError::Source(format!("plugin `{}`: {m}", pin.key));
    if filename.is_empty() || filename.contains(['/', '\\']) || filename.starts_with('.') {
        return Err(source(format!(
            "the lock names the wheel `{filename}`, which is not a file name"
        )));
    }
    let given = req
        .sources
        .get(&pin.key)
        .or_else(|| req.sources.get(&pin.name));
    let stored = || {
        let store = req.store.as_ref()?;
        let path = store.join(Store::key_from_sri(&pin.tree)?);
        path.is_dir().then_some(path)
    };
    let check_tree = |dir: &Path| -> Result<(), BuildError> {
        let tree = super::hash_path(dir).map_err(|e| io(dir, e))?;
        if tree != pin.tree {
            return Err(source(format!(
                "the tree {} has NAR hash {tree}, the lock pins {}",
                dir.display(),
                pin.tree
            )));
        }
        Ok(())
    };
    match given.cloned() {
        Some(dir) if dir.is_dir() => {
            check_tree(&dir)?;
            return Ok((dir, None));
        }
        None => {
            if let Some(dir) = stored() {
                check_tree(&dir)?;
                return Ok((dir, None));
            }
        }
        Some(_) => {}
    }
    let file = given.cloned().unwrap_or_else(|| req.wheels.join(filename));
    let bytes = std::fs::read(&file).map_err(|e| {
        source(format!(
            "its wheel {} cannot be read ({e}): pass --source {}=PATH (the wheel) or put it in --wheels",
            file.display(),
            pin.key
        ))
    })?;
    let sri = super::lock::sri_of_hex(&crate::hash::sha256_hex(&bytes)).unwrap_or_default();
    if sri != pin.hash {
        return Err(source(format!(
            "the wheel {} has sha256 {sri}, the lock pins {}",
            file.display(),
            pin.hash
        )));
    }
    let made = tempfile::Builder::new()
        .prefix("hermes-plugins-wheel-tree-")
        .tempdir()
        .map_err(|e| io(&std::env::temp_dir(), e))?;
    let into = made.path().join(filename);
    std::fs::write(&into, &bytes).map_err(|e| io(&into, e))?;
    check_tree(made.path())?;
    Ok((made.path().to_path_buf(), Some(made)))
}

fn created(epoch: Option<i64>) -> String {
    let secs = epoch.unwrap_or(0);
    jiff::Timestamp::from_second(secs)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn empty_lock(python_version: &str) -> Lock {
    Lock {
        lock_version: crate::resolve::lock::LOCK_VERSION,
        python: LockPython {
            version: python_version.to_string(),
            implementation: String::new(),
            sys_platform: String::new(),
            platform_machine: String::new(),
        },
        core: None,
        inputs: Vec::new(),
        excluded: Vec::new(),
        packages: Vec::new(),
    }
}

/// Builds the generation; returns its document.
pub fn build(req: &BuildRequest) -> Result<GenerationDoc, BuildError> {
    if req.out.exists() {
        return Err(BuildError::Io(format!(
            "{} already exists; build into a new directory",
            req.out.display()
        )));
    }
    let name = req
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let partial = req.out.with_file_name(format!(".{name}.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).map_err(|e| io(&partial, e))?;
    let result = assemble(req, &partial);
    match result {
        Ok(doc) => {
            std::fs::rename(&partial, &req.out).map_err(|e| io(&req.out, e))?;
            Ok(doc)
        }
        Err(e) => {
            let _ = crate::store::remove_tree(&partial);
            Err(e)
        }
    }
}

fn assemble(req: &BuildRequest, root: &Path) -> Result<GenerationDoc, BuildError> {
    let plugins = store_plugins(req, root)?;
    let (installed, lock) = build_venv(req, root)?;
    let doc = document(req, root, plugins, &installed, lock);
    let path = root.join("generation.json");
    std::fs::write(&path, doc.to_json()).map_err(|e| io(&path, e))?;
    Ok(doc)
}

/// Every pinned plugin verified, stored under its content address inside the generation, and
/// linked as `plugins/<key>`.
fn store_plugins(req: &BuildRequest, root: &Path) -> Result<Vec<GenPlugin>, BuildError> {
    // Plugins: verified, then stored under their content address inside the generation.
    let store = Store::open(root.join("store")).map_err(|e| io(root, e))?;
    let mut plugins = Vec::new();
    let mut pins: Vec<&super::lock::NixPin> = req.lock.plugins.iter().collect();
    pins.sort_by(|a, b| a.key.cmp(&b.key));
    for pin in pins {
        // A distribution's tree is its wheel alone, made where it is not given.
        let (dir, _made) = match &pin.fetch {
            Fetch::Wheel { filename, .. } => wheel_tree(req, pin, filename)?,
            _ => (plugin_dir(req, pin)?, None),
        };
        let entry = store
            .put(&dir)
            .map_err(|e| BuildError::Source(format!("plugin `{}`: {e}", pin.key)))?;
        let link = crate::home::join_key(&root.join("plugins"), &pin.key)
            .map_err(|e| BuildError::Source(e.to_string()))?;
        if let Some(parent) = link.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        crate::files::os::link_dir(&store_link(&pin.key, 1, &entry.key), &link)
            .map_err(|e| io(&link, e))?;
        let (spec, url) = match &pin.fetch {
            Fetch::Github { owner, repo } => (
                SourceSpec::Github {
                    owner: owner.clone(),
                    repo: repo.clone(),
                    subdir: pin.subdir.clone(),
                },
                Some(format!("https://github.com/{owner}/{repo}")),
            ),
            Fetch::Git { url } => (
                SourceSpec::Git {
                    url: url.clone(),
                    subdir: pin.subdir.clone(),
                },
                Some(url.clone()),
            ),
            Fetch::Path { path } => (
                SourceSpec::Path {
                    dir: PathBuf::from(path),
                },
                None,
            ),
            Fetch::Wheel {
                distribution,
                version,
                url,
                ..
            } => (
                SourceSpec::Pypi {
                    requirement: format!("{distribution}=={version}"),
                },
                Some(url.clone()),
            ),
        };
        let package = match &pin.fetch {
            Fetch::Wheel {
                distribution,
                version,
                filename,
                ..
            } => {
                let file = dir.join(filename);
                let bytes = std::fs::read(&file).map_err(|e| io(&file, e))?;
                Some(crate::source::PackagePin {
                    name: distribution.clone(),
                    version: version.clone(),
                    filename: filename.clone(),
                    sha256: crate::hash::sha256_hex(&bytes),
                })
            }
            _ => None,
        };
        let loaded = crate::package::load_dir(&dir, crate::package::Mode::Runtime).ok();
        let format = loaded
            .as_ref()
            .map_or(crate::package::Format::NativeV1, |l| l.format());
        plugins.push(GenPlugin {
            key: pin.key.clone(),
            name: pin.name.clone(),
            version: loaded.as_ref().and_then(|l| l.version()),
            kind: format.kind(),
            format,
            source: Provenance {
                spec,
                url,
                subdir: pin.subdir.clone(),
                pinned_ref: pin.rev.clone(),
                tracked_ref: None,
                commit: pin.rev.clone(),
                dirty: false,
                catalog: None,
                package,
                reviewed: false,
            },
            commit: pin.rev.clone(),
            tree: pin.tree.clone(),
            store_key: entry.key,
            path: plugin_path(&pin.key),
            requires_env: loaded
                .as_ref()
                .map(|l| l.requires_env())
                .unwrap_or_default(),
        });
    }
    Ok(plugins)
}

/// The venv: exactly the lock's packages, from the wheel directory only.
fn build_venv(
    req: &BuildRequest,
    root: &Path,
) -> Result<(venv::Installed, Option<Lock>), BuildError> {
    let cache = tempfile::Builder::new()
        .prefix("hermes-plugins-build-cache-")
        .tempdir()
        .map_err(|e| io(Path::new("temporary directory"), e))?;
    let lock = req.lock.python.clone();
    let pins = match &lock {
        Some(l) => {
            crate::generation::build::pins(l).map_err(|e| BuildError::Install(e.to_string()))?
        }
        None => Vec::new(),
    };
    // Offline: every wheel comes from the wheel directory, checked like any other. A wheel
    // there may be a symbolic link (Nix composes such directories with `linkFarm`): the
    // locked wheels are copied (links followed, as the user named the directory) into the
    // build's own scratch directory under their file names, and checked against the lock's
    // sha256 from there.
    let wheels = cache.path().join("offline-wheels");
    std::fs::create_dir_all(&wheels).map_err(|e| io(&wheels, e))?;
    for pin in &pins {
        if let Some((file, _)) = &pin.wheel {
            if file.contains('/') || file.starts_with('.') || file.contains('\0') {
                return Err(BuildError::Install(format!(
                    "the lock names the wheel `{}`, which is not a file name",
                    crate::text::escape(file)
                )));
            }
            let from = req.wheels.join(file);
            let to = wheels.join(file);
            std::fs::copy(&from, &to).map_err(|e| io(&from, e))?;
        }
    }
    let pins = pins
        .into_iter()
        .map(|mut pin| {
            if let Some((file, _)) = &pin.wheel {
                let local = url::Url::from_file_path(wheels.join(file))
                    .map(|u| u.to_string())
                    .unwrap_or_default();
                pin.wheel = Some((file.clone(), local));
            }
            pin
        })
        .collect();
    let installed = venv::install(InstallRequest {
        python: req.python.clone(),
        cache: crate::resolve::engine::UvCache::at(cache.path()),
        index: IndexConfig::local_only(vec![wheels.display().to_string()], Default::default()),
        pins,
        venv: root.join("venv"),
        wheel_cache: cache.path().join("wheels"),
        wheel_limits: crate::generation::wheels::WheelLimits::default(),
    })
    .map_err(|e| BuildError::Install(e.to_string()))?;
    super::reproducible::normalize_install_records(
        &installed.site_packages,
        req.source_date_epoch.unwrap_or(0),
    )
    .map_err(|e| io(&installed.site_packages, e))?;
    Ok((installed, lock))
}

/// `generation.json` of the built generation (number 1, the `default` profile enabling every
/// plugin).
fn document(
    req: &BuildRequest,
    root: &Path,
    plugins: Vec<GenPlugin>,
    installed: &venv::Installed,
    lock: Option<Lock>,
) -> GenerationDoc {
    let rel = |p: &Path| {
        p.strip_prefix(root)
            .map(|r| r.display().to_string())
            .unwrap_or_default()
    };
    let site_packages = {
        let r = rel(&installed.site_packages);
        if r.is_empty() {
            Path::new("venv")
                .join(venv::site_packages_relative(&installed.python_version))
                .display()
                .to_string()
        } else {
            r
        }
    };
    let lock = lock.unwrap_or_else(|| empty_lock(&installed.python_version));
    let keys: Vec<String> = plugins.iter().map(|p| p.key.clone()).collect();
    GenerationDoc {
        format: GENERATION_FORMAT,
        number: 1,
        parent: None,
        created: created(req.source_date_epoch),
        operation: "build --offline".into(),
        inputs_digest: format!("sha256:{}", crate::hash::sha256_hex(&req.lock_bytes)),
        resolution_digest: None,
        index: None,
        core: None,
        python: PythonEnv {
            base: installed.base_python.display().to_string(),
            version: lock.python.version.clone(),
            venv: "venv".into(),
            executable: "venv/bin/python".into(),
            site_packages,
        },
        plugins,
        profiles: BTreeMap::from([(
            "default".to_string(),
            ProfileSelection {
                enabled: keys,
                grants: BTreeMap::new(),
                external: Vec::new(),
            },
        )]),
        lock,
    }
}
