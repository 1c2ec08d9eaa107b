//! What the package-manager commands share: the environment options (`--core`, `--python`,
//! index, catalog), building a [`Context`], prompts on the terminal, progress on stderr, and
//! mapping [`ManagerError`] to exit statuses.

use super::env_vars::EnvVars;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::generation::wheels::WheelLimits;
use crate::home::Layout;
use crate::manager::{Context, Feedback, ManagerError, Prompter};
use crate::resolve::engine::IndexConfig;
use crate::resolve::inputs::{self, CoreInputs};
use crate::resolve::quarantine::DEFAULT_DAYS;
use crate::source::FetchOptions;
use crate::state::settings::{CoreSetting, Settings};

use super::conflict::print_conflict;
use super::{CliError, GlobalArgs};

/// Options of every command that resolves: Hermes core, the interpreter, the index, the
/// quarantine. Each falls back to what `pm/settings.json` records (see [`Environment`]).
#[derive(Debug, Clone, Args)]
pub struct ResolverArgs {
    /// Hermes core: a checkout DIR (pyproject.toml + uv.lock), `installed:PYTHON` (an installed
    /// Hermes: its distributions are the pins), `installed` (the `hermes` on PATH) or `none`
    /// [default: recorded in <home>/pm/settings.json, else the `hermes` on PATH]
    #[arg(long, env = EnvVars::HERMES_PLUGINS_CORE, value_name = "CORE")]
    pub core: Option<String>,
    /// Resolve without Hermes core: no core pins, no quarantine (recorded, and shown by list and env)
    #[arg(long, env = EnvVars::HERMES_PLUGINS_NO_CORE, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_core: bool,
    /// An optional extra of core to include (repeatable)
    #[arg(long = "extra", value_name = "NAME")]
    pub extras: Vec<String>,
    /// Target interpreter: a path, a name on PATH (python3) or a version (3.11), as uv finds
    /// them [default: $HERMES_PLUGINS_PYTHON, the recorded one, an installed core's, else
    /// python3 on PATH]
    #[arg(long, env = EnvVars::HERMES_PLUGINS_PYTHON, value_name = "PYTHON")]
    pub python: Option<PathBuf>,
    /// Package index [default: $HERMES_PLUGINS_INDEX_URL, $UV_INDEX_URL, the recorded one, else PyPI]
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Another package index (repeatable; also $UV_EXTRA_INDEX_URL)
    #[arg(long = "extra-index-url", value_name = "URL")]
    pub extra_index_urls: Vec<String>,
    /// A directory or page of distributions (repeatable; also $UV_FIND_LINKS)
    #[arg(long = "find-links", value_name = "PATH_OR_URL")]
    pub find_links: Vec<String>,
    /// Quarantine window for packages core pins [default: the recorded one, else 14]
    #[arg(long, value_name = "N")]
    pub quarantine_days: Option<u32>,
    /// Trust the system's certificate store (as uv's --native-tls; SSL_CERT_FILE and
    /// SSL_CERT_DIR are always honoured)
    #[arg(long, env = EnvVars::UV_NATIVE_TLS, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub native_tls: bool,
}

/// Where a value of the environment came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A flag or its environment variable.
    Flag,
    /// `pm/settings.json`.
    Recorded,
    /// Found on this machine (the `hermes` on PATH).
    Detected,
    /// Nothing said anything.
    Default,
}

/// The environment a command resolves against: flags over `pm/settings.json` over what is
/// found on the machine.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Hermes core as chosen (`None`: nobody chose, so mutating commands refuse).
    pub core_setting: Option<CoreSetting>,
    /// Where the choice came from.
    pub core_origin: Origin,
    /// Core's inputs (`None` for `--no-core` or when unknown).
    pub core: Option<CoreInputs>,
    /// Extras of core.
    pub extras: Vec<String>,
    /// The interpreter.
    pub python: PathBuf,
    /// Where the interpreter came from.
    pub python_origin: Origin,
    /// The indexes.
    pub index: IndexConfig,
    /// The quarantine window.
    pub quarantine_days: u32,
}

