//! `config get|set|unset`: the recorded environment (`pm/settings.json`).

use clap::{Args, Subcommand};
use serde_json::json;

use crate::home::Layout;
use crate::manager;
use crate::state::settings::{CoreSetting, KEYS, Settings, SettingsError};

use super::error::CliError;
use super::global::GlobalArgs;
use super::json::Schema;
use super::manage::{self, StderrFeedback};
use crate::exit::{Code, Status};

/// Arguments of `config`.
#[derive(Debug, Args)]
#[command(
    after_help = "Keys: core (a checkout DIR, installed:PYTHON, or none), extra, python, index-url, extra-index-url, find-links, no-index (true/false), quarantine-days, keep-generations (the newest generations each publication keeps; default 10, 0 for none collected).\n\nExamples:\n  hermes-plugins config get\n  hermes-plugins config set core installed:/opt/hermes/venv/bin/python\n  hermes-plugins config set find-links ./wheels ./more-wheels\n  hermes-plugins config unset index-url\n\nEvery command that resolves uses these unless a flag (or its environment variable) overrides them for one run; the first run that names a core, interpreter or index records it."
)]
pub struct ConfigArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ConfigAction,
}

/// `config` subcommands.
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print the recorded settings (or one)
    Get {
        /// The key (all when absent)
        key: Option<String>,
    },
    /// Record a setting (several values for extra, extra-index-url, find-links)
    Set {
        /// The key
        key: String,
        /// The value(s)
        #[arg(required = true, num_args = 1..)]
        values: Vec<String>,
    },
    /// Forget a setting
    Unset {
        /// The key
        key: String,
    },
}

fn settings_error(e: SettingsError) -> CliError {
    match e {
        SettingsError::UnknownKey(_) | SettingsError::Value { .. } => {
            CliError::usage(e.to_string())
        }
        SettingsError::Io { .. } | SettingsError::Format { .. } => {
            CliError::coded(Code::Io, e.to_string())
        }
    }
}

/// Checks a value before it is recorded: a core must load, an interpreter must be found.
fn check(key: &str, values: &[String]) -> Result<Vec<String>, CliError> {
    match (key, values) {
        ("core", [value]) => {
            let setting = match CoreSetting::parse(value) {
                CoreSetting::Checkout { path } if path.is_file() => CoreSetting::Installed {
                    python: std::path::absolute(&path).unwrap_or(path),
                },
                CoreSetting::Checkout { path } => CoreSetting::Checkout {
                    path: std::path::absolute(&path).unwrap_or(path),
                },
                other => other,
            };
            let loaded = match &setting {
                CoreSetting::Checkout { path } => {
                    crate::resolve::inputs::CoreInputs::load(path, &[]).map(|_| ())
                }
                CoreSetting::Installed { python } => crate::resolve::inputs::CoreInputs::installed(
                    python,
                    &[],
                    super::env_vars::cache_dir().as_deref(),
                )
                .map(|_| ()),
                CoreSetting::None => Ok(()),
            };
            loaded.map_err(|e| CliError::usage(format!("core {value}: {e}")))?;
            Ok(vec![setting.describe()])
        }
        ("python", [value]) => {
            let found = manage::find_python(Some(&std::path::PathBuf::from(value)))?;
            Ok(vec![found.display().to_string()])
        }
        ("find-links", _) => Ok(values
            .iter()
            .map(|v| super::environment::absolute_location(v))
            .collect()),
        ("index-url" | "extra-index-url", _) => Ok(values
            .iter()
            .map(|v| crate::text::strip_credentials(v))
            .collect()),
        _ => Ok(values.to_vec()),
    }
}

/// Runs `config`.
pub fn run(args: &ConfigArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::read_context(global)?;
    let layout: &Layout = &cx.layout;
    let path = layout.settings();
    let change = |edit: &dyn Fn(&mut Settings) -> Result<(), CliError>| {
        let mut feedback = StderrFeedback::new(global);
        let _lock = manager::begin_writing(&cx, "config", &mut feedback)
            .map_err(|e| manage::failure(e, global))?;
        let mut settings = Settings::read(&path).map_err(settings_error)?;
        edit(&mut settings)?;
        settings.write(&path).map_err(settings_error)?;
        Ok::<Settings, CliError>(settings)
    };
    let settings = match &args.action {
        ConfigAction::Get { key } => {
            let settings = Settings::read(&path).map_err(settings_error)?;
            if let Some(key) = key {
                let value = settings.get(key).map_err(settings_error)?;
                if global.printer.json() {
                    global.printer.document(
                        Schema::Config,
                        &json!({ "file": path, "key": key, "value": value }),
                    );
                } else if let Some(v) = value {
                    match v {
                        serde_json::Value::Array(items) => {
                            for i in items {
                                outln!(global.printer, "{}", i.as_str().unwrap_or_default());
                            }
                        }
                        serde_json::Value::String(s) => outln!(global.printer, "{s}"),
                        other => outln!(global.printer, "{other}"),
                    }
                }
                return Ok(Status::Ok);
            }
            settings
        }
        ConfigAction::Set { key, values } => {
            let values = check(key, values)?;
            change(&|s| s.set(key, &values).map_err(settings_error))?
        }
        ConfigAction::Unset { key } => change(&|s| s.unset(key).map_err(settings_error))?,
    };
    if global.printer.json() {
        let mut shown = serde_json::Map::new();
        for key in KEYS {
            if let Some(v) = settings.get(key).map_err(settings_error)? {
                shown.insert(key.to_string(), v);
            }
        }
        global
            .printer
            .document(Schema::Config, &json!({ "file": path, "settings": shown }));
    } else {
        for key in KEYS {
            let value = settings.get(key).map_err(settings_error)?;
            let text = match value {
                None => "(not set)".to_string(),
                Some(serde_json::Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().unwrap_or_default().to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                Some(serde_json::Value::String(s)) => s,
                Some(other) => other.to_string(),
            };
            outln!(global.printer, "{key:<16} {text}");
        }
    }
    Ok(Status::Ok)
}
