//! Writing a pack (`pack export`): block YAML that Hermes 0.22's `parse_pack` reads back.
//! Strings are written as JSON strings (a valid YAML double-quoted scalar: nothing in them is
//! read as another type), keys plain where YAML reads them back as the same string, config
//! values in JSON flow style (valid YAML). Secret-shaped and reserved keys are never written.

use serde_json::Value as J;

/// One exported plugin: where it comes from, pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedEntry {
    /// `owner/repo` for GitHub, else the git URL.
    pub repo: String,
    /// The commit (40 hex).
    pub commit: String,
    /// The directory inside the repository.
    pub subdir: Option<String>,
}

/// What `pack export` writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The pack's name.
    pub name: String,
    /// The plugins.
    pub plugins: Vec<ExportedEntry>,
    /// Config seeds per plugin id (`plugins.entries.<id>` as JSON; forbidden keys are dropped
    /// here, at any depth).
    pub config: Vec<(String, J)>,
    /// Plugins left out, and why (written as comments on top).
    pub warnings: Vec<String>,
}

/// The pack's YAML text.
pub fn render(pack: &Exported) -> String {
    let mut out = String::new();
    for w in &pack.warnings {
        out.push_str(&format!(
            "# WARNING (not exported): {}\n",
            w.replace('\n', " ")
        ));
    }
    out.push_str(&format!("name: {}\n", quote(&pack.name)));
    out.push_str("description: \"Exported by `hermes-plugins pack export`.\"\n");
    out.push_str("version: \"1.0.0\"\n");
    if pack.plugins.is_empty() {
        out.push_str("plugins: []\n");
    } else {
        out.push_str("plugins:\n");
    }
    for p in &pack.plugins {
        out.push_str(&format!(
            "- repo: {}\n  ref: {}\n",
            quote(&p.repo),
            quote(&p.commit)
        ));
        if let Some(sub) = &p.subdir {
            out.push_str(&format!("  subdir: {}\n", quote(sub)));
        }
    }
    let config: Vec<(&String, J)> = pack
        .config
        .iter()
        .map(|(id, v)| (id, strip(v)))
        .filter(|(_, v)| v.as_object().is_some_and(|m| !m.is_empty()))
        .collect();
    if !config.is_empty() {
        out.push_str("config:\n");
        for (id, seed) in config {
            out.push_str(&format!("  {}:\n", key(id)));
            for (k, v) in seed.as_object().into_iter().flatten() {
                out.push_str(&format!("    {}: {v}\n", key(k)));
            }
        }
    }
    out
}

/// `value` without keys a pack may not carry, at any depth (Hermes's
/// `_strip_forbidden_keys`).
fn strip(value: &J) -> J {
    match value {
        J::Object(m) => J::Object(
            m.iter()
                .filter(|(k, _)| super::forbidden(k).is_none())
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        J::Array(items) => J::Array(items.iter().map(strip).collect()),
        other => other.clone(),
    }
}

fn quote(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// A mapping key: plain when it is a plain word YAML reads back as itself, else quoted.
fn key(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'/' | b'.'))
        && text.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && !matches!(
            text.to_ascii_lowercase().as_str(),
            "yes" | "no" | "on" | "off" | "true" | "false" | "null" | "y" | "n"
        );
    if plain { text.to_string() } else { quote(text) }
}
