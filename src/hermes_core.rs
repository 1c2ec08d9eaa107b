//! The Hermes core checkout a plugin is validated or resolved against: its `pyproject.toml`
//! and `uv.lock` (`--core DIR` / `HERMES_PLUGINS_CORE`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Deserialize;
use uv_normalize::PackageName;
use uv_pep440::Version;

use crate::pkgfs::read_limited_text;

/// Largest `uv.lock` we read (64 MiB; Hermes' own is about 1 MiB).
const LOCK_LIMIT: u64 = 64 * 1024 * 1024;

/// Why the core checkout could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The lock file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: crate::pkgfs::ReadError,
    },
    /// The lock file is not valid TOML of the expected shape.
    #[error("{path}: not a valid uv.lock: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

/// A package pinned by core's `uv.lock`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedPackage {
    /// Normalised name.
    pub name: PackageName,
    /// The pinned version.
    pub version: Version,
    /// The index it comes from (`None` for git, path or editable sources).
    pub registry: Option<String>,
}

/// Core's lock: every registry package core pins, by name.
#[derive(Debug, Clone, Default)]
pub struct CoreLock {
    /// Where the lock was read from.
    pub path: PathBuf,
    /// Registry packages by normalised name.
    pub packages: BTreeMap<PackageName, LockedPackage>,
}

#[derive(Deserialize)]
struct RawLock {
    #[serde(default)]
    package: Vec<RawPackage>,
}

#[derive(Deserialize)]
struct RawPackage {
    name: String,
    version: Option<String>,
    source: Option<RawSource>,
}

#[derive(Deserialize)]
struct RawSource {
    registry: Option<String>,
}

impl CoreLock {
    /// Reads `<dir>/uv.lock`.
    pub fn load(dir: &Path) -> Result<CoreLock, CoreError> {
        let path = dir.join("uv.lock");
        let text = read_limited_text(&path, LOCK_LIMIT).map_err(|source| CoreError::Read {
            path: path.clone(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses the text of a `uv.lock`.
    pub fn parse(text: &str, path: PathBuf) -> Result<CoreLock, CoreError> {
        let raw: RawLock = toml::from_str(text).map_err(|e| CoreError::Parse {
            path: path.clone(),
            message: e.message().to_string(),
        })?;
        let mut packages = BTreeMap::new();
        for p in raw.package {
            let Some(registry) = p.source.and_then(|s| s.registry) else {
                continue;
            };
            let (Ok(name), Some(Ok(version))) = (
                PackageName::from_str(&p.name),
                p.version.as_deref().map(Version::from_str),
            ) else {
                continue;
            };
            packages.insert(
                name.clone(),
                LockedPackage {
                    name,
                    version,
                    registry: Some(registry),
                },
            );
        }
        Ok(CoreLock { path, packages })
    }

    /// The locked registry package of that name, if core pins one.
    pub fn get(&self, name: &PackageName) -> Option<&LockedPackage> {
        self.packages.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_registry_packages_only() {
        let text = r#"
version = 1
requires-python = ">=3.11"

[[package]]
name = "hermes-agent"
version = "0.19.0"
source = { editable = "." }

[[package]]
name = "HTTPX"
version = "0.28.1"
source = { registry = "https://pypi.org/simple" }
"#;
        let lock = CoreLock::parse(text, PathBuf::from("uv.lock")).unwrap();
        assert_eq!(lock.packages.len(), 1);
        let httpx = lock.get(&PackageName::from_str("httpx").unwrap()).unwrap();
        assert_eq!(httpx.version.to_string(), "0.28.1");
    }
}

/// Core's `pyproject.toml`: its identity, dependencies, extras and quarantine exemptions.
#[derive(Debug, Clone, Default)]
pub struct CoreProject {
    /// Where it was read from.
    pub path: PathBuf,
    /// `[project].name`.
    pub name: String,
    /// `[project].version`.
    pub version: Option<String>,
    /// `[project].dependencies`, as written.
    pub dependencies: Vec<String>,
    /// `[project.optional-dependencies]`, as written.
    pub optional_dependencies: BTreeMap<String, Vec<String>>,
    /// `[tool.uv] exclude-newer` as written (informational).
    pub exclude_newer: Option<String>,
    /// `[tool.uv] exclude-newer-package`: package → `"false"` or a date/timestamp, as written.
    pub exclude_newer_package: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct RawPyproject {
    project: Option<RawProject>,
    tool: Option<RawTool>,
}

#[derive(Deserialize)]
struct RawProject {
    name: Option<String>,
    version: Option<String>,
    #[serde(default)]
    dependencies: Vec<String>,
    #[serde(default, rename = "optional-dependencies")]
    optional_dependencies: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
struct RawTool {
    uv: Option<RawUv>,
}

#[derive(Deserialize)]
struct RawUv {
    #[serde(rename = "exclude-newer")]
    exclude_newer: Option<String>,
    #[serde(default, rename = "exclude-newer-package")]
    exclude_newer_package: BTreeMap<String, toml::Value>,
}

impl CoreProject {
    /// Reads `<dir>/pyproject.toml`.
    pub fn load(dir: &Path) -> Result<CoreProject, CoreError> {
        let path = dir.join("pyproject.toml");
        let text = read_limited_text(&path, LOCK_LIMIT).map_err(|source| CoreError::Read {
            path: path.clone(),
            source,
        })?;
        let raw: RawPyproject = toml::from_str(&text).map_err(|e| CoreError::Parse {
            path: path.clone(),
            message: e.message().to_string(),
        })?;
        let project = raw.project.ok_or_else(|| CoreError::Parse {
            path: path.clone(),
            message: "no [project] table".to_string(),
        })?;
        let uv = raw.tool.and_then(|t| t.uv);
        let mut exclude_newer_package = BTreeMap::new();
        let mut exclude_newer = None;
        if let Some(uv) = uv {
            exclude_newer = uv.exclude_newer;
            for (name, value) in uv.exclude_newer_package {
                let text = match value {
                    toml::Value::Boolean(false) => "false".to_string(),
                    toml::Value::String(s) => s,
                    toml::Value::Datetime(d) => d.to_string(),
                    other => {
                        return Err(CoreError::Parse {
                            path: path.clone(),
                            message: format!(
                                "[tool.uv] exclude-newer-package.{name} must be false or a date, not {other}"
                            ),
                        });
                    }
                };
                exclude_newer_package.insert(name, text);
            }
        }
        Ok(CoreProject {
            path,
            name: project.name.unwrap_or_else(|| "hermes-agent".to_string()),
            version: project.version,
            dependencies: project.dependencies,
            optional_dependencies: project.optional_dependencies,
            exclude_newer,
            exclude_newer_package,
        })
    }
}
