//! What a plugin asks of the user, read from its manifest: capability ids (CAP-1), the
//! `requires_env` variables (CAP-10), and the `requires_hermes`/`requires_plugins` constraints
//! consent and requirements are decided against. Read from a store tree; a tree that does
//! not load as a native plugin declares nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::package::{self, Content, Mode};

/// One plugin's declared facts, from its store tree.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    /// Capability ids.
    pub capabilities: BTreeSet<String>,
    /// `requires_env` entries.
    pub env: Vec<EnvRequirement>,
    /// `requires_hermes`, as written.
    pub requires_hermes: Option<String>,
    /// `requires_plugins`: the other plugin's id and its `version_range`, as written.
    pub requires_plugins: Vec<(String, Option<String>)>,
}

/// A `requires_env` entry: name, description, URL, secret.
pub type EnvRequirement = (String, Option<String>, Option<String>, bool);

impl Declared {
    /// Reads what the plugin in `dir` declares.
    pub fn read(dir: &Path) -> Declared {
        let mut d = Declared::default();
        let loaded = package::load_dir(dir, Mode::Runtime).ok();
        if let Some(loaded) = &loaded
            && let Content::Native(n) = &loaded.content
            && let Some(m) = &n.manifest
        {
            d.capabilities = m.capabilities.iter().map(|c| c.value.clone()).collect();
            d.env = m
                .requires_env
                .iter()
                .map(|e| {
                    (
                        e.name.value.clone(),
                        e.description.clone(),
                        e.url.clone(),
                        e.secret,
                    )
                })
                .collect();
            d.requires_hermes = m.requires_hermes.as_ref().map(|s| s.value.clone());
            d.requires_plugins = m
                .requires_plugins
                .iter()
                .map(|r| {
                    (
                        r.id.value.clone(),
                        r.version_range.as_ref().map(|v| v.value.clone()),
                    )
                })
                .collect();
        }
        if let Some(loaded) = &loaded
            && let Content::Pip(p) = &loaded.content
        {
            // Its requirement on `hermes-agent` is one on core. It declares capabilities as
            // Hermes 0.22 reads them: entries `<plugin-id>.<capability-id>` of
            // `hermes_agent.plugin_capabilities` pointing at the plugin's own object.
            d.requires_hermes = p.requires_hermes.clone().filter(|s| !s.is_empty());
            if let Some(plugin) = p.plugins.first() {
                let prefix = format!("{}.", plugin.name);
                d.capabilities = p
                    .capabilities
                    .iter()
                    .filter(|c| c.value == plugin.value)
                    .filter_map(|c| c.name.strip_prefix(&prefix).map(str::to_string))
                    .collect();
            }
        }
        d
    }

    /// The `requires_env` entries met neither by a variable set in the process (`set`) nor
    /// by a value in `.env` (`dotenv`, as parsed).
    pub fn missing_env<'a>(
        &'a self,
        set: &BTreeSet<String>,
        dotenv: &BTreeMap<String, String>,
    ) -> Vec<&'a EnvRequirement> {
        self.env
            .iter()
            .filter(|(name, ..)| !set.contains(name) && !dotenv.contains_key(name))
            .collect()
    }
}
