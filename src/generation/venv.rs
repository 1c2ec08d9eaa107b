//! The uv-facing half of building a generation: create a relocatable virtualenv for the
//! target interpreter and install exactly the packages of a lock into it, hash-checked, the
//! way `uv venv --relocatable` + `uv pip sync --require-hashes` do (uv crates `=0.0.72`).
//!
//! The lock's pins are resolved again with dependencies off (`DependencyMode::Direct`), which
//! turns each `name==version` into the distribution uv would pick for this interpreter; the
//! index's sha256 for it must equal the lock's, so a file swapped on the index is refused.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;
use uv_configuration::Reinstall;
use uv_dispatch::SharedState;
use uv_distribution::DistributionDatabase;
use uv_distribution_types::VersionId;
use uv_installer::{InstallationStrategy, Installer, Planner, Preparer, SitePackages};
use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_preview::Preview;
use uv_pypi_types::{HashAlgorithm, HashDigest};
use uv_resolver::{
    DependencyMode, ExcludeNewer, ForkStrategy, OptionsBuilder, Preferences, Prerelease,
    ResolutionMode, ResolveError,
};
use uv_types::{HashStrategy, InFlight};
use uv_virtualenv::{OnExisting, Prompt};

use crate::resolve::engine::{self, EngineError, INDEX_STRATEGY, IndexConfig, Session};

/// One package to install, as the lock records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Normalised name.
    pub name: PackageName,
    /// Exact version.
    pub version: Version,
    /// The sha256 (hex) of the chosen file, when the index gave one.
    pub sha256: Option<String>,
    /// The chosen file's name and URL, when it is a wheel (see [`super::wheels`]).
    pub wheel: Option<(String, String)>,
}

/// What to build.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    /// The base interpreter.
    pub python: PathBuf,
    /// uv's caches.
    pub cache: crate::resolve::engine::UvCache,
    /// Where packages come from.
    pub index: IndexConfig,
    /// The packages.
    pub pins: Vec<Pin>,
    /// The virtualenv to create (must not exist).
    pub venv: PathBuf,
    /// Where admitted wheels are kept (`pm/cache/wheels`).
    pub wheel_cache: PathBuf,
    /// Bounds on each wheel.
    pub wheel_limits: super::wheels::WheelLimits,
}

/// What was installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// Packages installed, `name==version`, sorted.
    pub packages: Vec<String>,
    /// How many came from the network (the rest were linked from uv's cache).
    pub downloaded: usize,
    /// The venv's `site-packages` directory.
    pub site_packages: PathBuf,
    /// The venv's interpreter (`bin/python`).
    pub python: PathBuf,
    /// `major.minor` of the interpreter.
    pub python_version: String,
    /// The base interpreter's real executable (what the venv was made from).
    pub base_python: PathBuf,
}

/// Creates the virtualenv and installs the pins into it.
pub fn install(request: InstallRequest) -> Result<Installed, EngineError> {
    engine::on_uv_thread("install", move || install_async(request))
}

fn hash_strategy(pins: &[Pin]) -> HashStrategy {
    let mut map: FxHashMap<VersionId, Vec<HashDigest>> = FxHashMap::default();
    for pin in pins {
        if let Some(hex) = &pin.sha256 {
            map.insert(
                VersionId::from_registry(pin.name.clone(), pin.version.clone()),
                vec![HashDigest {
                    algorithm: HashAlgorithm::Sha256,
                    digest: hex.to_ascii_lowercase().into(),
                }],
            );
        }
    }
    if !pins.is_empty() && map.len() == pins.len() {
        HashStrategy::Require(Arc::new(map))
    } else {
        HashStrategy::Verify(Arc::new(map))
    }
}

/// Where the packages come from: when every pin is a wheel, each is admitted first
/// ([`super::wheels`]) and uv installs from directories holding exactly the admitted files;
/// otherwise (an sdist must be built) from the configured indexes, as `uv pip sync` does.
async fn sources(
    request: &InstallRequest,
    hasher: &HashStrategy,
) -> Result<IndexConfig, EngineError> {
    let wheel_pins: Option<Vec<super::wheels::WheelPin>> = request
        .pins
        .iter()
        .map(|p| {
            p.wheel
                .as_ref()
                .map(|(filename, url)| super::wheels::WheelPin {
                    label: format!("{}=={}", p.name, p.version),
                    filename: filename.clone(),
                    url: url.clone(),
                    sha256: p.sha256.clone(),
                })
        })
        .collect();
    match wheel_pins.filter(|w| !w.is_empty()) {
        Some(pins) => {
            let dirs =
                super::wheels::admit(&pins, &request.wheel_cache, &request.wheel_limits, || {
                    Session::open(&request.python, &request.cache, &request.index, hasher)
                })
                .await?;
            Ok(IndexConfig::local_only(
                dirs.iter().map(|d| d.display().to_string()).collect(),
                request.index.timeouts,
            ))
        }
        None => Ok(request.index.clone()),
    }
}

/// The first half of [`install`]: the relocatable virtualenv `venv` (which must not exist) for
/// `python`, empty. It needs only the interpreter, so it can be made before anything is
/// resolved ([`super::ahead`]).
pub async fn create(
    python: &Path,
    cache: &crate::resolve::engine::UvCache,
    venv: &Path,
) -> Result<uv_python::PythonEnvironment, EngineError> {
    let (_, interpreter) = engine::open_interpreter(python, cache).await?;
    uv_virtualenv::create_venv(
        venv,
        interpreter,
        Prompt::Static("hermes-plugins".to_string()),
        false,
        OnExisting::Fail,
        true,
        uv_virtualenv::Seed::Disabled,
        false,
    )
    .map_err(|e| {
        let (message, mut causes) = engine::explain(&e);
        causes.insert(0, message);
        EngineError::Failed {
            message: format!("cannot create the virtualenv {}", venv.display()),
            causes,
        }
    })
}

