//! What the package-manager commands share: their options (environment, plan, grants),
//! building a [`Context`], and mapping [`ManagerError`] to exit statuses. The environment
//! itself is [`super::environment`]; prompts and progress are [`super::terminal`] (both
//! re-exported here).

use super::env_vars::EnvVars;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use crate::generation::wheels::WheelLimits;
use crate::home::Layout;
use crate::manager::{Context, LockMode, ManagerError};
use crate::resolve::engine::IndexConfig;
use crate::resolve::quarantine::DEFAULT_DAYS;
use crate::source::remote_catalog::OFFICIAL_FEED;
use crate::source::{CatalogDir, FetchOptions};
use crate::state::settings::Settings;

use super::conflict::print_conflict;
use super::error::CliError;
use super::global::GlobalArgs;

pub use super::environment::{
    Environment, Origin, ResolverArgs, detect_hermes, env_list, find_python,
};
pub use super::terminal::{StderrFeedback, TerminalPrompter, interactive, print_plan};

/// Options of the commands that may build a generation.
#[derive(Debug, Clone, Args)]
pub struct EnvArgs {
    /// Resolution options.
    #[command(flatten)]
    pub resolver: ResolverArgs,
    /// Catalog for catalog names and the kill list: a directory, a git URL (`#subdir`) or a
    /// JSON feed URL; repeatable, the first listed has precedence [default:
    /// $HERMES_PLUGINS_CATALOG, space-separated, else the
    /// official feed Hermes reads; `none`: no catalog]
    #[arg(long = "catalog", value_name = "DIR|URL")]
    pub catalogs: Vec<PathBuf>,
    /// Publish plugins whose requires_hermes excludes this core's version (recorded per
    /// plugin and core version, audited)
    #[arg(long)]
    pub ignore_requires_hermes: bool,
    /// Fail (lock-changed) if the generation's lock would change: resolve, but publish only
    /// the current lock
    #[arg(long, conflicts_with = "frozen")]
    pub locked: bool,
    /// Never resolve: install the current generation's lock as it is; refused
    /// (lock-changed) if core's or the plugins' requirements changed since it was resolved
    #[arg(long)]
    pub frozen: bool,
}

/// `--dry-run` and `--plan`: consent as data (see [`crate::manager::plan`]).
#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// Change nothing: print the consent plan — what would be asked, the flags that approve
    /// it, its hash
    #[arg(long, conflicts_with = "plan")]
    pub dry_run: bool,
    /// Apply only if the consent plan is still the one shown (the hash from --dry-run)
    #[arg(long, value_name = "HASH")]
    pub plan: Option<String>,
}

impl PlanArgs {
    /// The mode these flags ask for.
    pub fn mode(&self) -> crate::manager::plan::PlanMode {
        use crate::manager::plan::PlanMode;
        match (&self.plan, self.dry_run) {
            (Some(hash), _) => PlanMode::Expect(hash.clone()),
            (None, true) => PlanMode::Dry,
            (None, false) => PlanMode::Off,
        }
    }
}

/// The Hermes home directory: `--home`, `$HERMES_HOME`, else `~/.hermes` — always absolute
/// (generations record paths relative to it, and the agent may run elsewhere).
pub fn home(global: &GlobalArgs) -> PathBuf {
    home_from(global.home.as_deref())
}

/// The Hermes home `explicit` names, else `~/.hermes`, made absolute.
pub fn home_from(explicit: Option<&Path>) -> PathBuf {
    let home = explicit.map(Path::to_path_buf).unwrap_or_else(|| {
        std::env::var_os(EnvVars::HOME)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".hermes")
    });
    std::path::absolute(&home).unwrap_or(home)
}

/// A named profile must exist (`<home>/profiles/<name>/`): every command acting on one says
/// so with `not-found` (exit 2), as report-format.md lists, rather than showing it empty or
/// creating it. `default` is the home itself, which a first install creates.
pub fn require_profile(layout: &Layout, profile: &str) -> Result<(), CliError> {
    let dir = layout.profile_home(profile);
    if profile == "default" || dir.is_dir() {
        return Ok(());
    }
    Err(CliError::coded(
        super::Code::NotFound,
        format!(
            "there is no profile `{}` ({} does not exist; create it with `hermes profile create {}`)",
            crate::text::escape(profile),
            dir.display(),
            crate::text::escape(profile)
        ),
    ))
}

