//! The uv-facing part of resolution: everything that touches uv's crates (`=0.0.72`, uv
//! 0.12.5) lives here, wired the way `uv pip compile` wires them for one target interpreter.
//!
//! Input: registry requirements, preferred versions, per-package exclude-newer cutoffs, index
//! configuration, the interpreter. Output: the resolved packages (version, chosen file, hash,
//! index) and the dependency edges — or, when there is no solution, uv's report plus what the
//! index says about the packages involved (versions and upload times), so that the caller can
//! explain the conflict in plugin terms.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::str::FromStr;

use uv_cache::Cache;
use uv_client::{
    AuthIntegration, BaseClientBuilder, Connectivity, FlatIndexClient, MetadataFormat,
    RegistryClient, RegistryClientBuilder,
};
use uv_configuration::{
    BuildOptions, Concurrency, Constraints, Excludes, IndexStrategy, KeyringProviderType,
    NoSources, Overrides,
};
use uv_dispatch::{BuildDispatch, SharedState};
use uv_distribution::DistributionDatabase;
use uv_distribution_types::{
    ConfigSettings, DependencyMetadata, Dist, ExtraBuildRequires, ExtraBuildVariables, Index,
    IndexCapabilities, IndexLocations, IndexUrl, Name, Node, PackageConfigSettings, Resolution,
    ResolvedDist,
};
use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_pep508::{Requirement, VerbatimUrl, VersionOrUrl};
use uv_preview::Preview;
use uv_pypi_types::Conflicts;
use uv_python::Interpreter;
use uv_resolver::{
    DependencyMode, ExcludeNewer, ExcludeNewerOverride, ExcludeNewerValue, Exclusions, FlatIndex,
    ForkStrategy, Manifest, OptionsBuilder, Preference, Preferences, Prerelease, PythonRequirement,
    ResolutionMode, ResolveError, Resolver, ResolverEnvironment,
};
use uv_types::{BuildIsolation, EmptyInstalledPackages, HashStrategy, SourceTreeEditablePolicy};
use uv_workspace::WorkspaceCache;

/// Where packages come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexConfig {
    /// The primary index (`--index-url`); PyPI when absent and nothing else is given.
    pub index_url: Option<String>,
    /// Further indexes (`--extra-index-url`).
    pub extra_index_urls: Vec<String>,
    /// Directories or pages of distributions (`--find-links`): added to the indexes, as uv
    /// adds them (they replace nothing).
    pub find_links: Vec<String>,
    /// `--no-index`: no index at all, only the `find_links` locations (uv's meaning).
    pub no_index: bool,
    /// `--offline`: nothing is fetched over the network; only uv's cache and local
    /// locations answer (uv's meaning).
    pub offline: bool,
    /// Trust the operating system's certificate store instead of the bundled Mozilla roots
    /// (`--native-tls`, `UV_NATIVE_TLS`), as uv does. `SSL_CERT_FILE`/`SSL_CERT_DIR`, when
    /// set, replace both.
    pub native_tls: bool,
    /// How long a connection and a stalled response may take.
    pub timeouts: HttpTimeouts,
}

/// HTTP timeouts for indexes and downloads (`UV_HTTP_CONNECT_TIMEOUT`, `UV_HTTP_TIMEOUT`, as
/// uv reads them); uv's defaults otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpTimeouts {
    /// Connecting.
    pub connect: std::time::Duration,
    /// Between bytes of a response (a stalled server fails after this long).
    pub read: std::time::Duration,
}

impl Default for HttpTimeouts {
    fn default() -> Self {
        HttpTimeouts {
            connect: uv_client::DEFAULT_CONNECT_TIMEOUT,
            read: uv_client::DEFAULT_READ_TIMEOUT,
        }
    }
}

impl IndexConfig {
    /// Only these local directories, nothing fetched: what installing admitted wheels and
    /// an offline Nix build use.
    pub fn local_only(dirs: Vec<String>, timeouts: HttpTimeouts) -> IndexConfig {
        IndexConfig {
            find_links: dirs,
            no_index: true,
            offline: true,
            timeouts,
            ..IndexConfig::default()
        }
    }

    /// The URL shown in messages for the primary index (the first location under
    /// `--no-index`).
    pub fn primary(&self) -> String {
        if self.no_index {
            return self
                .find_links
                .first()
                .cloned()
                .unwrap_or_else(|| "no index (--no-index)".to_string());
        }
        self.index_url
            .clone()
            .unwrap_or_else(|| "https://pypi.org/simple".to_string())
    }
}

/// Where uv keeps what it learns.
///
/// Downloads, index metadata and unpacked wheels stay in the home (`pm/cache/uv`): installs
/// hard-link from there, so it must share the home's file system. What uv learns about an
/// interpreter (its markers and tags, one `python -c …` of 50–90 ms) is a fact of the
/// machine, keyed by the interpreter's path and modification time, so it may live in a cache
/// every home shares (`interpreters`, the user's cache directory), as uv keeps it in its
/// own: the first publication of a new home or profile then does not query again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UvCache {
    /// The home's uv cache.
    pub home: PathBuf,
    /// The machine-wide cache for interpreter facts (`None`: the home's cache).
    pub interpreters: Option<PathBuf>,
}

