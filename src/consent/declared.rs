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
        if let Ok(loaded) = package::load_dir(dir, Mode::Runtime)
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