/// Builds the operation context of a command that may change the home: the environment from
/// flags, `pm/settings.json` and detection; what this first use decided is recorded (unless
/// `record` is false: a dry run changes nothing).
pub fn context(env: &EnvArgs, global: &GlobalArgs, record: bool) -> Result<Context, CliError> {
    let layout = Layout::new(&home(global));
    require_profile(&layout, &global.profile)?;
    let settings_path = layout.settings();
    let mut settings = Settings::read(&settings_path)
        .map_err(|e| CliError::coded(crate::exit::Code::Io, e.to_string()))?;
    let found = env.resolver.environment(&settings)?;
    if record && found.record_into(&mut settings) {
        settings
            .write(&settings_path)
            .map_err(|e| CliError::coded(crate::exit::Code::Io, e.to_string()))?;
    }
    let (mut catalogs, catalog_unreachable) = catalog_dirs(
        &env.catalogs,
        &layout,
        Refresh::from_offline(env.resolver.offline),
        global,
    )?;
    remembered_catalogs(
        &mut catalogs,
        &env.catalogs,
        &layout,
        Refresh::from_offline(env.resolver.offline),
        global,
    )?;
    Ok(Context {
        layout,
        profile: global.profile.clone(),
        core_known: found.core_setting.is_some(),
        core: found.core,
        extras: found.extras,
        python: found.python,
        interpreter_cache: super::env_vars::interpreter_cache(),
        index: found.index,
        quarantine_days: found.quarantine_days,
        now: super::env_vars::now().map_err(CliError::usage)?,
        fetch: FetchOptions {
            github_base: std::env::var(EnvVars::HERMES_PLUGINS_GITHUB)
                .ok()
                .filter(|s| !s.is_empty()),
            catalogs,
            catalog_unreachable,
        },
        wheel_limits: wheel_limits()?,
        lock_wait: lock_wait(global),
        ignore_requires_hermes: env.ignore_requires_hermes,
        resolutions: Default::default(),
        ahead: Default::default(),
        lock_mode: match (env.locked, env.frozen) {
            (_, true) => LockMode::Frozen,
            (true, false) => LockMode::Locked,
            (false, false) => LockMode::Resolve,
        },
        source_date_epoch: super::env_vars::source_date_epoch().map_err(CliError::usage)?,
        env_names: super::env_vars::set_names(),
    })
}

/// The catalogs a command reads, in their order of precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalogs {
    /// The `--catalog` flags given, else `HERMES_PLUGINS_CATALOG` split at whitespace (like
    /// uv's `UV_INDEX`; a value given twice counts once), else the official feed; empty when
    /// the value is `none`.
    pub values: Vec<PathBuf>,
    /// Nothing was configured: `values` is [`OFFICIAL_FEED`] alone, as Hermes itself reads it.
    pub official: bool,
}