impl UvCache {
    /// Everything in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> UvCache {
        UvCache {
            home: dir.into(),
            interpreters: None,
        }
    }
}

/// One resolution to run.
#[derive(Debug, Clone)]
pub struct EngineRequest {
    /// The target interpreter.
    pub python: PathBuf,
    /// uv's caches.
    pub cache: UvCache,
    /// Index configuration.
    pub index: IndexConfig,
    /// Registry requirements (markers are evaluated for the target interpreter).
    pub requirements: Vec<Requirement<VerbatimUrl>>,
    /// Versions to keep when they still satisfy everything.
    pub preferences: Vec<(PackageName, Version)>,
    /// Versions a package must have if anything requires it (an installed Hermes's
    /// distributions), without requiring it.
    pub constraints: Vec<Requirement<VerbatimUrl>>,
    /// Per-package upload-time cutoffs; packages not listed have none.
    pub cutoffs: BTreeMap<PackageName, jiff::Timestamp>,
}

/// Facts about the target interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonInfo {
    /// The interpreter path as given.
    pub path: PathBuf,
    /// Full version (`3.11.7`).
    pub version: String,
    /// `cpython`, `pypy`, …
    pub implementation: String,
    /// `sys_platform` marker value.
    pub sys_platform: String,
    /// `platform_machine` marker value.
    pub platform_machine: String,
}

/// Whether a chosen file is a wheel or a source distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A built wheel.
    Wheel,
    /// A source distribution.
    Sdist,
}

/// One resolved package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPackage {
    /// Normalised name.
    pub name: PackageName,
    /// Chosen version.
    pub version: Version,
    /// The index URL it comes from.
    pub index: Option<String>,
    /// Wheel or sdist.
    pub kind: FileKind,
    /// The file name.
    pub filename: Option<String>,
    /// The file URL.
    pub url: Option<String>,
    /// `sha256` digest (hex), when the index provides one.
    pub sha256: Option<String>,
}

/// A successful resolution.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The interpreter resolved for.
    pub python: PythonInfo,
    /// Packages, sorted by name.
    pub packages: Vec<ResolvedPackage>,
    /// Dependency edges: `None` is the set of input requirements.
    pub edges: Vec<(Option<PackageName>, PackageName)>,
}

/// A version of a package as the index lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The version.
    pub version: Version,
    /// The latest upload time among its files (milliseconds since the epoch), if known.
    pub uploaded_ms: Option<i64>,
}

/// What uv reports when the requirements cannot be satisfied together.
#[derive(Debug)]
pub struct NoSolution {
    /// uv's explanation (no colours).
    pub report: String,
    /// uv's hints (no colours).
    pub hints: Vec<String>,
    /// Every package named in the derivation.
    pub packages: Vec<PackageName>,
    /// What the index lists for those packages.
    pub listed: BTreeMap<PackageName, Vec<Listed>>,
    /// The interpreter.
    pub python: PythonInfo,
}

/// Why resolution failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The requirements cannot be satisfied together.
    #[error("no solution: {}", .0.report)]
    NoSolution(Box<NoSolution>),
    /// The interpreter could not be queried.
    #[error("cannot use the Python interpreter {path}: {message}")]
    Interpreter {
        /// The interpreter path.
        path: PathBuf,
        /// What went wrong.
        message: String,
        /// The errors that caused it, outermost first.
        causes: Vec<String>,
    },
    /// The index could not be reached or read.
    #[error("cannot read the package index {url}: {message}")]
    Index {
        /// The index URL.
        url: String,
        /// What went wrong.
        message: String,
        /// The errors that caused it, outermost first.
        causes: Vec<String>,
    },
    /// A wheel could not be downloaded (the connection, the server's answer, a stall).
    #[error("cannot download {url}: {message}")]
    Download {
        /// The wheel's URL.
        url: String,
        /// What went wrong.
        message: String,
        /// The errors that caused it, outermost first.
        causes: Vec<String>,
    },
    /// uv failed for another reason (cache, build, install), with what caused it.
    #[error("{message}")]
    Failed {
        /// What failed.
        message: String,
        /// The errors that caused it, outermost first.
        causes: Vec<String>,
    },
    /// Anything else (invalid configuration, a thread gone).
    #[error("{0}")]
    Other(String),
}

impl EngineError {
    /// The stable code of this failure: the index (`network`), the interpreter, or the
    /// environment.
    pub fn code(&self) -> crate::exit::Code {
        use crate::exit::Code;
        match self {
            EngineError::Index { .. } | EngineError::Download { .. } => Code::Network,
            EngineError::Interpreter { .. } => Code::Interpreter,
            _ => Code::Environment,
        }
    }

    /// The errors that caused this one, outermost first (empty when it is its own cause).
    pub fn causes(&self) -> Vec<String> {
        match self {
            EngineError::Index { causes, .. }
            | EngineError::Download { causes, .. }
            | EngineError::Failed { causes, .. }
            | EngineError::Interpreter { causes, .. } => causes.clone(),
            _ => Vec::new(),
        }
    }

