//! `<home>/pm/installed.json` (STATE-2): every plugin the package manager installed, with its
//! provenance and the store tree holding its code. Written atomically; sorted keys, so the
//! same state gives the same bytes. Schema: `catalog-schema/installed.schema.json`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::source::Provenance;

/// The file format version.
pub const INSTALLED_VERSION: u32 = 1;

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledPlugin {
    /// The plugin key (the name Hermes config uses); never a path (checked when read).
    #[serde(deserialize_with = "crate::home::key::deserialize")]
    pub key: String,
    /// The manifest name.
    pub name: String,
    /// The declared version, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `native` or `portable`.
    pub kind: crate::package::Kind,
    /// `native-v1`, `native-v2` or `portable`.
    pub format: crate::package::Format,
    /// Where it came from.
    pub source: Provenance,
    /// The store tree (SRI NAR sha256).
    pub tree: String,
    /// The store directory name.
    pub store_key: String,
    /// Its Python requirements as declared (PEP 508 strings).
    #[serde(default)]
    pub requirements: Vec<String>,
    /// When it was installed or last updated (RFC 3339).
    pub installed_at: String,
    /// The core version `--ignore-requires-hermes` published this plugin for although its
    /// `requires_hermes` excludes it (checked again when core changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_hermes_ignored_for: Option<String>,
    /// The Hermes internals its code patches that the user approved (`--allow-core-patch`
    /// or at the prompt): an update asks again only for targets not in this list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub core_patches: Vec<String>,
    /// The Hermes releases (and `main`) on which every call `register(ctx)` makes fits
    /// `PluginContext` (validate's `compatibility.loads_on`), recorded when it was installed:
    /// each publication judges the plugin against the core's version with it. Empty: not
    /// recorded (installed by an older hermes-plugins), not judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads_on: Vec<String>,
    /// Security findings the user accepted for this plugin (`--accept-finding`), each bound
    /// to the content of the flagged file: an update keeps the acceptance only while that
    /// file is unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_findings: Vec<AcceptedFinding>,
}

/// One accepted security finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcceptedFinding {
    /// The finding's id (`<rule>@<file>:<line>`).
    pub id: String,
    /// The SHA-256 (hex) of the flagged file when it was accepted.
    pub sha256: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installed {
    /// Format version.
    pub version: u32,
    /// Plugins by key.
    pub plugins: BTreeMap<String, InstalledPlugin>,
}

impl Default for Installed {
    fn default() -> Self {
        Installed {
            version: INSTALLED_VERSION,
            plugins: BTreeMap::new(),
        }
    }
}

/// Why the file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum InstalledError {
    /// Not readable.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// Not our format.
    #[error("{path} is damaged: {message} (restore it from {path}.bak or reinstall the plugins)")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl Installed {
    /// Reads the file; a missing file is an empty state.
    pub fn read(path: &Path) -> Result<Installed, InstalledError> {
        let text = match crate::files::read_regular_text(path, crate::files::STATE_LIMIT) {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(Installed::default()),
            Err(source) => {
                return Err(InstalledError::Io {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        let parsed: Installed =
            serde_json::from_str(&text).map_err(|e| InstalledError::Format {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        if parsed.version != INSTALLED_VERSION {
            return Err(InstalledError::Format {
                path: path.display().to_string(),
                message: format!(
                    "version {} is not supported (this hermes-plugins writes {INSTALLED_VERSION})",
                    parsed.version
                ),
            });
        }
        for (key, plugin) in &parsed.plugins {
            if *key != plugin.key {
                return Err(InstalledError::Format {
                    path: path.display().to_string(),
                    message: format!(
                        "the entry `{}` records the key `{}`",
                        crate::text::escape(key),
                        crate::text::escape(&plugin.key)
                    ),
                });
            }
            if !crate::store::Store::is_key(&plugin.store_key) {
                return Err(InstalledError::Format {
                    path: path.display().to_string(),
                    message: format!(
                        "`{key}` has an invalid store key `{}`",
                        crate::text::escape(&plugin.store_key)
                    ),
                });
            }
        }
        Ok(parsed)
    }

    /// The JSON text (pretty, trailing newline).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Finds a plugin by key, else by manifest name, else by the catalog entry it was installed
    /// as (when one plugin was).
    pub fn find(&self, name: &str) -> Option<&InstalledPlugin> {
        self.plugins
            .get(name)
            .or_else(|| self.plugins.values().find(|p| p.name == name))
            .or_else(|| {
                // The catalog entry it was installed as (`install weather` of an entry whose
                // plugin calls itself `weather-demo`): the name the user typed.
                let mut from_entry = self.plugins.values().filter(|p| {
                    matches!(&p.source.spec, crate::source::SourceSpec::Catalog { name: entry } if entry == name)
                });
                match (from_entry.next(), from_entry.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            })
    }
}