/// The catalogs configured by `flags` and the environment (see [`Catalogs`]). `none` turns
/// catalogs off (the official one included); listing it beside others is a usage error.
pub fn catalog_values(flags: &[PathBuf]) -> Result<Catalogs, CliError> {
    let (mut values, origin): (Vec<PathBuf>, &str) = if flags.is_empty() {
        let from_env = std::env::var_os(EnvVars::HERMES_PLUGINS_CATALOG)
            .map(|v| {
                v.to_string_lossy()
                    .split_ascii_whitespace()
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default();
        (from_env, EnvVars::HERMES_PLUGINS_CATALOG)
    } else {
        (flags.to_vec(), "--catalog")
    };
    if values.is_empty() {
        return Ok(Catalogs {
            values: vec![PathBuf::from(OFFICIAL_FEED)],
            official: true,
        });
    }
    if values.iter().any(|v| v.as_os_str() == "none") {
        if values.len() > 1 {
            return Err(CliError::usage(format!(
                "{origin}: `none` turns every catalog off and cannot be listed with others (a directory called none is ./none)"
            )));
        }
        values.clear();
    }
    let mut seen = std::collections::HashSet::new();
    values.retain(|v| seen.insert(v.clone()));
    Ok(Catalogs {
        values,
        official: false,
    })
}

/// [`catalog_values`] for a command that needs at least one catalog: `none` is a usage error.
pub fn required_catalog_values(flags: &[PathBuf]) -> Result<Catalogs, CliError> {
    let catalogs = catalog_values(flags)?;
    if catalogs.values.is_empty() {
        return Err(CliError::usage(
            "no catalog: HERMES_PLUGINS_CATALOG=none turns catalogs off; pass --catalog DIR|URL (repeatable)",
        ));
    }
    Ok(catalogs)
}

/// Every configured catalog ([`catalog_values`] of `flags`) as a local directory, in order
/// (see [`catalog_dir`]); the first that cannot be had is the error — a configured catalog
/// whose kill list is unknown is never skipped. The official catalog, read only because none
/// is configured, is the exception: when it cannot be fetched and no copy is kept, the
/// command goes on with a warning that its kill list was not consulted, and the reason is
/// kept (the second value) for a catalog name to be refused with.
pub fn catalog_dirs(
    flags: &[PathBuf],
    layout: &Layout,
    refresh: Refresh,
    global: &GlobalArgs,
) -> Result<(Vec<CatalogDir>, Option<String>), CliError> {
    let catalogs = catalog_values(flags)?;
    let given = |value: &Path| value.display().to_string();
    if catalogs.official {
        return match fetch_catalog(&catalogs.values[0], layout, refresh, global) {
            Ok(dir) => Ok((
                vec![CatalogDir {
                    dir,
                    given: given(&catalogs.values[0]),
                }],
                None,
            )),
            Err(Unavailable::Fetch(reason)) => {
                global.printer.warning(&format!(
                    "{reason}: its kill list was not consulted (set HERMES_PLUGINS_CATALOG=none to use no catalog, or --catalog DIR|URL for another)"
                ));
                Ok((Vec::new(), Some(reason)))
            }
            Err(Unavailable::Other(e)) => Err(e),
        };
    }
    let dirs = catalogs
        .values
        .iter()
        .map(|value| {
            catalog_dir(value, layout, refresh, global).map(|dir| CatalogDir {
                dir,
                given: given(value),
            })
        })
        .collect::<Result<_, _>>()?;
    Ok((dirs, None))
}

/// The catalogs installed plugins were found in (recorded with each catalog plugin), after the
/// configured ones: a plugin installed with `--catalog DIR` is updated and checked against
/// that catalog without `--catalog` again. Configured catalogs keep their precedence; with
/// `--catalog` flags (the user says which, for this run) or catalogs turned off (`none`),
/// none is added. A recorded catalog that cannot be had is
/// skipped with a warning (the configured ones still decide the kill list).
fn remembered_catalogs(
    catalogs: &mut Vec<CatalogDir>,
    flags: &[PathBuf],
    layout: &Layout,
    refresh: Refresh,
    global: &GlobalArgs,
) -> Result<(), CliError> {
    if !flags.is_empty() || catalog_values(flags)?.values.is_empty() {
        return Ok(());
    }
    let Ok(installed) = crate::state::installed::Installed::read(&layout.installed()) else {
        return Ok(());
    };
    let recorded: std::collections::BTreeSet<String> = installed
        .plugins
        .values()
        .filter_map(|p| p.source.catalog.as_ref()?.catalog.clone())
        .collect();
    for given in recorded {
        if catalogs.iter().any(|c| c.given == given) {
            continue;
        }
        match catalog_dir(Path::new(&given), layout, refresh, global) {
            Ok(dir) => catalogs.push(CatalogDir { dir, given }),
            Err(e) => global.printer.warning(&format!(
                "the catalog {given}, which installed plugins came from, cannot be read: {}",
                e.message
            )),
        }
    }
    Ok(())
}

/// The official catalog's copy when one is kept, fetching nothing; configured catalogs as
/// [`catalog_dirs`] has them. For commands that only read the home (`list`, `show`): they
/// mark removed plugins from the copy at hand and never wait on the network for the default.
pub fn cached_catalog_dirs(
    layout: &Layout,
    global: &GlobalArgs,
) -> Result<Vec<CatalogDir>, CliError> {
    let catalogs = catalog_values(&[])?;
    if catalogs.official {
        let location = crate::source::remote_catalog::Location::Feed(OFFICIAL_FEED.to_string());
        return Ok(
            crate::source::remote_catalog::cached(&location, &layout.catalog_cache())
                .into_iter()
                .map(|dir| CatalogDir {
                    dir,
                    given: OFFICIAL_FEED.to_string(),
                })
                .collect(),
        );
    }
    Ok(catalog_dirs(&[], layout, Refresh::WhenStale, global)?.0)
}

/// The catalog `value` names (`--catalog`, `HERMES_PLUGINS_CATALOG`) as a local directory:
/// a directory as it is; a git URL or a JSON feed fetched into `pm/cache/catalogs` as `refresh`
/// says (older than `HERMES_PLUGINS_CATALOG_TTL` seconds, default 6 h; now; never). A refresh
/// that fails with a copy at hand is a warning naming the copy's age; without one, an error.
pub fn catalog_dir(
    value: &Path,
    layout: &Layout,
    refresh: Refresh,
    global: &GlobalArgs,
) -> Result<PathBuf, CliError> {
    fetch_catalog(value, layout, refresh, global).map_err(|e| match e {
        Unavailable::Fetch(message) if value.as_os_str() == OFFICIAL_FEED => CliError::coded(
            crate::exit::Code::Network,
            format!(
                "{message}; no copy of it is kept. Pass --catalog DIR|URL to use another catalog, or set HERMES_PLUGINS_CATALOG=none to use none"
            ),
        ),
        Unavailable::Fetch(message) => CliError::coded(crate::exit::Code::Network, message),
        Unavailable::Other(e) => e,
    })
}

/// When a remote catalog's copy is fetched again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refresh {
    /// When older than the TTL.
    WhenStale,
    /// Now (`catalog update`).
    Now,
    /// Never (`--offline`): the copy at hand, whatever its age; none is a fetch failure.
    Never,
}

impl Refresh {
    /// [`Refresh::Never`] under `--offline`, else [`Refresh::WhenStale`].
    pub fn from_offline(offline: bool) -> Refresh {
        if offline {
            Refresh::Never
        } else {
            Refresh::WhenStale
        }
    }
}

/// Why [`fetch_catalog`] has no directory: the network (with nothing cached), or anything else.
enum Unavailable {
    Fetch(String),
    Other(CliError),
}

/// [`catalog_dir`] with a fetch failure kept apart from the rest.
fn fetch_catalog(
    value: &Path,
    layout: &Layout,
    refresh: Refresh,
    global: &GlobalArgs,
) -> Result<PathBuf, Unavailable> {
    use crate::source::remote_catalog::{self, Location, RemoteCatalogError};
    let location = match value.to_str() {
        Some(text) => Location::parse(text),
        None => Location::Dir(value.to_path_buf()),
    };
    if refresh == Refresh::Never && matches!(location, Location::Git { .. } | Location::Feed(_)) {
        return remote_catalog::cached(&location, &layout.catalog_cache()).ok_or_else(|| {
            Unavailable::Fetch(format!(
                "--offline: no copy of the catalog {} is kept (`catalog update` fetches one)",
                crate::text::redact_credentials(&value.to_string_lossy())
            ))
        });
    }
    let ttl = match std::env::var(EnvVars::HERMES_PLUGINS_CATALOG_TTL) {
        Ok(v) if !v.is_empty() => {
            remote_catalog::parse_ttl(&v).map_err(|e| Unavailable::Other(CliError::usage(e)))?
        }
        _ => remote_catalog::DEFAULT_TTL,
    };
    let force = refresh == Refresh::Now;
    match remote_catalog::materialize(&location, &layout.catalog_cache(), ttl, force) {
        Ok(found) => {
            if let Some(warning) = &found.warning {
                global.printer.warning(warning);
            }
            Ok(found.dir)
        }
        Err(e @ RemoteCatalogError::Fetch { .. }) => Err(Unavailable::Fetch(e.to_string())),
        Err(e @ RemoteCatalogError::Cache { .. }) => Err(Unavailable::Other(CliError::coded(
            crate::exit::Code::Io,
            e.to_string(),
        ))),
    }
}

/// How long a writer waits for another: `--lock-timeout`/`HERMES_PLUGINS_LOCK_TIMEOUT`, else
/// [`DEFAULT_LOCK_WAIT`] when nobody can answer a prompt (Hermes calling non-interactively
/// must not hang behind a stuck writer), else as long as it takes.
pub fn lock_wait(global: &GlobalArgs) -> Option<Duration> {
    match global.lock_timeout {
        Some(seconds) => Some(Duration::from_secs(seconds)),
        None if interactive(global) => None,
        None => Some(DEFAULT_LOCK_WAIT),
    }
}

/// The non-interactive writer-lock wait.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(30);

/// Bounds on each wheel: `HERMES_PLUGINS_MAX_WHEEL_SIZE` (bytes it may unpack to; default
/// 4 GiB), else the defaults.
pub fn wheel_limits() -> Result<WheelLimits, CliError> {
    let mut limits = WheelLimits::default();
    if let Some(value) =
        std::env::var_os(EnvVars::HERMES_PLUGINS_MAX_WHEEL_SIZE).filter(|v| !v.is_empty())
    {
        limits.max_unpacked = value
            .to_str()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|v| *v > 0)
            .ok_or_else(|| {
                CliError::usage(format!(
                    "HERMES_PLUGINS_MAX_WHEEL_SIZE must be a number of bytes, not `{}`",
                    crate::text::escape(&value.to_string_lossy())
                ))
            })?;
    }
    Ok(limits)
}