    /// uv failed: its error's text and its causes (colour codes stripped).
    pub fn failed(error: &(dyn std::error::Error + 'static)) -> EngineError {
        let (message, causes) = explain(error);
        EngineError::Failed { message, causes }
    }

    /// The index `url` could not be used: the error's text and its causes.
    pub fn index(url: String, error: &(dyn std::error::Error + 'static)) -> EngineError {
        let (message, causes) = explain(error);
        EngineError::Index {
            url,
            message,
            causes,
        }
    }
}

/// An error's own words and the chain below it (see [`crate::exit::layers`]), colour codes
/// stripped.
pub fn explain(error: &(dyn std::error::Error + 'static)) -> (String, Vec<String>) {
    let mut layers = crate::exit::layers(error).into_iter().map(|l| strip(&l));
    let message = layers.next().unwrap_or_else(|| strip(&error.to_string()));
    (message, layers.collect())
}

/// Whether a resolver error is the network's: uv's client error, at the top or anywhere in
/// the chain (typed); for errors uv wraps as text only, the words its client uses.
fn is_network(error: &ResolveError) -> bool {
    matches!(error, ResolveError::Client(_)) || chain_is_network(error)
}

/// Whether an error of uv is the network's: a `uv_client::Error` or a connection-level
/// `io::Error` anywhere below it; for errors uv wraps as text only, the words its client uses.
fn chain_is_network(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = error.source();
    while let Some(cause) = next {
        if cause.downcast_ref::<uv_client::Error>().is_some()
            || cause.downcast_ref::<std::io::Error>().is_some_and(|io| {
                matches!(
                    io.kind(),
                    std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::HostUnreachable
                        | std::io::ErrorKind::NetworkUnreachable
                )
            })
        {
            return true;
        }
        next = cause.source();
    }
    let text = crate::exit::causes(error).join(" ") + &error.to_string();
    [
        "error sending request",
        "Connection refused",
        "dns error",
        "Failed to fetch",
        "Could not connect",
    ]
    .iter()
    .any(|w| text.contains(w))
}

fn other(e: impl std::fmt::Display) -> EngineError {
    EngineError::Other(e.to_string())
}

fn strip(text: &str) -> String {
    anstream::adapter::strip_str(text).to_string()
}

/// Prepares uv's process-wide state (preview flags, the rayon pool). Idempotent.
pub fn initialise() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = uv_preview::set(Preview::default());
        uv_configuration::initialize_rayon_once();
    });
}

/// Runs a resolution on a dedicated runtime thread with a large enough stack.
pub fn resolve(request: EngineRequest) -> Result<Resolved, EngineError> {
    on_uv_thread("resolve", move || resolve_async(request))
}

/// A job for a [`Batch`]: what to resolve and where to send the answer.
type BatchJob = (
    EngineRequest,
    std::sync::mpsc::Sender<Result<Resolved, EngineError>>,
);

/// A resolver kept alive for many resolutions with the same interpreter, index and cutoffs:
/// the index metadata fetched by one is reused by the next (catalog `resolve-all`, bisection).
pub struct Batch {
    jobs: Option<std::sync::mpsc::Sender<BatchJob>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Batch {
    /// Opens the session on its own thread. `template` gives the interpreter, cache, index and
    /// cutoffs every later request shares (its requirements are ignored).
    pub fn start(template: &EngineRequest) -> Result<Batch, EngineError> {
        initialise();
        let (jobs, rx) = std::sync::mpsc::channel::<BatchJob>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), EngineError>>();
        let template = template.clone();
        let stack = uv_configuration::min_stack_size();
        let thread = std::thread::Builder::new()
            .name("hermes-plugins-batch".into())
            .stack_size(stack)
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .thread_stack_size(stack)
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = ready_tx.send(Err(other(e)));
                        return;
                    }
                };
                runtime.block_on(Box::pin(async move {
                    let hasher = HashStrategy::None;
                    let session = match Session::open(
                        &template.python,
                        &template.cache,
                        &template.index,
                        &hasher,
                    )
                    .await
                    {
                        Ok(s) => s,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let exclude_newer = exclude_newer_of(&template.cutoffs);
                    let state = SharedState::default();
                    let in_memory_index = state.index().clone();
                    let dispatch = session.dispatch(state, exclude_newer.clone());
                    let _ = ready_tx.send(Ok(()));
                    while let Ok((request, reply)) = rx.recv() {
                        let result = resolve_in(
                            &session,
                            &dispatch,
                            &in_memory_index,
                            &exclude_newer,
                            &request,
                        )
                        .await;
                        let _ = reply.send(result);
                    }
                }));
                runtime.shutdown_background();
            })
            .map_err(other)?;
        ready_rx
            .recv()
            .unwrap_or_else(|_| Err(EngineError::Other("the batch resolver thread died".into())))?;
        Ok(Batch {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Resolves `requirements` with `preferences` in the shared session.
    pub fn resolve(
        &self,
        requirements: Vec<Requirement<VerbatimUrl>>,
        preferences: Vec<(PackageName, Version)>,
        template: &EngineRequest,
    ) -> Result<Resolved, EngineError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let request = EngineRequest {
            requirements,
            preferences,
            ..template.clone()
        };
        self.jobs
            .as_ref()
            .ok_or_else(|| EngineError::Other("the batch resolver is closed".into()))?
            .send((request, tx))
            .map_err(|_| EngineError::Other("the batch resolver thread died".into()))?;
        rx.recv()
            .unwrap_or_else(|_| Err(EngineError::Other("the batch resolver thread died".into())))
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `work` on a dedicated thread with the stack uv's resolver and installer need and a
/// current-thread Tokio runtime (what every uv-facing operation runs on).
pub fn on_uv_thread<T, F, W>(name: &str, work: W) -> Result<T, EngineError>
where
    T: Send + 'static,
    F: std::future::Future<Output = Result<T, EngineError>>,
    W: FnOnce() -> F + Send + 'static,
{
    initialise();
    let stack = uv_configuration::min_stack_size();
    std::thread::Builder::new()
        .name(format!("hermes-plugins-{name}"))
        .stack_size(stack)
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .thread_stack_size(stack)
                .build()
                .map_err(other)?;
            let result = runtime.block_on(Box::pin(work()));
            runtime.shutdown_background();
            result
        })
        .map_err(other)?
        .join()
        .unwrap_or_else(|_| Err(EngineError::Other(format!("the {name} thread panicked"))))
}