/// The interpreter of the `hermes` command on PATH (its console script's `#!` line), if it
/// is one.
pub fn detect_hermes() -> Option<PathBuf> {
    let script = std::env::var_os(EnvVars::PATH).and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("hermes"))
            .find(|c| c.is_file())
    })?;
    let head = crate::files::read_regular(&script, 4096).ok().flatten()?;
    let first = String::from_utf8_lossy(&head);
    let line = first.lines().next()?.strip_prefix("#!")?.trim();
    let python = PathBuf::from(line.split_whitespace().next()?);
    (python.is_absolute() && python.is_file()).then_some(python)
}

impl ResolverArgs {
    /// Hermes core as the flags name it (`--no-core` yields [`CoreSetting::None`]).
    fn core_flag(&self) -> Result<Option<CoreSetting>, CliError> {
        let Some(text) = self.core.as_deref().filter(|t| !t.is_empty()) else {
            return Ok(self.no_core.then_some(CoreSetting::None));
        };
        if text == "installed" {
            return detect_hermes()
                .map(|python| Some(CoreSetting::Installed { python }))
                .ok_or_else(|| {
                    CliError::coded(
                        super::Code::NotFound,
                        "--core installed: there is no `hermes` command on PATH (name the interpreter: --core installed:PYTHON)",
                    )
                });
        }
        match CoreSetting::parse(text) {
            CoreSetting::Checkout { path } if path.is_file() => Ok(Some(CoreSetting::Installed {
                python: std::path::absolute(&path).unwrap_or(path),
            })),
            CoreSetting::Checkout { path } if path.is_dir() => Ok(Some(CoreSetting::Checkout {
                path: std::path::absolute(&path).unwrap_or(path),
            })),
            CoreSetting::Checkout { path } => Err(CliError::coded(
                super::Code::NotFound,
                format!(
                    "--core {}: no such directory or interpreter",
                    path.display()
                ),
            )),
            other => Ok(Some(other)),
        }
    }

    /// The environment: each value from its flag, else `settings`, else detection or the
    /// default.
    pub fn environment(&self, settings: &Settings) -> Result<Environment, CliError> {
        let (core_setting, core_origin) = match self.core_flag()? {
            Some(c) => (Some(c), Origin::Flag),
            None => match &settings.core {
                Some(c) => (Some(c.clone()), Origin::Recorded),
                None => match detect_hermes() {
                    Some(python) => (Some(CoreSetting::Installed { python }), Origin::Detected),
                    None => (None, Origin::Default),
                },
            },
        };
        let extras = if self.extras.is_empty() {
            settings.extras.clone()
        } else {
            self.extras.clone()
        };
        let core = match &core_setting {
            Some(CoreSetting::Checkout { path }) => {
                Some(load_core(CoreInputs::load(path, &extras))?)
            }
            Some(CoreSetting::Installed { python }) => {
                Some(load_core(CoreInputs::installed(python, &extras))?)
            }
            Some(CoreSetting::None) | None if !extras.is_empty() => {
                return Err(CliError::usage("--extra needs a core (--core)"));
            }
            Some(CoreSetting::None) | None => None,
        };
        let (python, python_origin) = match (&self.python, &settings.python, &core_setting) {
            (Some(given), ..) => (find_python(Some(given))?, Origin::Flag),
            (None, Some(recorded), _) => (recorded.clone(), Origin::Recorded),
            (None, None, Some(CoreSetting::Installed { python })) => {
                (python.clone(), Origin::Detected)
            }
            (None, None, _) => (find_python(None)?, Origin::Default),
        };
        let mut index = self.index_config();
        if index.index_url.is_none() {
            index.index_url = settings.index_url.clone();
        }
        if index.extra_index_urls.is_empty() {
            index.extra_index_urls = settings.extra_index_urls.clone();
        }
        if index.find_links.is_empty() {
            index.find_links = settings.find_links.clone();
        }
        Ok(Environment {
            core_setting,
            core_origin,
            core,
            extras,
            python,
            python_origin,
            index,
            quarantine_days: self
                .quarantine_days
                .or(settings.quarantine_days)
                .unwrap_or(DEFAULT_DAYS),
        })
    }

