//! Plugin packs: Hermes 0.22's `hermes-pack.yaml` (`hermes plugins pack`, read from
//! `hermes_cli/plugin_packs.py` of the 0.22.2 package). A pack names a set of plugins, each
//! pinned to an exact 40-hex commit, by catalog `name` or by `repo` (`owner/repo` or a git URL,
//! with a `subdir`), and carries config seeds for `plugins.entries.<id>` that may never hold
//! a secret-shaped or consent key, at any depth. Skills are listed, not installed.
//!
//! [`parse`] accepts what Hermes's `parse_pack` accepts (the nested `pack:` mapping for the
//! metadata, `source` for `repo`, `version` for `ref`, a `github:` prefix) and refuses what it
//! refuses, each error at its line; [`render`] writes a pack that `parse_pack` reads back.

mod render;

pub use render::{Exported, ExportedEntry, render};

use crate::located::{Limits, Node, Value, yaml};
use crate::state::config_edit::EntryValue;

/// The largest pack read (Hermes's limit: a pack is a small manifest, not a payload).
pub const MAX_BYTES: usize = 1024 * 1024;

/// A parsed, checked pack.
#[derive(Debug, Clone, PartialEq)]
pub struct Pack {
    /// Its name.
    pub name: String,
    /// Its description, author and version, as written (empty when absent).
    pub description: String,
    /// Who made it.
    pub author: String,
    /// Its version.
    pub version: String,
    /// The plugins, in order.
    pub plugins: Vec<PackEntry>,
    /// Config seeds: plugin id → the keys of `plugins.entries.<id>` to set where unset.
    pub config: Vec<(String, Vec<(String, EntryValue)>)>,
    /// Skill ids (listed, not installed).
    pub skills: Vec<String>,
}

/// One pinned plugin of a pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackEntry {
    /// A catalog name.
    pub name: Option<String>,
    /// `owner/repo` or a git URL.
    pub repo: Option<String>,
    /// The directory inside the repository.
    pub subdir: Option<String>,
    /// The exact commit (40 hex, lower case).
    pub commit: String,
    /// Where the entry is written.
    pub line: u32,
}

impl PackEntry {
    /// How the entry is named in messages: `owner/repo/subdir`, else the catalog name.
    pub fn display(&self) -> String {
        match (&self.repo, &self.subdir, &self.name) {
            (Some(repo), Some(sub), _) => format!("{repo}/{sub}"),
            (Some(repo), None, _) => repo.clone(),
            (None, _, Some(name)) => name.clone(),
            (None, _, None) => "?".to_string(),
        }
    }

    /// The seed of this plugin once installed as `key`: the config under its key, else under
    /// its catalog name (as Hermes looks it up).
    pub fn seed<'p>(&self, pack: &'p Pack, key: &str) -> Option<&'p [(String, EntryValue)]> {
        let find = |id: &str| {
            pack.config
                .iter()
                .find(|(k, _)| k == id)
                .map(|(_, v)| v.as_slice())
        };
        find(key).or_else(|| self.name.as_deref().and_then(find))
    }
}

/// Why a pack was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PackError {
    /// The pack file as given.
    pub file: String,
    /// The line (0: the whole file).
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

/// Why a config key may never travel in a pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forbidden {
    /// A consent key (`granted_capabilities`, `capabilities_consent`) or a trust gate
    /// (`allow_*`): capability consent happens at install, never by a pack.
    Reserved,
    /// A secret-shaped key: secrets are declared by the plugin's `requires_env` and asked for.
    Secret,
}

/// Whether `key` may be seeded by a pack (Hermes's `_forbidden_key_reason`).
pub fn forbidden(key: &str) -> Option<Forbidden> {
    if matches!(key, "granted_capabilities" | "capabilities_consent") || key.starts_with("allow_") {
        return Some(Forbidden::Reserved);
    }
    static SECRET: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)(token|secret|passw(or)?d|api[_-]?key|private[_-]?key|credential|auth)",
        )
        .expect("a valid pattern")
    });
    SECRET.is_match(key).then_some(Forbidden::Secret)
}