/// Each pin as an exact registry requirement.
fn locked_requirements(pins: &[Pin]) -> Vec<uv_distribution_types::Requirement> {
    pins.iter()
        .map(|pin| uv_distribution_types::Requirement {
            name: pin.name.clone(),
            extras: Box::new([]),
            groups: Box::new([]),
            marker: uv_pep508::MarkerTree::TRUE,
            source: uv_distribution_types::RequirementSource::Registry {
                specifier: uv_pep440::VersionSpecifiers::from(
                    uv_pep440::VersionSpecifier::equals_version(pin.version.clone()),
                ),
                index: None,
                conflict: None,
            },
            origin: None,
        })
        .collect()
}

async fn install_async(request: InstallRequest) -> Result<Installed, EngineError> {
    let venv = create(&request.python, &request.cache, &request.venv).await?;
    fill(request, venv).await
}

/// The second half of [`install`]: the pins installed into `venv`, made by [`create`] for
/// `request.python` at `request.venv`.
pub async fn fill(
    request: InstallRequest,
    venv: uv_python::PythonEnvironment,
) -> Result<Installed, EngineError> {
    let hasher = hash_strategy(&request.pins);
    let index = sources(&request, &hasher).await?;
    let session = Session::open(&request.python, &request.cache, &index, &hasher).await?;
    let site_packages_dir = venv
        .site_packages()
        .next()
        .map(|p| p.to_path_buf())
        .ok_or_else(|| EngineError::Other("the new virtualenv has no site-packages".into()))?;
    let mut packages: Vec<String> = request
        .pins
        .iter()
        .map(|p| format!("{}=={}", p.name, p.version))
        .collect();
    packages.sort();
    let mut installed = Installed {
        packages,
        downloaded: 0,
        site_packages: site_packages_dir,
        python: venv.python_executable().to_path_buf(),
        python_version: format!(
            "{}.{}",
            session.interpreter.python_major(),
            session.interpreter.python_minor()
        ),
        base_python: session.interpreter.sys_executable().to_path_buf(),
    };
    if !request.pins.is_empty() {
        installed.downloaded = install_locked(&request, &session, &venv, &hasher).await?;
    }
    Ok(installed)
}

/// Resolves the pins again with dependencies off (each `name==version` to the file uv would
/// pick, its hash checked), then downloads or links and installs them; returns how many came
/// from the network.
async fn install_locked(
    request: &InstallRequest,
    session: &Session,
    venv: &uv_python::PythonEnvironment,
    hasher: &HashStrategy,
) -> Result<usize, EngineError> {
    let state = SharedState::default();
    let in_memory_index = state.index().clone();
    let dispatch = session.dispatch(state, ExcludeNewer::default());
    let options = OptionsBuilder::new()
        .resolution_mode(ResolutionMode::Highest)
        .prerelease(Prerelease::default())
        .fork_strategy(ForkStrategy::default())
        .dependency_mode(DependencyMode::Direct)
        .index_strategy(INDEX_STRATEGY)
        .build_options(session.build_options.clone())
        .build();
    let resolution = session
        .resolve(
            &dispatch,
            &in_memory_index,
            (locked_requirements(&request.pins), Vec::new()),
            Preferences::default(),
            options,
            hasher,
        )
        .await
        .map_err(|e| match e {
            ResolveError::NoSolution(err) => EngineError::Other(format!(
                "a locked package is no longer available from {}: {}",
                request.index.primary(),
                anstream::adapter::strip_str(err.report())
            )),
            other => engine::classify(&request.index, &other),
        })?;

    let site_packages =
        SitePackages::from_environment(venv).map_err(|e| EngineError::failed(e.as_ref()))?;
    let plan = Planner::new(&resolution)
        .build(
            site_packages,
            InstallationStrategy::Permissive,
            &Reinstall::None,
            &session.build_options,
            hasher,
            &session.index_locations,
            &Default::default(),
            &Default::default(),
            &Default::default(),
            &Default::default(),
            &session.cache,
            venv,
            &session.tags,
        )
        .map_err(|e| EngineError::failed(e.as_ref()))?;
    let downloaded = plan.remote.len();
    let wheels = if plan.remote.is_empty() {
        Vec::new()
    } else {
        let preparer = Preparer::new(
            &session.cache,
            &session.tags,
            hasher,
            &session.build_options,
            DistributionDatabase::new(
                &session.client,
                &dispatch,
                session.concurrency.downloads_semaphore.clone(),
            ),
        );
        preparer
            .prepare(plan.remote.clone(), &InFlight::default(), &resolution)
            .await
            .map_err(|e| engine::classify(&request.index, &e))?
    };
    let installs: Vec<_> = wheels.into_iter().chain(plan.cached).collect();
    if !installs.is_empty() {
        Installer::new(venv, Preview::default())
            .with_cache(&session.cache)
            .with_installer_name(Some("hermes-plugins".to_string()))
            .install_blocking(installs)
            .map_err(|e| EngineError::failed(e.as_ref()))?;
    }
    Ok(downloaded)
}

/// The `site-packages` directory of a venv made for `python_version` (`3.11`), relative to the
/// venv root, as uv lays it out: `lib/python3.11/site-packages` on POSIX, `Lib/site-packages`
/// on Windows.
pub fn site_packages_relative(python_version: &str) -> PathBuf {
    if cfg!(windows) {
        return Path::new("Lib").join("site-packages");
    }
    Path::new("lib")
        .join(format!("python{python_version}"))
        .join("site-packages")
}