/// A context for commands that never resolve (no interpreter needed).
pub fn read_context(global: &GlobalArgs) -> Result<Context, CliError> {
    let home = home(global);
    let layout = Layout::new(&home);
    require_profile(&layout, &global.profile)?;
    let catalogs = cached_catalog_dirs(&layout, global)?;
    Ok(Context {
        layout,
        profile: global.profile.clone(),
        core: None,
        core_known: false,
        extras: Vec::new(),
        python: PathBuf::from("python3"),
        interpreter_cache: super::env_vars::interpreter_cache(),
        index: IndexConfig::default(),
        quarantine_days: DEFAULT_DAYS,
        now: jiff::Timestamp::now(),
        fetch: FetchOptions {
            github_base: None,
            catalogs,
            catalog_unreachable: None,
        },
        wheel_limits: WheelLimits::default(),
        lock_wait: lock_wait(global),
        ignore_requires_hermes: false,
        lock_mode: LockMode::Resolve,
        resolutions: Default::default(),
        ahead: Default::default(),
        source_date_epoch: super::env_vars::source_date_epoch().map_err(CliError::usage)?,
        env_names: super::env_vars::set_names(),
    })
}

/// Capability flags shared by `install`, `enable`, `update` and `capabilities`.
#[derive(Debug, Clone, Args)]
pub struct GrantArgs {
    /// Grant a capability (repeatable; e.g. tools.override, llm.model_override)
    #[arg(long = "grant", value_name = "CAP")]
    pub grant: Vec<String>,
    /// Grant tools.override (even if the plugin does not declare it yet)
    #[arg(long, conflicts_with = "no_allow_tool_override")]
    pub allow_tool_override: bool,
    /// Revoke tools.override
    #[arg(long)]
    pub no_allow_tool_override: bool,
}