    /// The index configuration: flags first, then the environment.
    pub fn index_config(&self) -> IndexConfig {
        IndexConfig {
            index_url: self
                .index_url
                .clone()
                .or_else(|| {
                    std::env::var(EnvVars::HERMES_PLUGINS_INDEX_URL)
                        .ok()
                        .filter(|s| !s.is_empty())
                })
                .or_else(|| {
                    std::env::var(EnvVars::UV_INDEX_URL)
                        .ok()
                        .filter(|s| !s.is_empty())
                }),
            extra_index_urls: self
                .extra_index_urls
                .iter()
                .cloned()
                .chain(env_list(EnvVars::UV_EXTRA_INDEX_URL))
                .collect(),
            find_links: self
                .find_links
                .iter()
                .cloned()
                .chain(env_list(EnvVars::UV_FIND_LINKS))
                .collect(),
            native_tls: self.native_tls,
        }
    }
}

impl Environment {
    /// Records in `settings` what it does not say yet and this run decided (by flag or
    /// detection): the first use fixes the environment for later commands. Returns whether
    /// anything changed.
    pub fn record_into(&self, settings: &mut Settings) -> bool {
        let before = settings.clone();
        if settings.core.is_none() && matches!(self.core_origin, Origin::Flag | Origin::Detected) {
            settings.core = self.core_setting.clone();
            if settings.extras.is_empty() {
                settings.extras = self.extras.clone();
            }
        }
        if settings.python.is_none() && self.python_origin == Origin::Flag {
            settings.python = Some(self.python.clone());
        }
        if settings.index_url.is_none()
            && settings.extra_index_urls.is_empty()
            && settings.find_links.is_empty()
        {
            settings.index_url = self
                .index
                .index_url
                .as_deref()
                .map(crate::text::strip_credentials);
            settings.extra_index_urls = self
                .index
                .extra_index_urls
                .iter()
                .map(|u| crate::text::strip_credentials(u))
                .collect();
            settings.find_links = self.index.find_links.clone();
        }
        *settings != before
    }

    /// How the core is described to people.
    pub fn describe_core(&self) -> String {
        match (&self.core, &self.core_setting) {
            (Some(c), _) => c.describe(),
            (None, Some(CoreSetting::None)) => "none (--no-core)".to_string(),
            (None, _) => "unknown".to_string(),
        }
    }
}

fn load_core(loaded: Result<CoreInputs, inputs::InputError>) -> Result<CoreInputs, CliError> {
    loaded.map_err(|e| match e {
        inputs::InputError::UnknownExtra { .. } => CliError::usage(e.to_string()),
        inputs::InputError::Installed { .. } => {
            CliError::coded(super::Code::Interpreter, e.to_string())
        }
        other => CliError::environment(other.to_string()),
    })
}

