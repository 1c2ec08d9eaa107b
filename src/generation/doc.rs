//! `generation.json` (GEN-2): what a generation holds, in the form the agent reads. Schema:
//! `catalog-schema/generation.schema.json`. Keys are sorted where they are maps, lists are
//! sorted, so the same inputs give the same bytes (except `created`, which honours
//! `SOURCE_DATE_EPOCH`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::resolve::lock::Lock;
use crate::source::Provenance;

/// The format version of `generation.json`.
pub const GENERATION_FORMAT: u32 = 1;

/// Hermes core's identity, when the resolution included it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreIdentity {
    /// Project name (`hermes-agent`).
    pub name: String,
    /// Project version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// sha256 of what pins core: its `uv.lock`, or (installed) its distributions' list.
    pub lock_sha256: String,
    /// Extras selected.
    #[serde(default)]
    pub extras: Vec<String>,
    /// Where core came from: `checkout <dir>` or `installed <python>` (absent in older
    /// generations: a checkout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl CoreIdentity {
    /// `hermes-agent 0.19.0 (installed /venv/bin/python)`.
    pub fn describe(&self) -> String {
        let mut text = format!("{} {}", self.name, self.version.as_deref().unwrap_or("?"));
        if let Some(origin) = &self.origin {
            text.push_str(&format!(" ({origin})"));
        }
        text
    }
}

/// The package indexes a generation was resolved and built from (credentials never
/// recorded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRecord {
    /// The primary index (absent: PyPI, unless `no_index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `--no-index`: only the find-links locations were read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_index: bool,
    /// Further indexes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<String>,
    /// Find-links locations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub find_links: Vec<String>,
}

/// The Python environment inside the generation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// The base interpreter the venv was made from.
    pub base: String,
    /// `major.minor.patch`.
    pub version: String,
    /// The venv, relative to the generation directory (`venv`).
    pub venv: String,
    /// The venv's interpreter, relative (`venv/bin/python`).
    pub executable: String,
    /// The directory to put on `sys.path`, relative (`venv/lib/python3.11/site-packages`).
    pub site_packages: String,
}

/// One plugin in the generation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenPlugin {
    /// Plugin key; never a path (checked when read).
    #[serde(deserialize_with = "crate::home::key::deserialize")]
    pub key: String,
    /// Manifest name.
    pub name: String,
    /// Declared version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `native` or `portable`.
    pub kind: crate::package::Kind,
    /// `native-v1`, `native-v2`, `portable`.
    pub format: crate::package::Format,
    /// Provenance (source, commit, catalog entry).
    pub source: Provenance,
    /// The exact commit, when known (copied from the provenance for readers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// SRI NAR sha256 of the plugin tree.
    pub tree: String,
    /// The store directory name.
    pub store_key: String,
    /// The plugin directory, relative to the generation (`plugins/<key>`).
    pub path: String,
    /// The environment variables its manifest requires (`requires_env` names): a reader
    /// does not load the plugin while one is unset (absent in older generations: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires_env: Vec<String>,
}

impl GenPlugin {
    /// The generation's record of an installed plugin: its identity, provenance and store
    /// tree as `installed.json` has them, placed at [`plugin_path`], with the names of the
    /// variables it requires (`requires_env`).
    pub fn of(
        installed: &crate::state::installed::InstalledPlugin,
        requires_env: Vec<String>,
    ) -> GenPlugin {
        GenPlugin {
            key: installed.key.clone(),
            name: installed.name.clone(),
            version: installed.version.clone(),
            kind: installed.kind,
            format: installed.format,
            source: installed.source.clone(),
            commit: installed.source.commit.clone(),
            tree: installed.tree.clone(),
            store_key: installed.store_key.clone(),
            path: plugin_path(&installed.key),
            requires_env,
        }
    }
}

/// What one profile has enabled in this generation, and what it granted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileSelection {
    /// Enabled plugin keys, sorted.
    pub enabled: Vec<String>,
    /// Granted capability ids per plugin key.
    #[serde(default)]
    pub grants: BTreeMap<String, Vec<String>>,
    /// Plugins enabled in the profile's `config.yaml` that are not managed here but sit in the
    /// profile's own `plugins/` directory (the upstream layout): Hermes loads them from there
    /// as they are; their requirements are resolved into this generation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external: Vec<String>,
}