/// Parses and checks a pack (`source` names it in errors).
pub fn parse(text: &str, source: &str) -> Result<Pack, PackError> {
    let err = |line: u32, message: String| PackError {
        file: source.to_string(),
        line,
        message,
    };
    if text.len() > MAX_BYTES {
        return Err(err(0, format!("a pack is at most {MAX_BYTES} bytes")));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root = yaml::parse(text, Limits::default())
        .map_err(|e| err(0, format!("not valid YAML: {e}")))?
        .root;
    if root.as_map().is_none() {
        return Err(err(root.pos.line, "a pack is a YAML mapping".to_string()));
    }
    let meta = root
        .get("pack")
        .map(|e| &e.value)
        .filter(|n| n.as_map().is_some());
    let meta = meta.unwrap_or(&root);
    let text_of = |key: &str| -> String {
        meta.get(key)
            .map(|e| scalar_text(&e.value))
            .unwrap_or_default()
    };
    let name = meta
        .get("name")
        .and_then(|e| e.value.as_str())
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| err(root.pos.line, "the pack has no `name`".to_string()))?
        .to_string();
    let plugins_node = root.get("plugins").map(|e| &e.value);
    let items = plugins_node
        .and_then(Node::as_seq)
        .filter(|items| !items.is_empty())
        .ok_or_else(|| {
            err(
                plugins_node.map_or(root.pos.line, |n| n.pos.line),
                "a pack declares a non-empty `plugins` list".to_string(),
            )
        })?;
    let plugins = items
        .iter()
        .enumerate()
        .map(|(i, item)| entry(item, i).map_err(|m| err(item.pos.line, m)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut config = Vec::new();
    match root.get("config").map(|e| &e.value) {
        None => {}
        Some(node) if node.is_null() => {}
        Some(node) => {
            let entries = node.as_map().ok_or_else(|| {
                err(
                    node.pos.line,
                    "`config` maps plugin ids to settings".to_string(),
                )
            })?;
            for e in entries {
                let seed = seed(&e.key, &e.value).map_err(|m| err(e.value.pos.line, m))?;
                config.push((e.key.clone(), seed));
            }
        }
    }
    let skills = match root.get("skills").map(|e| &e.value) {
        None => Vec::new(),
        Some(node) if node.is_null() => Vec::new(),
        Some(node) => node
            .as_seq()
            .ok_or_else(|| err(node.pos.line, "`skills` is a list of skill ids".to_string()))?
            .iter()
            .map(|n| scalar_text(n).trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    };
    Ok(Pack {
        name,
        description: text_of("description"),
        author: text_of("author"),
        version: text_of("version"),
        plugins,
        config,
        skills,
    })
}

/// A scalar as Python's `str()` would give it.
fn scalar_text(node: &Node) -> String {
    match &node.value {
        Value::Null => String::new(),
        Value::Str(s) | Value::Timestamp(s) => s.clone(),
        Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Seq(_) | Value::Map(_) => node.raw.clone(),
    }
}

/// One `plugins:` item (Hermes's `_parse_pack_entry`).
fn entry(item: &Node, index: usize) -> Result<PackEntry, String> {
    let label = ["name", "repo"]
        .iter()
        .find_map(|k| item.get(k)?.value.as_str().map(str::trim))
        .filter(|s| !s.is_empty())
        .map_or_else(|| format!("#{}", index + 1), |s| format!("'{s}'"));
    if item.as_map().is_none() {
        return Err(format!("plugin entry {label} must be a mapping"));
    }
    let name = match item.get("name").map(|e| &e.value) {
        None => None,
        Some(n) => match n.as_str().map(str::trim) {
            Some(s) if !s.is_empty() => Some(s.to_string()),
            _ => return Err(format!("plugin entry {label} has an invalid `name`")),
        },
    };
    let repo = ["repo", "source"]
        .iter()
        .find_map(|k| item.get(k)?.value.as_str())
        .map(|r| r.strip_prefix("github:").unwrap_or(r).trim().to_string())
        .filter(|r| !r.is_empty());
    if name.is_none() && repo.is_none() {
        return Err(format!(
            "plugin entry {label} needs `name` (a catalog entry) or `repo` (owner/repo or a git URL)"
        ));
    }
    let reference = ["ref", "version"]
        .iter()
        .find_map(|k| item.get(k).map(|e| &e.value));
    let commit = reference
        .and_then(Node::as_str)
        .map(str::trim)
        .filter(|r| r.len() == 40 && r.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| {
            format!(
                "plugin entry {label} has ref {}: refs must be exact 40-character commit SHAs (tags and branch names are refused — pin the commit for reproducible installs)",
                reference.map_or("none".to_string(), |r| format!("`{}`", scalar_text(r)))
            )
        })?
        .to_ascii_lowercase();
    let subdir = match item.get("subdir").map(|e| &e.value) {
        None => None,
        Some(n) => match n.as_str().map(|s| s.trim_matches('/')) {
            Some(s) if !s.is_empty() => Some(s.to_string()),
            _ => return Err(format!("plugin entry {label} has an invalid `subdir`")),
        },
    };
    Ok(PackEntry {
        name,
        repo,
        subdir,
        commit,
        line: item.pos.line,
    })
}

/// One plugin's config seed (Hermes's `validate_config_seed`): a mapping whose keys, at any
/// depth, are neither reserved nor secret-shaped.
fn seed(id: &str, node: &Node) -> Result<Vec<(String, EntryValue)>, String> {
    let entries = node.as_map().ok_or_else(|| {
        format!("the config of plugin '{id}' must be a mapping of plugins.entries.{id} keys")
    })?;
    if let Some((key, why)) = first_forbidden(node, "") {
        return Err(match why {
            Forbidden::Reserved => format!(
                "the config of plugin '{id}' sets the reserved key '{key}': packs cannot pre-grant capabilities or trust gates (consent is asked at install)"
            ),
            Forbidden::Secret => format!(
                "the config of plugin '{id}' sets the secret-shaped key '{key}': secrets never travel in packs (the plugin declares them in requires_env, and they are asked for)"
            ),
        });
    }
    entries
        .iter()
        .map(|e| {
            if e.key.trim().is_empty() {
                return Err(format!("the config of plugin '{id}' has an empty key"));
            }
            Ok((e.key.clone(), value(&e.value, &format!("{id}.{}", e.key))?))
        })
        .collect()
}

/// The first forbidden key at any depth of `node`, dotted, with why.
fn first_forbidden(node: &Node, path: &str) -> Option<(String, Forbidden)> {
    match &node.value {
        Value::Map(entries) => entries.iter().find_map(|e| {
            forbidden(&e.key)
                .map(|why| (format!("{path}{}", e.key), why))
                .or_else(|| first_forbidden(&e.value, &format!("{path}{}.", e.key)))
        }),
        Value::Seq(items) => items.iter().find_map(|n| first_forbidden(n, path)),
        _ => None,
    }
}

/// A seed value as `config.yaml` takes it.
fn value(node: &Node, path: &str) -> Result<EntryValue, String> {
    Ok(match &node.value {
        Value::Null => EntryValue::Null,
        Value::Bool(b) => EntryValue::Bool(*b),
        Value::Int(i) => EntryValue::Int(*i),
        Value::Float(f) => EntryValue::Float(*f),
        Value::Str(s) | Value::Timestamp(s) => EntryValue::Str(s.clone()),
        Value::Seq(items) => EntryValue::List(
            items
                .iter()
                .map(|n| {
                    n.as_str().map(str::to_string).ok_or_else(|| {
                        format!("the seed `{path}` is a list of other than strings, which hermes-plugins does not write into config.yaml")
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(entries) => EntryValue::Map(
            entries
                .iter()
                .map(|e| Ok((e.key.clone(), value(&e.value, &format!("{path}.{}", e.key))?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

#[cfg(test)]
mod tests;