fn preference(name: &PackageName, version: &Version) -> Option<Preference> {
    let requirement: Requirement<uv_pypi_types::VerbatimParsedUrl> =
        format!("{name}=={version}").parse().ok()?;
    Preference::from_entry(uv_requirements_txt::RequirementEntry {
        requirement: uv_requirements_txt::RequirementsTxtRequirement::Named(requirement),
        hashes: Vec::new(),
    })
    .ok()
    .flatten()
}

fn registry_requirement(
    req: &Requirement<VerbatimUrl>,
) -> Result<uv_distribution_types::Requirement, EngineError> {
    let specifier = match &req.version_or_url {
        None => uv_pep440::VersionSpecifiers::empty(),
        Some(VersionOrUrl::VersionSpecifier(s)) => s.clone(),
        Some(VersionOrUrl::Url(u)) => {
            return Err(EngineError::Other(format!(
                "direct-URL requirement {} @ {u} cannot enter the shared resolution",
                req.name
            )));
        }
    };
    Ok(uv_distribution_types::Requirement {
        name: req.name.clone(),
        extras: req.extras.clone(),
        groups: Box::new([]),
        marker: req.marker,
        source: uv_distribution_types::RequirementSource::Registry {
            specifier,
            index: None,
            conflict: None,
        },
        origin: None,
    })
}

fn python_info(path: PathBuf, interpreter: &Interpreter) -> PythonInfo {
    let markers = interpreter.markers();
    PythonInfo {
        path,
        version: interpreter.python_full_version().to_string(),
        implementation: interpreter.implementation_name().to_string(),
        sys_platform: markers.sys_platform().to_string(),
        platform_machine: markers.platform_machine().to_string(),
    }
}

fn client_error(index: &IndexConfig, error: &(dyn std::error::Error + 'static)) -> EngineError {
    EngineError::index(index.primary(), error)
}

/// uv's cache, interpreter, clients and build settings for one interpreter and index
/// configuration: what a resolution and an installation share.
pub struct Session {
    /// uv's cache.
    pub cache: Cache,
    /// The target interpreter.
    pub interpreter: Interpreter,
    /// Facts about it, for messages and the lock.
    pub python: PythonInfo,
    /// The index configuration as given.
    pub index: IndexConfig,
    /// The index configuration as uv sees it.
    pub index_locations: IndexLocations,
    /// The registry client.
    pub client: RegistryClient,
    /// `--find-links` entries.
    pub flat_index: FlatIndex,
    /// The versions the `--find-links` locations offer, by package: what a conflict's
    /// explanation counts as offered besides the indexes' pages.
    pub flat_versions: BTreeMap<PackageName, BTreeSet<Version>>,
    /// Platform tags of the interpreter.
    pub tags: uv_platform_tags::Tags,
    /// Parallelism limits.
    pub concurrency: Concurrency,
    /// Build options (binaries and sources both allowed).
    pub build_options: BuildOptions,
    build_constraints: Constraints,
    dependency_metadata: DependencyMetadata,
    config_settings: ConfigSettings,
    config_settings_package: PackageConfigSettings,
    extra_build_requires: ExtraBuildRequires,
    extra_build_variables: ExtraBuildVariables,
    build_hasher: HashStrategy,
}

/// The I/O error in `error`'s chain that says the disk refused a write (full, read-only,
/// over quota, not permitted), if any.
fn disk_error<'e>(error: &'e (dyn std::error::Error + 'static)) -> Option<&'e std::io::Error> {
    use std::io::ErrorKind;
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                ErrorKind::StorageFull
                    | ErrorKind::ReadOnlyFilesystem
                    | ErrorKind::QuotaExceeded
                    | ErrorKind::PermissionDenied
            )
        {
            return Some(io);
        }
        next = e.source();
    }
    None
}