/// Options of the commands that may build a generation.
#[derive(Debug, Clone, Args)]
pub struct EnvArgs {
    /// Resolution options.
    #[command(flatten)]
    pub resolver: ResolverArgs,
    /// Catalog directory for catalog names [default: $HERMES_PLUGINS_CATALOG]
    #[arg(long, env = EnvVars::HERMES_PLUGINS_CATALOG, value_name = "DIR")]
    pub catalog: Option<PathBuf>,
    /// Publish plugins whose requires_hermes excludes this core's version (recorded per
    /// plugin and core version, audited)
    #[arg(long)]
    pub ignore_requires_hermes: bool,
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

/// Prints a consent plan for people.
pub fn print_plan(plan: &crate::manager::plan::Plan, changes: &[String]) {
    use crate::manager::plan::PlanItem;
    outln!(
        "Consent plan for `{}` (nothing was changed):",
        plan.operation
    );
    if plan.items.is_empty() {
        outln!("  nothing to ask");
    }
    for item in &plan.items {
        let how = match (item.flag(), item.required()) {
            (Some(f), true) => format!("  [{f}; required]"),
            (Some(f), false) => format!("  [{f}; optional]"),
            (None, _) => String::new(),
        };
        let line = match item {
            PlanItem::Dependencies {
                plugin,
                requires,
                installs,
            } => format!(
                "dependencies of `{plugin}`: {} (installs {})",
                requires.join(", "),
                installs.join(", ")
            ),
            PlanItem::Capability {
                plugin,
                profile,
                id,
                risk,
            } => format!("capability {id} for `{plugin}` (profile {profile}): it could {risk}"),
            PlanItem::Surface { plugin, added } => {
                format!("`{plugin}` adds: {}", added.join(", "))
            }
            PlanItem::Env { plugin, name, .. } => {
                format!("`{plugin}` needs {name} set (in the environment or .env) to load")
            }
            PlanItem::Auth { plugin, providers } => {
                format!("`{plugin}` needs sign-in with {}", providers.join(", "))
            }
        };
        outln!("  - {line}{how}");
    }
    if !changes.is_empty() {
        outln!("Python packages against the current generation:");
        for c in changes {
            outln!("  {c}");
        }
    }
    let mut approve = plan.approve.clone();
    approve.push(format!("--plan {}", plan.hash));
    outln!("Approve with: {}", approve.join(" "));
}

/// A whitespace/comma-separated list from an environment variable.
pub fn env_list(name: &str) -> Vec<String> {
    std::env::var(name)
        .map(|v| {
            v.split([' ', ',', '\n'])
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The target interpreter: a path given is used as it is; anything else is a request uv
/// understands (`python3`, `3.11`, `cpython@3.12`), found as uv finds it; nothing given means
/// `python3` on `PATH`.
pub fn find_python(given: Option<&PathBuf>) -> Result<PathBuf, CliError> {
    match given {
        Some(path) if path.is_absolute() || path.components().count() > 1 => Ok(path.clone()),
        Some(request) => {
            let text = request.to_str().ok_or_else(|| {
                CliError::usage(format!(
                    "--python `{}` is not valid UTF-8",
                    request.display()
                ))
            })?;
            crate::resolve::engine::find_interpreter(text).map_err(|e| {
                CliError::coded(super::Code::Interpreter, format!(
                    "{e} (pass a path, a name on PATH such as python3, or a version such as 3.11)"
                ))
            })
        }
        None => std::env::var_os(EnvVars::PATH)
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("python3"))
                    .find(|c| c.is_file())
            })
            .ok_or_else(|| {
                CliError::coded(
                    super::Code::Interpreter,
                    "no Python interpreter found: pass --python or set HERMES_PLUGINS_PYTHON",
                )
            }),
    }
}

/// The Hermes home directory: `--home`, `$HERMES_HOME`, else `~/.hermes` — always absolute
/// (generations record paths relative to it, and the agent may run elsewhere).
pub fn home(global: &GlobalArgs) -> PathBuf {
    let home = global.home.clone().unwrap_or_else(|| {
        std::env::var_os(EnvVars::HOME)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".hermes")
    });
    std::path::absolute(&home).unwrap_or(home)
}

