//! Portable packages (Agent Plugins v1.0.0): `plugin.json`, `skills/*/SKILL.md`, `mcp.json`
//! and the Hermes extension. No Python is imported.

pub mod extension;
pub mod mcp;
pub mod namespace;
pub mod plugin_json;
pub mod skills;

use crate::diag::Diagnostic;
use crate::pkgfs::PackageRoot;

pub use extension::HermesExtension;
pub use mcp::{McpConfig, McpServer, Transport, Trust};
pub use plugin_json::PluginJson;
pub use skills::Skill;

/// A loaded portable package.
#[derive(Debug, Clone, PartialEq)]
pub struct PortablePackage {
    /// The manifest; `None` when the package is rejected.
    pub manifest: Option<PluginJson>,
    /// The Hermes extension, when present and valid.
    pub extension: Option<HermesExtension>,
    /// Valid skills (what would load if the package is accepted).
    pub skills: Vec<Skill>,
    /// MCP configuration (valid servers carry their declared trust).
    pub mcp: McpConfig,
    /// The skill namespace `agent-plugin-<slug>-<hash>`.
    pub namespace: String,
    /// Whether the package is accepted (plugin.json and the Hermes extension are valid).
    pub accepted: bool,
}

impl PortablePackage {
    /// Reads every part of the package at `root`. `key_for` turns the manifest name into the
    /// plugin key (flat layouts use the name; category layouts ignore it).
    pub fn load(
        root: &PackageRoot,
        key_for: impl Fn(Option<&str>) -> String,
        out: &mut Vec<Diagnostic>,
    ) -> (String, PortablePackage) {
        let manifest = plugin_json::read(root, out);
        let skills = skills::read(root, out);
        let mut mcp = mcp::read(root, out);
        let mut accepted = manifest.is_some();
        let mut extension = None;
        if let Some(ns) = manifest.as_ref().and_then(|m| m.hermes.as_ref()) {
            match extension::read(ns, &mcp, out) {
                Some(ext) => {
                    for decl in &ext.servers {
                        if let Some(server) = mcp.servers.iter_mut().find(|s| s.name == decl.name) {
                            server.trust = decl.trust;
                        }
                    }
                    extension = Some(ext);
                }
                None => accepted = false,
            }
        }
        let key = key_for(manifest.as_ref().map(|m| m.name.value.as_str()));
        let namespace = namespace::skill_namespace(&key);
        (
            key,
            PortablePackage {
                manifest,
                extension,
                skills,
                mcp,
                namespace,
                accepted,
            },
        )
    }

    /// The skills that would load (none when the package is rejected).
    pub fn loaded_skills(&self) -> &[Skill] {
        if self.accepted { &self.skills } else { &[] }
    }

    /// The MCP servers that would load (none when the package is rejected).
    pub fn loaded_servers(&self) -> &[McpServer] {
        if self.accepted {
            &self.mcp.servers
        } else {
            &[]
        }
    }
}
