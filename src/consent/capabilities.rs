//! Capability grants (CAP-1…4, CAP-9, STATE-1) as they live in a profile's `config.yaml`:
//! `plugins.entries.<key>.granted_capabilities`, `capabilities_consent {hash, granted_at}`
//! (hash = SHA-256 of the sorted, newline-joined declared ids; `source` = where the plugin
//! that was granted came from), and the legacy `allow_*` keys mirrored so Hermes versions
//! that read only those agree. A grant belongs to a source: the same key from another source
//! is asked again.

use std::collections::BTreeSet;

use crate::known::{self, Capability};
use crate::state::config_edit::{self, EditError, EntryValue};

/// The grants recorded for one plugin in one profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Granted capability ids (from `granted_capabilities` and legacy keys set to true).
    pub granted: BTreeSet<String>,
    /// The declared-set hash consented to.
    pub hash: Option<String>,
    /// When.
    pub granted_at: Option<String>,
    /// The source the grants were given to (absent in records written before it was kept,
    /// or by hand).
    pub source: Option<String>,
}

impl Grants {
    /// Whether these grants were given to a plugin from another source than `origin`.
    pub fn for_another_source(&self, origin: &str) -> bool {
        self.source.as_deref().is_some_and(|s| s != origin)
    }
}

/// The known capabilities among `declared`, and the unknown ids (ignored with a warning).
pub fn split_known(declared: &BTreeSet<String>) -> (Vec<&'static Capability>, Vec<String>) {
    let mut known_caps = Vec::new();
    let mut unknown = Vec::new();
    for id in declared {
        match known::capability(id) {
            Some(c) => known_caps.push(c),
            None => unknown.push(id.clone()),
        }
    }
    (known_caps, unknown)
}

/// SHA-256 (hex) of the sorted, newline-joined declared ids.
pub fn declared_hash(declared: &BTreeSet<String>) -> String {
    let joined = declared.iter().cloned().collect::<Vec<_>>().join("\n");
    crate::hash::sha256_hex(joined.as_bytes())
}

fn legacy_path(c: &Capability) -> Vec<&'static str> {
    c.legacy_key.split('.').collect()
}

/// Reads a plugin's grants from a config text.
pub fn read(text: &str, key: &str) -> Result<Grants, EditError> {
    let mut grants = Grants::default();
    if let Some(serde_json::Value::Array(items)) =
        config_edit::read_entry(text, key, &["granted_capabilities"])?
    {
        grants
            .granted
            .extend(items.iter().filter_map(|v| v.as_str().map(str::to_string)));
    }
    for c in known::CAPABILITIES {
        if config_edit::read_entry(text, key, &legacy_path(c))?
            == Some(serde_json::Value::Bool(true))
        {
            grants.granted.insert(c.id.to_string());
        }
    }
    if let Some(consent) = config_edit::read_entry(text, key, &["capabilities_consent"])? {
        grants.hash = consent["hash"].as_str().map(str::to_string);
        grants.granted_at = consent["granted_at"].as_str().map(str::to_string);
        grants.source = consent["source"].as_str().map(str::to_string);
    }
    Ok(grants)
}

/// Writes `granted` for `key`: the list, the consent record for `declared` at `now` given to
/// the plugin from `source`, and the legacy keys (true when granted, removed otherwise).
pub fn write(
    text: &str,
    key: &str,
    granted: &BTreeSet<String>,
    declared: &BTreeSet<String>,
    now: &str,
    source: &str,
) -> Result<String, EditError> {
    let mut out = config_edit::set_entry(
        text,
        key,
        &["granted_capabilities"],
        &EntryValue::List(granted.iter().cloned().collect()),
    )?;
    out = config_edit::set_entry(
        &out,
        key,
        &["capabilities_consent"],
        &EntryValue::Map(vec![
            ("hash".to_string(), EntryValue::Str(declared_hash(declared))),
            ("granted_at".to_string(), EntryValue::Str(now.to_string())),
            ("source".to_string(), EntryValue::Str(source.to_string())),
        ]),
    )?;
    for c in known::CAPABILITIES {
        let path = legacy_path(c);
        if granted.contains(c.id) {
            out = config_edit::set_entry(&out, key, &path, &EntryValue::Bool(true))?;
        } else if config_edit::read_entry(&out, key, &path)?.is_some() {
            out = config_edit::remove_entry(&out, key, &path)?;
        }
    }
    Ok(out)
}

/// Revokes everything `key` holds in a config text — `granted_capabilities`,
/// `capabilities_consent` and every legacy `allow_*` key — leaving the rest of its entry (its
/// settings) alone. Returns the new text and what was granted before.
pub fn revoke_all(text: &str, key: &str) -> Result<(String, BTreeSet<String>), EditError> {
    let before = read(text, key)?.granted;
    let mut out = text.to_string();
    for path in [&["granted_capabilities"][..], &["capabilities_consent"][..]] {
        out = config_edit::remove_entry(&out, key, path)?;
    }
    for c in known::CAPABILITIES {
        out = config_edit::remove_entry(&out, key, &legacy_path(c))?;
    }
    Ok((out, before))
}
