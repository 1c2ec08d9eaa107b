//! What the read-only queries return: typed, serialisable views (their JSON is what
//! `show`, `env` and `capabilities` print under `--json`, following
//! `catalog-schema/{show,env,capabilities}.schema.json`); the CLI only renders them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::state::installed::InstalledPlugin;

/// `env`: what the agent needs to load the current generation (GEN-9).
#[derive(Debug, Clone, Serialize)]
pub struct EnvView {
    /// The generation number.
    pub generation: u64,
    /// Its directory.
    pub path: PathBuf,
    /// The profile.
    pub profile: String,
    /// The generation's interpreter.
    pub python: PythonView,
    /// Hermes core, as [`super::query::core_of`] shows it.
    pub core: String,
    /// What to append to `sys.path`.
    pub sys_path: Vec<PathBuf>,
    /// The profile's plugins.
    pub plugins: Vec<EnvPlugin>,
    /// Plugins the profile enables that hermes-plugins does not manage (`profiles.<p>.external`):
    /// placed by hand in the profile's `plugins/`, loaded from there by Hermes itself.
    pub external: Vec<ExternalPlugin>,
    /// The file to hold a shared lock on while the plugins run.
    pub lease: PathBuf,
}

/// The interpreter of a generation.
#[derive(Debug, Clone, Serialize)]
pub struct PythonView {
    /// The venv's interpreter.
    pub executable: PathBuf,
    /// Its version.
    pub version: String,
    /// The base interpreter it was made from.
    pub base: String,
}

/// An external plugin of [`EnvView`]: its name and where Hermes finds it. Its requirements are
/// in the generation's environment; its code is not pinned, validated or capability-gated.
#[derive(Debug, Clone, Serialize)]
pub struct ExternalPlugin {
    /// The name the profile enables.
    pub name: String,
    /// Its directory in the profile's `plugins/`.
    pub path: PathBuf,
}

/// One plugin of [`EnvView`].
#[derive(Debug, Clone, Serialize)]
pub struct EnvPlugin {
    /// Its key.
    pub key: String,
    /// Its name.
    pub name: String,
    /// `native` / `portable`.
    pub kind: crate::package::Kind,
    /// Manifest format.
    pub format: crate::package::Format,
    /// Its directory in the generation.
    pub path: PathBuf,
    /// Its tree hash (SRI).
    pub tree: String,
    /// Capabilities the profile granted.
    pub granted_capabilities: Vec<String>,
    /// Whether it went through catalog review.
    pub reviewed: bool,
    /// `false` when a `requires_env` variable is unset (absent: it loads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<bool>,
    /// The `requires_env` variables that are unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_env: Option<Vec<String>>,
    /// Portable plugins: `PLUGIN_ROOT` and `PLUGIN_DATA`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, PathBuf>>,
    /// Portable plugins: their MCP servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<McpServerView>>,
}

/// An MCP server of a portable plugin.
#[derive(Debug, Clone, Serialize)]
pub struct McpServerView {
    /// Its name.
    pub name: String,
    /// `stdio`, `http`, …
    pub transport: String,
    /// Its trust level.
    pub trust: String,
}

/// `capabilities NAME`: declared and granted capabilities with their risks.
#[derive(Debug, Clone, Serialize)]
pub struct CapabilitiesView {
    /// The plugin key.
    pub plugin: String,
    /// The profile.
    pub profile: String,
    /// Each capability declared or granted.
    pub capabilities: Vec<CapabilityRow>,
    /// The consent record.
    pub consent: ConsentRecord,
    /// That capabilities are not a sandbox.
    pub note: &'static str,
}

/// One capability of [`CapabilitiesView`].
#[derive(Debug, Clone, Serialize)]
pub struct CapabilityRow {
    /// Its id.
    pub id: String,
    /// Whether the manifest declares it.
    pub declared: bool,
    /// Whether the profile granted it.
    pub granted: bool,
    /// What it lets the plugin do.
    pub risk: &'static str,
}

/// The `capabilities_consent` record of a profile's `config.yaml`.
#[derive(Debug, Clone, Serialize)]
pub struct ConsentRecord {
    /// The declared-set hash answered.
    pub hash: Option<String>,
    /// When.
    pub granted_at: Option<String>,
}

/// `show NAME`: the record, the manifest summary and where it is active.
#[derive(Debug, Clone, Serialize)]
pub struct ShowView {
    /// The installed record.
    pub plugin: InstalledPlugin,
    /// Its store tree.
    pub store_path: PathBuf,
    /// Its capabilities in the current profile.
    pub capabilities: Vec<CapabilityRow>,
    /// The consent record.
    pub consent: ConsentRecord,
    /// Its `requires_env` variables that are unset.
    pub requires_env: MissingEnv,
    /// Held back when a `requires_env` variable is unset (`disabled (missing: …)`), or not
    /// known; absent otherwise.
    pub status: Option<ProfileStatus>,
    /// What the manifest declares (null when it cannot be read).
    pub manifest: Option<ManifestSummary>,
    /// The profiles whose current generation enables it.
    pub enabled_in: Vec<String>,
    /// Its Python dependencies.
    pub dependencies: DependenciesView,
    /// Whether it went through catalog review.
    pub reviewed: bool,
    /// Its audit entries (`show --audit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<Vec<crate::consent::audit::AuditEntry>>,
}

