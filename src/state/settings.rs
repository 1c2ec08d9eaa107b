//! `<home>/pm/settings.json`: the environment every command resolves and builds against —
//! Hermes core, the interpreter, the indexes — recorded on first use or with
//! `hermes-plugins config set`, so a later `disable` publishes the environment an earlier
//! `enable` did. Flags (and their environment variables) override it for one run. Written
//! atomically. Schema: `catalog-schema/settings.schema.json`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file format version.
pub const SETTINGS_VERSION: u32 = 1;

/// What Hermes core is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CoreSetting {
    /// A checkout: `pyproject.toml` + `uv.lock`.
    Checkout {
        /// The directory.
        path: PathBuf,
    },
    /// An installed Hermes: the interpreter whose environment has `hermes-agent`; its
    /// installed distributions are the core pins.
    Installed {
        /// The interpreter.
        python: PathBuf,
    },
    /// Resolve without core (`--no-core`): no core pins, no quarantine.
    None,
}

impl CoreSetting {
    /// How it is written on the command line and shown (`installed:/venv/bin/python`).
    pub fn describe(&self) -> String {
        match self {
            CoreSetting::Checkout { path } => path.display().to_string(),
            CoreSetting::Installed { python } => format!("installed:{}", python.display()),
            CoreSetting::None => "none".to_string(),
        }
    }

    /// Parses what [`CoreSetting::describe`] writes: `none`, `installed:PYTHON`, or a
    /// directory.
    pub fn parse(text: &str) -> CoreSetting {
        match text {
            "none" => CoreSetting::None,
            _ => match text.strip_prefix("installed:") {
                Some(python) => CoreSetting::Installed {
                    python: PathBuf::from(python),
                },
                None => CoreSetting::Checkout {
                    path: PathBuf::from(text),
                },
            },
        }
    }
}

/// The whole file. Unset fields fall back to the flags' defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Format version.
    pub version: u32,
    /// Hermes core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<CoreSetting>,
    /// Extras of core.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extras: Vec<String>,
    /// The target interpreter (as found: a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<PathBuf>,
    /// The primary package index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_url: Option<String>,
    /// Further indexes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_index_urls: Vec<String>,
    /// Directories or pages of distributions (added to the indexes, as uv adds them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub find_links: Vec<String>,
    /// `--no-index`: read only the find-links locations.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_index: bool,
    /// The quarantine window (days).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantine_days: Option<u32>,
    /// How many of the newest generations a publication keeps (GEN-6's policy; unset:
    /// [`DEFAULT_KEEP_GENERATIONS`]; 0: collect nothing automatically).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_generations: Option<u32>,
}

/// The newest generations kept after each publication when `keep-generations` is unset —
/// besides the current one, its parent and every one an agent holds — so a home does not
/// grow with every change while the last few switches stay one `rollback` away.
pub const DEFAULT_KEEP_GENERATIONS: u32 = 10;

impl Settings {
    /// The policy: how many of the newest generations to keep after a publication, `None`
    /// when nothing is collected automatically (`keep-generations 0`).
    pub fn keep_generations(&self) -> Option<usize> {
        match self.keep_generations.unwrap_or(DEFAULT_KEEP_GENERATIONS) {
            0 => None,
            n => Some(n as usize),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            version: SETTINGS_VERSION,
            core: None,
            extras: Vec::new(),
            python: None,
            index_url: None,
            extra_index_urls: Vec::new(),
            find_links: Vec::new(),
            no_index: false,
            quarantine_days: None,
            keep_generations: None,
        }
    }
}