/// Queries an interpreter once per process (a resolution and the installation that follows
/// share the answer; wrapper scripts such as pyenv shims cost ~100 ms per query, and uv
/// caches no answer for them). uv's answer is kept in the shared interpreter cache when one
/// is given and can be opened, else in `home` (the home's cache).
/// The home's uv cache, opened, and what uv knows of `python` (see [`query_interpreter`]).
pub async fn open_interpreter(
    python: &std::path::Path,
    caches: &UvCache,
) -> Result<(Cache, Interpreter), EngineError> {
    let cache = Cache::from_path(&caches.home).init().await.map_err(other)?;
    let interpreter = query_interpreter(python, &cache, caches.interpreters.as_deref()).await?;
    Ok((cache, interpreter))
}

async fn query_interpreter(
    python: &std::path::Path,
    home: &Cache,
    shared: Option<&std::path::Path>,
) -> Result<Interpreter, EngineError> {
    static SEEN: std::sync::Mutex<BTreeMap<PathBuf, Interpreter>> =
        std::sync::Mutex::new(BTreeMap::new());
    if let Some(found) = SEEN.lock().ok().and_then(|m| m.get(python).cloned()) {
        return Ok(found);
    }
    let shared = match shared {
        Some(dir) => match Cache::from_path(dir).init().await {
            Ok(cache) => Some(cache),
            Err(e) => {
                // A read-only or missing user cache costs one query, nothing else.
                tracing::debug!(
                    "interpreter facts kept in the home's cache: {} cannot be used ({e})",
                    dir.display()
                );
                None
            }
        },
        None => None,
    };
    let mut cache = shared.as_ref().unwrap_or(home);
    let mut answer = Interpreter::query(python, cache);
    if let Err(e) = &answer
        && cache.root() != home.root()
        && disk_error(e).is_some()
    {
        // The user's cache is on a full or read-only disk: the home's is asked instead.
        cache = home;
        answer = Interpreter::query(python, cache);
    }
    let interpreter = answer.map_err(|e| {
        let (message, causes) = explain(&e);
        // uv caches what it learns about the interpreter: a full or read-only disk fails the
        // query, and the interpreter is not to blame.
        if let Some(disk) = disk_error(&e) {
            return EngineError::Failed {
                message: format!(
                    "cannot write uv's cache under {} ({})",
                    cache.root().display(),
                    disk.kind()
                ),
                causes,
            };
        }
        EngineError::Interpreter {
            path: python.to_path_buf(),
            message,
            causes,
        }
    })?;
    if let Ok(mut m) = SEEN.lock() {
        m.insert(python.to_path_buf(), interpreter.clone());
    }
    Ok(interpreter)
}

/// Finds the interpreter a request names as uv does: a version (`3.11`, `>=3.10`), a name on
/// `PATH` (`python3`, `python3.12`), an implementation (`cpython@3.12`), or a path; virtual
/// environments and uv-managed interpreters count. Returns its executable. What uv learns
/// about the interpreters it looks at is kept in `shared` (see [`UvCache`]) when given and
/// usable, else forgotten with the process.
pub fn find_interpreter(
    request: &str,
    shared: Option<&std::path::Path>,
) -> Result<PathBuf, EngineError> {
    let not_found = |error: &(dyn std::error::Error + 'static)| {
        let (message, causes) = explain(error);
        EngineError::Interpreter {
            path: PathBuf::from(request),
            message,
            causes,
        }
    };
    let cache = match shared.and_then(|dir| Cache::from_path(dir).init_no_wait().ok().flatten()) {
        Some(cache) => cache,
        None => Cache::temp().map_err(|e| not_found(&e))?,
    };
    let parsed = uv_python::PythonRequest::parse(request);
    let found = uv_python::PythonInstallation::find_existing(
        &parsed,
        uv_python::EnvironmentPreference::Any,
        uv_python::PythonPreference::Managed,
        &cache,
    )
    .map_err(|e| not_found(&e))?;
    let interpreter = found.into_interpreter();
    Ok(interpreter.sys_executable().to_path_buf())
}

/// `SSL_CERT_FILE` / `SSL_CERT_DIR`, read once per process: parsing a system bundle and
/// directory (hundreds of certificates) took 4–9 ms, and one install opens a session for the
/// release, the wheels and the environment.
fn certificates_from_env() -> Option<&'static uv_client::Certificates> {
    static CERTIFICATES: std::sync::OnceLock<Option<uv_client::Certificates>> =
        std::sync::OnceLock::new();
    CERTIFICATES
        .get_or_init(uv_client::Certificates::from_env)
        .as_ref()
}

/// The index strategy used everywhere (uv's default: the first index that has a package).
pub const INDEX_STRATEGY: IndexStrategy = IndexStrategy::FirstIndex;