/// The unset `requires_env` variables of [`ShowView`].
#[derive(Debug, Clone, Serialize)]
pub struct MissingEnv {
    /// The names.
    pub missing: Vec<String>,
}

/// What a manifest declares, for [`ShowView`].
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ManifestSummary {
    /// A native plugin.
    Native {
        /// Its description.
        description: Option<String>,
        /// Tools it provides.
        provides_tools: Vec<String>,
        /// Hooks it provides.
        provides_hooks: Vec<String>,
        /// Variables it requires.
        requires_env: Vec<String>,
        /// Providers it requires sign-in with.
        requires_auth: Vec<String>,
        /// Capabilities it declares.
        capabilities: Vec<String>,
    },
    /// A portable package.
    Portable {
        /// Its skills.
        skills: Vec<String>,
        /// Its MCP servers.
        mcp_servers: Vec<String>,
    },
}

/// The dependencies of [`ShowView`].
#[derive(Debug, Clone, Serialize)]
pub struct DependenciesView {
    /// As the manifest declares them.
    pub declared: Vec<String>,
    /// What the current generation installed for them (`name version`).
    pub installed: Vec<String>,
}

/// Where a plugin stands in one profile (`list`; `show` for a held-back one). Serialised as
/// the words `list` prints (`enabled`, `disabled (pending sync)`, `disabled (missing: X)`,
/// `blocked (enabled; on the catalog's removal list)`, …), so a reader of the JSON and a
/// person read the same thing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileStatus {
    /// Selected in the profile; `pending` until a generation publishes the selection.
    Enabled {
        /// Selected, not published yet (`sync` publishes it).
        pending: bool,
    },
    /// Not selected; `pending` while the current generation still enables it.
    Disabled {
        /// Published enabled, deselected since.
        pending: bool,
    },
    /// Selected, and held back: these `requires_env` variables are set nowhere.
    MissingEnv(Vec<String>),
    /// Selected; `requires_env` could not be checked (why).
    Unknown(String),
    /// On the catalog's removal list (its status otherwise).
    Blocked(Box<ProfileStatus>),
    /// Enabled by hand in the profile's `plugins/`: in the generation, not managed.
    External,
}

impl std::fmt::Display for ProfileStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileStatus::Enabled { pending: false } => f.write_str("enabled"),
            ProfileStatus::Enabled { pending: true } => f.write_str("enabled (pending sync)"),
            ProfileStatus::Disabled { pending: false } => f.write_str("disabled"),
            ProfileStatus::Disabled { pending: true } => f.write_str("disabled (pending sync)"),
            ProfileStatus::MissingEnv(names) => {
                write!(f, "disabled (missing: {})", names.join(", "))
            }
            ProfileStatus::Unknown(why) => {
                write!(f, "unknown ({why}; requires_env cannot be checked)")
            }
            ProfileStatus::Blocked(inner) => {
                write!(f, "blocked ({inner}; on the catalog's removal list)")
            }
            ProfileStatus::External => f.write_str("enabled (external)"),
        }
    }
}

impl serde::Serialize for ProfileStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod status_tests {
    use super::ProfileStatus;

    /// The words are the JSON contract (`list`'s `status`, `show`'s): each state has its own.
    #[test]
    fn each_state_reads_as_list_prints_it() {
        let cases = [
            (ProfileStatus::Enabled { pending: false }, "enabled"),
            (
                ProfileStatus::Enabled { pending: true },
                "enabled (pending sync)",
            ),
            (ProfileStatus::Disabled { pending: false }, "disabled"),
            (
                ProfileStatus::Disabled { pending: true },
                "disabled (pending sync)",
            ),
            (
                ProfileStatus::MissingEnv(vec!["A".into(), "B".into()]),
                "disabled (missing: A, B)",
            ),
            (
                ProfileStatus::Unknown(".env: denied".into()),
                "unknown (.env: denied; requires_env cannot be checked)",
            ),
            (
                ProfileStatus::Blocked(Box::new(ProfileStatus::Enabled { pending: false })),
                "blocked (enabled; on the catalog's removal list)",
            ),
            (ProfileStatus::External, "enabled (external)"),
        ];
        for (status, words) in cases {
            assert_eq!(status.to_string(), words);
            assert_eq!(serde_json::to_value(&status).unwrap(), words);
        }
    }
}