/// The whole `generation.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationDoc {
    /// Format version.
    pub format: u32,
    /// The generation number.
    pub number: u64,
    /// The generation that was current when this one was built.
    #[serde(default)]
    pub parent: Option<u64>,
    /// When it was built (RFC 3339; `SOURCE_DATE_EPOCH` when set).
    pub created: String,
    /// What built it (`enable weather`).
    pub operation: String,
    /// sha256 over everything that decides the content; equal digests mean a no-op (GEN-5).
    pub inputs_digest: String,
    /// sha256 over what decides the resolution alone (core, extras, interpreter, indexes,
    /// quarantine window, every requirement): equal digests reuse this generation's lock
    /// without resolving (a selection, grant or dependency-free plugin change never touches
    /// the network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_digest: Option<String>,
    /// The indexes (absent in older generations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexRecord>,
    /// Hermes core, if the resolution included it.
    #[serde(default)]
    pub core: Option<CoreIdentity>,
    /// The Python environment.
    pub python: PythonEnv,
    /// The plugins (every plugin enabled in at least one profile), sorted by key.
    pub plugins: Vec<GenPlugin>,
    /// Per-profile selections.
    pub profiles: BTreeMap<String, ProfileSelection>,
    /// The resolved lock installed in the venv.
    pub lock: Lock,
}

/// Why a generation could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DocError {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl GenerationDoc {
    /// Reads `generation.json` from a generation directory.
    pub fn read(dir: &Path) -> Result<GenerationDoc, DocError> {
        let path = dir.join("generation.json");
        let fail = |message: String| DocError {
            path: path.display().to_string(),
            message,
        };
        let text = crate::files::read_regular_text(&path, crate::files::STATE_LIMIT)
            .map_err(|e| fail(e.to_string()))?
            .ok_or_else(|| fail("missing".to_string()))?;
        let doc: GenerationDoc = serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
        doc.check_paths().map_err(fail)?;
        Ok(doc)
    }

    /// Checks that every path the document records stays inside the generation: plugin
    /// paths are exactly `plugins/<key>`, store keys are store keys, and the Python paths are
    /// relative without `..` (a tampered document must not point readers elsewhere).
    fn check_paths(&self) -> Result<(), String> {
        for p in &self.plugins {
            if p.path != plugin_path(&p.key) {
                return Err(format!(
                    "plugin `{}` has the path `{}`; it must be `plugins/{}`",
                    p.key,
                    crate::text::escape(&p.path),
                    p.key
                ));
            }
            if !crate::store::Store::is_key(&p.store_key) {
                return Err(format!(
                    "plugin `{}` has an invalid store key `{}`",
                    p.key,
                    crate::text::escape(&p.store_key)
                ));
            }
        }
        for (what, rel) in [
            ("python.venv", &self.python.venv),
            ("python.executable", &self.python.executable),
            ("python.site_packages", &self.python.site_packages),
        ] {
            let inside = !rel.is_empty()
                && Path::new(rel)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !inside {
                return Err(format!(
                    "{what} `{}` is not a relative path inside the generation",
                    crate::text::escape(rel)
                ));
            }
        }
        for (name, selection) in &self.profiles {
            for key in selection.enabled.iter().chain(selection.grants.keys()) {
                crate::home::check_key(key)
                    .map_err(|e| format!("profile `{}`: {e}", crate::text::escape(name)))?;
            }
        }
        Ok(())
    }

    /// The JSON text (pretty, trailing newline).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The plugin with this key.
    pub fn plugin(&self, key: &str) -> Option<&GenPlugin> {
        self.plugins.iter().find(|p| p.key == key)
    }
}

/// The creation time: `epoch` (`SOURCE_DATE_EPOCH`, seconds) if given, else now.
pub fn created_at(epoch: Option<i64>) -> String {
    let ts = epoch
        .and_then(|secs| jiff::Timestamp::from_second(secs).ok())
        .unwrap_or_else(jiff::Timestamp::now);
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `plugins/<key>`: where a plugin sits inside a generation.
pub fn plugin_path(key: &str) -> String {
    format!("plugins/{key}")
}
