//! The environment a command resolves against (`--core`, `--python`, indexes, quarantine):
//! flags over `pm/settings.json` over what is found on the machine (the `hermes` on PATH, the
//! interpreter as uv finds it).

use std::path::{Path, PathBuf};

use clap::Args;

use super::env_vars::EnvVars;
use super::error::CliError;
use crate::resolve::engine::IndexConfig;
use crate::resolve::inputs::{self, CoreInputs};
use crate::resolve::quarantine::DEFAULT_DAYS;
use crate::state::settings::{CoreSetting, Settings};

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
    /// A directory or page of distributions, added to the indexes as uv adds it (repeatable;
    /// also $UV_FIND_LINKS)
    #[arg(long = "find-links", value_name = "PATH_OR_URL")]
    pub find_links: Vec<String>,
    /// Read no index: only the --find-links locations (as uv's --no-index; recorded like the
    /// indexes)
    #[arg(long, env = EnvVars::UV_NO_INDEX, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_index: bool,
    /// Fetch nothing over the network: only uv's cache and local locations (as uv's --offline)
    #[arg(long, env = EnvVars::UV_OFFLINE, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub offline: bool,
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

impl Environment {
    /// What a resolution against this environment at `now` is against.
    pub fn against(self, now: jiff::Timestamp) -> crate::manager::resolution::Against {
        crate::manager::resolution::Against {
            core: self.core,
            extras: self.extras,
            python: self.python,
            interpreter_cache: super::env_vars::interpreter_cache(),
            index: self.index,
            quarantine_days: self.quarantine_days,
            now,
        }
    }
}

/// The interpreter behind the `hermes` command on PATH, if there is one (see
/// [`interpreter_behind`]).
pub fn detect_hermes() -> Option<PathBuf> {
    let path = std::env::var_os(EnvVars::PATH)?;
    let script = find_on(&path, "hermes")?;
    interpreter_behind(&script, &path)
}

/// The first `name` on the search path `path` that is a file (symlinks followed).
fn find_on(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|c| c.is_file())
}

/// How many launchers [`interpreter_behind`] follows before it gives up.
const MAX_LAUNCHERS: usize = 4;

/// The Python interpreter a `hermes` command runs, read from the files — never by running a
/// script with guessed flags (a launcher run as `launcher -I -c …` is not Python):
/// - a symlink is followed to its target;
/// - a console script (pip, `uv tool`, pipx) names its interpreter on its `#!` line, directly
///   or through `/usr/bin/env python3` (then found on `path`);
/// - a shell launcher — what Hermes's install script puts at `~/.local/bin/hermes`:
///   `exec "<venv>/bin/hermes" "$@"` — is followed to the command it `exec`s.
///
/// Only a file whose name says Python (`python…`, `pypy…`) is returned; the caller then asks
/// that interpreter itself for what it has.
pub fn interpreter_behind(script: &Path, path: &std::ffi::OsStr) -> Option<PathBuf> {
    let mut script = script.to_path_buf();
    for _ in 0..MAX_LAUNCHERS {
        script = std::fs::canonicalize(&script).ok()?;
        let head = crate::files::read_regular(&script, 64 * 1024)
            .ok()
            .flatten()?;
        let text = String::from_utf8_lossy(&head);
        let mut words = text.lines().next()?.strip_prefix("#!")?.split_whitespace();
        let program = PathBuf::from(words.next()?);
        let is_python = |p: &Path| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("python") || n.starts_with("pypy"))
        };
        if program.file_name().is_some_and(|n| n == "env") {
            let name = words.find(|w| !w.starts_with('-'))?;
            if is_python(Path::new(name)) {
                return find_on(path, name);
            }
        } else if is_python(&program) {
            // Not canonicalised: a venv's `bin/python` is a symlink out of the venv.
            return (program.is_absolute() && program.is_file()).then_some(program);
        }
        // A shell launcher: the command its `exec` line runs.
        script = text.lines().find_map(|line| {
            let rest = line.trim().strip_prefix("exec ")?;
            let target = rest.split_whitespace().next()?.trim_matches(['"', '\'']);
            let target = PathBuf::from(target);
            (target.is_absolute() && target.is_file()).then_some(target)
        })?;
    }
    None
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
                        crate::exit::Code::NotFound,
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
                crate::exit::Code::NotFound,
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
            Some(CoreSetting::Installed { python }) => Some(load_core(CoreInputs::installed(
                python,
                &extras,
                super::env_vars::cache_dir().as_deref(),
            ))?),
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
        index.timeouts = super::env_vars::http_timeouts().map_err(CliError::usage)?;
        if index.index_url.is_none() {
            index.index_url = settings.index_url.clone();
        }
        if index.extra_index_urls.is_empty() {
            index.extra_index_urls = settings.extra_index_urls.clone();
        }
        if index.find_links.is_empty() {
            index.find_links = settings.find_links.clone();
        }
        // Recorded indexes stand together: a run that names none takes the recorded ones,
        // `--no-index` included.
        if !self.names_an_index() {
            index.no_index = settings.no_index;
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

    /// Whether this run names any package location itself (flag or environment).
    fn names_an_index(&self) -> bool {
        let index = self.index_config();
        index.index_url.is_some()
            || !index.extra_index_urls.is_empty()
            || !index.find_links.is_empty()
            || index.no_index
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
                .map(|l| absolute_location(&l))
                .collect(),
            no_index: self.no_index,
            offline: self.offline,
            native_tls: self.native_tls,
            timeouts: Default::default(),
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
            && !settings.no_index
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
            settings.no_index = self.index.no_index;
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
            CliError::coded(crate::exit::Code::Interpreter, e.to_string())
        }
        other => CliError::environment(other.to_string()),
    })
}