impl GrantArgs {
    /// (granted, revoked) capability ids.
    pub fn split(&self) -> (Vec<String>, Vec<String>) {
        let mut grant = self.grant.clone();
        let mut revoke = Vec::new();
        if self.allow_tool_override {
            grant.push("tools.override".into());
        }
        if self.no_allow_tool_override {
            revoke.push("tools.override".into());
        }
        (grant, revoke)
    }
}

/// Maps an operation failure to the CLI's error (printing conflicts in full).
pub fn failure(error: ManagerError, global: &GlobalArgs) -> CliError {
    match error {
        ManagerError::Refused(r) => CliError::failed(r.to_string()),
        ManagerError::Conflict(c) => {
            if !global.printer.json() {
                print_conflict(&global.printer, &c);
            }
            let mut err = CliError::coded(
                crate::exit::Code::Conflict,
                format!(
                    "{}; nothing was changed",
                    c.sentences
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "no solution".into())
                ),
            );
            err.details = serde_json::to_value(&*c)
                .ok()
                .map(|v| Box::new(serde_json::json!({ "conflict": v })));
            err
        }
        ManagerError::Usage(m) => CliError::usage(m),
        ManagerError::Coded(code, m) => CliError::coded(code, m),
        e @ ManagerError::NotConsented { .. } => CliError::coded(e.code(), e.to_string()),
        ManagerError::Caused {
            code,
            message,
            causes,
        } => CliError::coded(code, message).caused_by(causes),
    }
}