/// Builds the operation context of a command that may change the home: the environment from
/// flags, `pm/settings.json` and detection; what this first use decided is recorded (unless
/// `record` is false: a dry run changes nothing).
pub fn context(env: &EnvArgs, global: &GlobalArgs, record: bool) -> Result<Context, CliError> {
    let layout = Layout::new(&home(global));
    let settings_path = layout.settings();
    let mut settings = Settings::read(&settings_path)
        .map_err(|e| CliError::coded(super::Code::Io, e.to_string()))?;
    let found = env.resolver.environment(&settings)?;
    if record && found.record_into(&mut settings) {
        settings
            .write(&settings_path)
            .map_err(|e| CliError::coded(super::Code::Io, e.to_string()))?;
    }
    Ok(Context {
        layout,
        profile: global.profile.clone(),
        core_known: found.core_setting.is_some(),
        core: found.core,
        extras: found.extras,
        python: found.python,
        index: found.index,
        quarantine_days: found.quarantine_days,
        now: super::env_vars::now().map_err(CliError::usage)?,
        fetch: FetchOptions {
            github_base: std::env::var(EnvVars::HERMES_PLUGINS_GITHUB)
                .ok()
                .filter(|s| !s.is_empty()),
            catalog: env.catalog.clone(),
        },
        wheel_limits: wheel_limits()?,
        lock_wait: lock_wait(global),
        ignore_requires_hermes: env.ignore_requires_hermes,
        source_date_epoch: super::env_vars::source_date_epoch(),
        env_names: super::env_vars::set_names(),
    })
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
pub fn read_context(global: &GlobalArgs) -> Context {
    let home = home(global);
    Context {
        layout: Layout::new(&home),
        profile: global.profile.clone(),
        core: None,
        core_known: false,
        extras: Vec::new(),
        python: PathBuf::from("python3"),
        index: IndexConfig::default(),
        quarantine_days: DEFAULT_DAYS,
        now: jiff::Timestamp::now(),
        fetch: FetchOptions {
            github_base: None,
            catalog: std::env::var_os(EnvVars::HERMES_PLUGINS_CATALOG)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        },
        wheel_limits: WheelLimits::default(),
        lock_wait: lock_wait(global),
        ignore_requires_hermes: false,
        source_date_epoch: super::env_vars::source_date_epoch(),
        env_names: super::env_vars::set_names(),
    }
}

/// Whether prompts may be shown.
pub fn interactive(global: &GlobalArgs) -> bool {
    !global.no_input && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Prompts on the terminal (stderr), answers from stdin; default no; secrets are read with
/// echo off.
#[derive(Debug, Default)]
pub struct TerminalPrompter;

impl Prompter for TerminalPrompter {
    fn confirm(&mut self, text: &str, question: &str) -> bool {
        let mut err = std::io::stderr();
        let _ = write!(err, "{}{question} [y/N] ", super::shown(text));
        let _ = err.flush();
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return false;
        }
        matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    }

    fn value(&mut self, text: &str, label: &str, secret: bool) -> Option<String> {
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "{}{}{}: ",
            super::shown(text),
            super::shown(label),
            if secret { " (hidden)" } else { "" }
        );
        let _ = err.flush();
        let line = if secret {
            rpassword::read_password().ok()?
        } else {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line).ok()?;
            line
        };
        let value = line.trim_end_matches(['\n', '\r']).to_string();
        (!value.is_empty()).then_some(value)
    }

    fn interactive(&self) -> bool {
        true
    }
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

/// Progress and notes on stderr: a spinner (or a transfer bar) on a terminal, plain lines
/// otherwise; nothing but notes with `--json` or `-q`.
#[derive(Debug)]
pub struct StderrFeedback {
    bars: bool,
    quiet: bool,
    bar: Option<ProgressBar>,
}

impl StderrFeedback {
    /// Feedback for these global options.
    pub fn new(global: &GlobalArgs) -> StderrFeedback {
        StderrFeedback {
            bars: std::io::stderr().is_terminal() && !global.json && !global.quiet,
            quiet: global.quiet,
            bar: None,
        }
    }
}

impl Feedback for StderrFeedback {
    fn phase(&mut self, message: &str) {
        if self.bars {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(super::shown(message));
            bar.enable_steady_tick(Duration::from_millis(100));
            self.bar = Some(bar);
        } else {
            tracing::debug!("{message}");
        }
    }

    fn note(&mut self, message: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => bar.println(format!("note: {}", super::shown(message))),
            None => errln!("note: {message}"),
        }
    }

    fn transfer(&mut self, received: usize, total: usize) {
        if let Some(bar) = &self.bar
            && total > 0
        {
            if bar.length() != Some(total as u64) {
                bar.set_length(total as u64);
                bar.set_style(
                    ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} objects")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
            }
            bar.set_position(received as u64);
        }
    }

    fn done(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// Maps an operation failure to the CLI's error (printing conflicts in full).
pub fn failure(error: ManagerError, global: &GlobalArgs) -> CliError {
    match error {
        ManagerError::Refused(m) => CliError::failed(m),
        ManagerError::Conflict(c) => {
            if !global.json {
                print_conflict(&c);
            }
            let mut err = CliError::coded(
                super::Code::Conflict,
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
        ManagerError::Environment(m) => CliError::environment(m),
        ManagerError::Coded(code, m) => CliError::coded(code, m),
        ManagerError::Caused {
            code,
            message,
            causes,
        } => CliError::coded(code, message).caused_by(causes),
    }
}

/// Prints a JSON document following `schema` on stdout, `"$schema"` first (serde escapes
/// control characters; credentials in URLs are redacted).
pub fn print_json(schema: super::json::Schema, value: &serde_json::Value) {
    let doc = super::json::document(schema, value.clone());
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    println!("{}", crate::text::redact_credentials(&text));
}