/// Why the file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Not readable or writable.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// Not our format.
    #[error("{path} is damaged: {message} (fix it, or `hermes-plugins config unset` the key)")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A key `config` does not know.
    #[error("unknown setting `{0}` (known: {known})", known = KEYS.join(", "))]
    UnknownKey(String),
    /// A value that does not fit the key.
    #[error("{key}: {message}")]
    Value {
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// The keys `config get|set|unset` accepts.
pub const KEYS: &[&str] = &[
    "core",
    "extra",
    "python",
    "index-url",
    "extra-index-url",
    "find-links",
    "no-index",
    "quarantine-days",
    "keep-generations",
];

impl Settings {
    /// Reads the file; a missing file is the default.
    pub fn read(path: &Path) -> Result<Settings, SettingsError> {
        let text = match crate::files::read_regular_text(path, crate::files::STATE_LIMIT) {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(Settings::default()),
            Err(source) => {
                return Err(SettingsError::Io {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        let parsed: Settings = serde_json::from_str(&text).map_err(|e| SettingsError::Format {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        if parsed.version != SETTINGS_VERSION {
            return Err(SettingsError::Format {
                path: path.display().to_string(),
                message: format!(
                    "version {} is not {SETTINGS_VERSION} (a newer hermes-plugins wrote it)",
                    parsed.version
                ),
            });
        }
        Ok(parsed)
    }

    /// Writes the file atomically.
    pub fn write(&self, path: &Path) -> Result<(), SettingsError> {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| SettingsError::Io {
                path: dir.display().to_string(),
                source,
            })?;
        }
        crate::files::write_atomically(path, text.as_bytes()).map_err(|source| SettingsError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// The value of `key` as `config get` shows it (`None`: unset).
    pub fn get(&self, key: &str) -> Result<Option<serde_json::Value>, SettingsError> {
        use serde_json::json;
        let list = |v: &Vec<String>| (!v.is_empty()).then(|| json!(v));
        Ok(match key {
            "core" => self.core.as_ref().map(|c| json!(c.describe())),
            "extra" => list(&self.extras),
            "python" => self.python.as_ref().map(|p| json!(p.display().to_string())),
            "index-url" => self.index_url.as_ref().map(|u| json!(u)),
            "extra-index-url" => list(&self.extra_index_urls),
            "find-links" => list(&self.find_links),
            "no-index" => self.no_index.then(|| json!(true)),
            "quarantine-days" => self.quarantine_days.map(|d| json!(d)),
            "keep-generations" => self.keep_generations.map(|n| json!(n)),
            other => return Err(SettingsError::UnknownKey(other.to_string())),
        })
    }

    /// Sets `key` to `values` (several for the list keys).
    pub fn set(&mut self, key: &str, values: &[String]) -> Result<(), SettingsError> {
        let one = || -> Result<&String, SettingsError> {
            match values {
                [v] => Ok(v),
                _ => Err(SettingsError::Value {
                    key: key.to_string(),
                    message: format!("takes one value, not {}", values.len()),
                }),
            }
        };
        match key {
            "core" => self.core = Some(CoreSetting::parse(one()?)),
            "extra" => self.extras = values.to_vec(),
            "python" => self.python = Some(PathBuf::from(one()?)),
            "index-url" => self.index_url = Some(one()?.clone()),
            "extra-index-url" => self.extra_index_urls = values.to_vec(),
            "find-links" => self.find_links = values.to_vec(),
            "no-index" => {
                self.no_index = match one()?.as_str() {
                    "true" | "1" | "yes" => true,
                    "false" | "0" | "no" => false,
                    text => {
                        return Err(SettingsError::Value {
                            key: key.to_string(),
                            message: format!("`{text}` is not true or false"),
                        });
                    }
                }
            }
            "quarantine-days" => {
                let text = one()?;
                self.quarantine_days = Some(text.parse().map_err(|_| SettingsError::Value {
                    key: key.to_string(),
                    message: format!("`{text}` is not a number of days"),
                })?);
            }
            "keep-generations" => {
                let text = one()?;
                self.keep_generations = Some(text.parse().map_err(|_| SettingsError::Value {
                    key: key.to_string(),
                    message: format!(
                        "`{text}` is not a number of generations (0: collect nothing automatically)"
                    ),
                })?);
            }
            other => return Err(SettingsError::UnknownKey(other.to_string())),
        }
        Ok(())
    }

    /// Unsets `key`.
    pub fn unset(&mut self, key: &str) -> Result<(), SettingsError> {
        match key {
            "core" => self.core = None,
            "extra" => self.extras.clear(),
            "python" => self.python = None,
            "index-url" => self.index_url = None,
            "extra-index-url" => self.extra_index_urls.clear(),
            "find-links" => self.find_links.clear(),
            "no-index" => self.no_index = false,
            "quarantine-days" => self.quarantine_days = None,
            "keep-generations" => self.keep_generations = None,
            other => return Err(SettingsError::UnknownKey(other.to_string())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_what_it_does_not_know() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("pm/settings.json");
        assert_eq!(Settings::read(&path).unwrap(), Settings::default());
        let mut s = Settings::default();
        s.set("core", &["installed:/venv/bin/python".into()])
            .unwrap();
        s.set("find-links", &["a".into(), "b".into()]).unwrap();
        s.set("quarantine-days", &["7".into()]).unwrap();
        assert!(s.set("quarantine-days", &["soon".into()]).is_err());
        assert!(s.set("python", &[]).is_err());
        assert!(matches!(
            s.set("colour", &["x".into()]),
            Err(SettingsError::UnknownKey(_))
        ));
        s.write(&path).unwrap();
        let back = Settings::read(&path).unwrap();
        assert_eq!(back, s);
        assert_eq!(
            back.core,
            Some(CoreSetting::Installed {
                python: "/venv/bin/python".into()
            })
        );
        assert_eq!(
            back.get("core").unwrap(),
            Some(serde_json::json!("installed:/venv/bin/python"))
        );
        assert_eq!(CoreSetting::parse("none"), CoreSetting::None);
        assert_eq!(
            CoreSetting::parse("/src/hermes"),
            CoreSetting::Checkout {
                path: "/src/hermes".into()
            }
        );
        std::fs::write(&path, "{\"version\": 1, \"colour\": 1}").unwrap();
        assert!(matches!(
            Settings::read(&path),
            Err(SettingsError::Format { .. })
        ));
    }
}