impl Session {
    /// Opens the cache, queries the interpreter and builds the clients. `hasher` decides
    /// which `--find-links` files are acceptable.
    pub async fn open(
        python: &std::path::Path,
        caches: &UvCache,
        index: &IndexConfig,
        hasher: &HashStrategy,
    ) -> Result<Session, EngineError> {
        let (cache, interpreter) = open_interpreter(python, caches).await?;
        let info = python_info(python.to_path_buf(), &interpreter);
        let tags = interpreter.tags().map_err(other)?.clone();

        // Indexes, exactly as `uv pip compile --index-url … --extra-index-url … --find-links …
        // [--no-index]`: find-links locations are added to the indexes (PyPI by default), and
        // only `--no-index` leaves them alone.
        let mut indexes = Vec::new();
        if let Some(url) = index.index_url.as_ref().filter(|_| !index.no_index) {
            indexes
                .push(Index::from_index_url(IndexUrl::from_str(url).map_err(
                    |e| other(format!("invalid index URL {url}: {e}")),
                )?));
        }
        for url in index.extra_index_urls.iter().filter(|_| !index.no_index) {
            indexes.push(Index::from_extra_index_url(
                IndexUrl::from_str(url)
                    .map_err(|e| other(format!("invalid index URL {url}: {e}")))?,
            ));
        }
        let flat = index
            .find_links
            .iter()
            .map(|f| {
                IndexUrl::parse(f, None)
                    .map(Index::from_find_links)
                    .map_err(|e| other(format!("invalid --find-links {f}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let index_locations = IndexLocations::new(indexes, flat, index.no_index);

        // The network as uv sees it: SSL_CERT_FILE/SSL_CERT_DIR, the system store on request,
        // proxies from HTTP(S)_PROXY/ALL_PROXY/NO_PROXY (reqwest reads them), and credentials
        // as uv finds them (URL userinfo, NETRC or ~/.netrc) through uv's auth middleware; the
        // keyring is never asked. uv's crates read these variables themselves.
        let mut base = BaseClientBuilder::default().with_system_certs(index.native_tls);
        if let Some(certificates) = certificates_from_env() {
            base = base.custom_certificates(certificates.clone());
        }
        let base = base
            .connectivity(if index.offline {
                Connectivity::Offline
            } else {
                Connectivity::Online
            })
            .keyring(KeyringProviderType::Disabled)
            .auth_integration(AuthIntegration::Default)
            .connect_timeout(index.timeouts.connect)
            .read_timeout(index.timeouts.read)
            .retries(1);
        let client = RegistryClientBuilder::new(base, cache.clone())
            .index_locations(index_locations.clone())
            .index_strategy(INDEX_STRATEGY)
            .markers(interpreter.markers())
            .platform(interpreter.platform())
            .build()
            .map_err(other)?;

        let build_options = BuildOptions::default();
        let mut flat_versions: BTreeMap<PackageName, BTreeSet<Version>> = BTreeMap::new();
        let flat_index = {
            let flat_client =
                FlatIndexClient::new(client.cached_client(), client.connectivity(), &cache);
            let entries = flat_client
                .fetch_all(index_locations.flat_indexes().map(Index::url))
                .await
                .map_err(|e| client_error(index, &e))?;
            for entry in entries.clone().into_parts().0 {
                let (filename, ..) = entry.into_parts();
                flat_versions
                    .entry(filename.name().clone())
                    .or_default()
                    .insert(filename.version().clone());
            }
            FlatIndex::from_entries(entries, Some(&tags), hasher, &build_options)
        };
        Ok(Session {
            cache,
            interpreter,
            python: info,
            index: index.clone(),
            index_locations,
            client,
            flat_index,
            flat_versions,
            tags,
            concurrency: Concurrency::default(),
            build_options,
            build_constraints: Constraints::default(),
            dependency_metadata: DependencyMetadata::default(),
            config_settings: ConfigSettings::default(),
            config_settings_package: PackageConfigSettings::default(),
            extra_build_requires: ExtraBuildRequires::default(),
            extra_build_variables: ExtraBuildVariables::default(),
            build_hasher: HashStrategy::None,
        })
    }

    /// The build dispatch (how source distributions get built), with its shared in-memory
    /// state.
    pub fn dispatch(&self, state: SharedState, exclude_newer: ExcludeNewer) -> BuildDispatch<'_> {
        BuildDispatch::new(
            &self.client,
            &self.cache,
            &self.build_constraints,
            &self.interpreter,
            &self.index_locations,
            &self.flat_index,
            &self.dependency_metadata,
            state,
            INDEX_STRATEGY,
            &self.config_settings,
            &self.config_settings_package,
            BuildIsolation::Isolated,
            &self.extra_build_requires,
            &self.extra_build_variables,
            Default::default(),
            &self.build_options,
            &self.build_hasher,
            exclude_newer,
            NoSources::None,
            SourceTreeEditablePolicy::Project,
            WorkspaceCache::default(),
            self.concurrency.clone(),
            Preview::default(),
        )
    }

    /// A resolver over `requirements` for this interpreter, then its resolution.
    pub async fn resolve(
        &self,
        dispatch: &BuildDispatch<'_>,
        in_memory_index: &uv_resolver::InMemoryIndex,
        (requirements, constraints): (
            Vec<uv_distribution_types::Requirement>,
            Vec<uv_distribution_types::Requirement>,
        ),
        preferences: Preferences,
        options: uv_resolver::Options,
        hasher: &HashStrategy,
    ) -> Result<Resolution, ResolveError> {
        let resolver_env =
            ResolverEnvironment::specific(self.interpreter.to_resolver_marker_environment());
        let python_requirement = PythonRequirement::from_interpreter(&self.interpreter);
        // `hermes-agent` is core, never a package to install: a plugin's dependency on it
        // (direct, or of a distribution it requires) is judged against core, not resolved.
        let hermes_agent = PackageName::from_str("hermes-agent").expect("a valid package name");
        let manifest = Manifest::new(
            requirements,
            Constraints::from_requirements(constraints.into_iter()),
            Overrides::default(),
            Excludes::from_entries([uv_configuration::ExcludeDependency::Dependency(
                hermes_agent,
            )]),
            preferences,
            None,
            BTreeSet::new(),
            Exclusions::default(),
            Vec::new(),
        );
        let resolver = Resolver::new(
            manifest,
            options,
            &python_requirement,
            resolver_env,
            self.interpreter.markers(),
            Conflicts::empty(),
            Some(&self.tags),
            &self.flat_index,
            in_memory_index,
            hasher,
            dispatch,
            EmptyInstalledPackages,
            DistributionDatabase::new(
                &self.client,
                dispatch,
                self.concurrency.downloads_semaphore.clone(),
            ),
        )?;
        Ok(Resolution::from(resolver.resolve().await?))
    }
}

/// The resolver environment for this session's interpreter.
pub fn resolver_environment(interpreter: &Interpreter) -> ResolverEnvironment {
    ResolverEnvironment::specific(interpreter.to_resolver_marker_environment())
}

async fn resolve_async(request: EngineRequest) -> Result<Resolved, EngineError> {
    let hasher = HashStrategy::None;
    let session = Session::open(&request.python, &request.cache, &request.index, &hasher).await?;
    let exclude_newer = exclude_newer_of(&request.cutoffs);
    let state = SharedState::default();
    let in_memory_index = state.index().clone();
    let build_dispatch = session.dispatch(state, exclude_newer.clone());
    resolve_in(
        &session,
        &build_dispatch,
        &in_memory_index,
        &exclude_newer,
        &request,
    )
    .await
}

fn exclude_newer_of(cutoffs: &BTreeMap<PackageName, jiff::Timestamp>) -> ExcludeNewer {
    let mut exclude_newer = ExcludeNewer::default();
    for (name, cutoff) in cutoffs {
        exclude_newer.package.insert(
            name.clone(),
            ExcludeNewerOverride::Enabled(Box::new(ExcludeNewerValue::Absolute(*cutoff))),
        );
    }
    exclude_newer
}

/// One resolution inside an open session (its requirements and preferences from `request`;
/// the session's cutoffs must be `request.cutoffs`).
async fn resolve_in(
    session: &Session,
    build_dispatch: &BuildDispatch<'_>,
    in_memory_index: &uv_resolver::InMemoryIndex,
    exclude_newer: &ExcludeNewer,
    request: &EngineRequest,
) -> Result<Resolved, EngineError> {
    let hasher = HashStrategy::None;
    let python = session.python.clone();
    let client = &session.client;
    let concurrency = &session.concurrency;
    let resolver_env = resolver_environment(&session.interpreter);
    let requirements = request
        .requirements
        .iter()
        .map(registry_requirement)
        .collect::<Result<Vec<_>, _>>()?;
    let constraints = request
        .constraints
        .iter()
        .map(registry_requirement)
        .collect::<Result<Vec<_>, _>>()?;
    let preferences = Preferences::from_iter(
        request
            .preferences
            .iter()
            .filter_map(|(n, v)| preference(n, v)),
        &resolver_env,
    );
    let options = OptionsBuilder::new()
        .resolution_mode(ResolutionMode::Highest)
        .prerelease(Prerelease::default())
        .fork_strategy(ForkStrategy::default())
        .dependency_mode(DependencyMode::Transitive)
        .exclude_newer(exclude_newer.clone())
        .index_strategy(INDEX_STRATEGY)
        .build_options(session.build_options.clone())
        .build();
    match session
        .resolve(
            build_dispatch,
            in_memory_index,
            (requirements, constraints),
            preferences,
            options,
            &hasher,
        )
        .await
    {
        Ok(resolution) => Ok(collect(python, resolution)),
        Err(ResolveError::NoSolution(err)) => {
            use uv_errors::Hint as _;
            let report = strip(err.report());
            let hints: Vec<String> = err.hints().into_iter().map(|h| strip(&h)).collect();
            let packages: Vec<PackageName> = {
                let set: BTreeSet<PackageName> = err.packages().cloned().collect();
                set.into_iter().collect()
            };
            let mut listed = BTreeMap::new();
            let capabilities = IndexCapabilities::default();
            for name in &packages {
                // Offered: what the indexes list, and what the `--find-links` locations hold
                // (no upload time there).
                let found = client
                    .simple_detail(name, None, &capabilities, &concurrency.downloads_semaphore)
                    .await
                    .unwrap_or_default();
                let mut versions: BTreeMap<Version, Option<i64>> = session
                    .flat_versions
                    .get(name)
                    .into_iter()
                    .flatten()
                    .map(|v| (v.clone(), None))
                    .collect();
                for (_, format) in found {
                    if let MetadataFormat::Simple(archive) = format {
                        for datum in uv_client::OwnedArchive::deserialize(&archive) {
                            let latest = datum
                                .files
                                .all(name)
                                .filter_map(|(_, f)| f.upload_time_utc_ms)
                                .max();
                            let entry = versions.entry(datum.version.clone()).or_insert(None);
                            *entry = (*entry).max(latest);
                        }
                    }
                }
                listed.insert(
                    name.clone(),
                    versions
                        .into_iter()
                        .map(|(version, uploaded_ms)| Listed {
                            version,
                            uploaded_ms,
                        })
                        .collect(),
                );
            }
            Err(EngineError::NoSolution(Box::new(NoSolution {
                report,
                hints,
                packages,
                listed,
                python,
            })))
        }
        Err(e) => Err(classify_error(&request.index, e)),
    }
}

fn classify_error(index: &IndexConfig, error: ResolveError) -> EngineError {
    if is_network(&error) {
        client_error(index, &error)
    } else {
        EngineError::failed(&error)
    }
}

/// Any uv error while installing: the index's when the network failed (see
/// [`chain_is_network`]), else uv's own failure — with its causes either way.
pub fn classify(index: &IndexConfig, error: &(dyn std::error::Error + 'static)) -> EngineError {
    if chain_is_network(error) {
        client_error(index, error)
    } else {
        EngineError::failed(error)
    }
}

/// The sha256 of the one file the resolution chose. uv's graph carries the hashes of *every*
/// file of the version (sdist and all wheels: what `--generate-hashes` writes), in no order
/// that says which is which, so taking the first of them locked the sdist's hash for a wheel
/// on nearly every PyPI release. The chosen file's own digests are on its `File`; a file
/// without one (a `--find-links` directory) is hashed from disk, as uv does for local files,
/// so the lock pins it too. Nothing known stays `None` (the installer then says so).
fn chosen_file_sha256(
    file: Option<&uv_distribution_types::File>,
    version_hashes: &uv_pypi_types::HashDigests,
) -> Option<String> {
    let file = file?;
    if let Some(own) = file
        .hashes
        .iter()
        .find(|h| h.algorithm() == uv_pypi_types::HashAlgorithm::Sha256)
    {
        return Some(own.digest.to_string());
    }
    // A local file: hash what is on disk. The bound only keeps a runaway file from being
    // read forever; the installer applies its own (configurable) cap when admitting it.
    const LOCAL_FILE_LIMIT: u64 = 16 << 30;
    if let Ok(url) = file.url.to_url()
        && url.scheme() == "file"
        && let Ok(path) = url.to_file_path()
    {
        return crate::hash::sha256_file_bounded(&path, LOCAL_FILE_LIMIT)
            .ok()
            .map(|digest| crate::hash::hex(&digest));
    }
    // A version whose only listed digest is one file's (a single-file release) is unambiguous.
    let sha256: Vec<_> = version_hashes
        .iter()
        .filter(|h| h.algorithm() == uv_pypi_types::HashAlgorithm::Sha256)
        .collect();
    match sha256.as_slice() {
        [only] => Some(only.digest.to_string()),
        _ => None,
    }
}

fn collect(python: PythonInfo, resolution: Resolution) -> Resolved {
    let graph = resolution.graph();
    let mut packages = Vec::new();
    for ix in graph.node_indices() {
        let Node::Dist { dist, hashes, .. } = &graph[ix] else {
            continue;
        };
        let ResolvedDist::Installable { dist: d, .. } = dist else {
            continue;
        };
        let Some(version) = dist.version().cloned() else {
            continue;
        };
        let file = d.file();
        let sha256 = chosen_file_sha256(file, hashes);
        packages.push(ResolvedPackage {
            name: dist.name().clone(),
            version,
            index: dist.index().map(|i| i.to_string()),
            kind: match d.as_ref() {
                Dist::Built(_) => FileKind::Wheel,
                Dist::Source(_) => FileKind::Sdist,
            },
            filename: file.map(|f| f.filename.to_string()),
            url: file
                .and_then(|f| f.url.to_url().ok())
                .map(|u| u.to_string()),
            sha256,
        });
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    let mut edges = Vec::new();
    for e in graph.edge_indices() {
        let Some((from, to)) = graph.edge_endpoints(e) else {
            continue;
        };
        let Node::Dist { dist: child, .. } = &graph[to] else {
            continue;
        };
        let parent = match &graph[from] {
            Node::Root => None,
            Node::Dist { dist, .. } => Some(dist.name().clone()),
        };
        edges.push((parent, child.name().clone()));
    }
    edges.sort();
    edges.dedup();
    Resolved {
        python,
        packages,
        edges,
    }
}