/// A `--find-links` location as it is kept: a URL as given, a directory or file made absolute
/// (it is recorded, and later commands run from other directories, where a relative path
/// names something else or nothing).
pub fn absolute_location(location: &str) -> String {
    if location.contains("://") || location.starts_with("file:") {
        return location.to_string();
    }
    std::path::absolute(location)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| location.to_string())
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
        // A path is made absolute here, once: it is recorded, and later commands run from
        // other directories.
        Some(path) if path.is_absolute() || path.components().count() > 1 => {
            Ok(std::path::absolute(path).unwrap_or_else(|_| path.clone()))
        }
        Some(request) => {
            let text = request.to_str().ok_or_else(|| {
                CliError::usage(format!(
                    "--python `{}` is not valid UTF-8",
                    request.display()
                ))
            })?;
            let shared = super::env_vars::interpreter_cache();
            crate::resolve::engine::find_interpreter(text, shared.as_deref()).map_err(|e| {
                CliError::coded(
                    crate::exit::Code::Interpreter,
                    format!(
                        "{e} (pass a path, a name on PATH such as python3, or a version such as 3.11)"
                    ),
                )
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
                    crate::exit::Code::Interpreter,
                    "no Python interpreter found: pass --python or set HERMES_PLUGINS_PYTHON",
                )
            }),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::interpreter_behind;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Every way Hermes gets installed leads to the same interpreter: a console script, a
    /// symlink to it, the install script's bash launcher, `#!/usr/bin/env python3`.
    #[test]
    fn the_interpreter_behind_every_hermes_layout() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv/bin");
        let python = venv.join("python3");
        write(&python, "not really python\n");
        let console = venv.join("hermes");
        write(
            &console,
            &format!(
                "#!{}\nfrom hermes_cli.main import main\nmain()\n",
                python.display()
            ),
        );
        let none = std::ffi::OsString::new();
        let found = |script: &Path| interpreter_behind(script, &none);
        assert_eq!(found(&console), Some(python.clone()));

        let link = dir.path().join("bin/hermes");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&console, &link).unwrap();
        assert_eq!(found(&link), Some(python.clone()));

        let launcher = dir.path().join("local/bin/hermes");
        write(
            &launcher,
            &format!(
                "#!/usr/bin/env bash\n# Hermes Agent launcher\nexec \"{}\" \"$@\"\n",
                console.display()
            ),
        );
        assert_eq!(found(&launcher), Some(python.clone()));

        let env_script = dir.path().join("env/hermes");
        write(&env_script, "#!/usr/bin/env python3\nimport sys\n");
        assert_eq!(
            interpreter_behind(&env_script, venv.as_os_str()),
            Some(python.clone())
        );

        // A script that names no Python and execs nothing: not guessed.
        let other = dir.path().join("other/hermes");
        write(&other, "#!/bin/sh\necho hi\n");
        assert_eq!(found(&other), None);
    }
}
