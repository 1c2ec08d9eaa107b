//! The removal kill list (SRC-4): the catalog's `removed.yaml`,
//! `{removed: [{name, repo?, reason?, date?}]}`. Install, update and enable refuse a plugin
//! listed by name or by (normalised) repository URL.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::fields::{self, Sink};
use super::finding::{self, CatalogFinding};
use crate::located::{Node, Pos, Value};
use crate::repo_url::normalize;

/// The keys of one kill-list item.
pub const ITEM_KEYS: &[&str] = &["name", "repo", "reason", "date"];

static DATE_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$").expect("valid regex"));

/// One removed plugin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removed {
    /// The entry name that is blocked.
    pub name: String,
    /// Its repository; every spelling of it is blocked too.
    pub repo: Option<String>,
    /// Why it was removed.
    pub reason: Option<String>,
    /// When (`YYYY-MM-DD`).
    pub date: Option<String>,
}

/// Reads a `removed.yaml` and checks its shape. Items without a usable name are reported and
/// left out of the list.
pub fn load(path: &Path) -> (Vec<Removed>, Vec<CatalogFinding>) {
    let mut sink = Sink::new(path);
    let list = fields::read_mapping(&mut sink, "removed.yaml")
        .map(|root| from_node(&root, &mut sink))
        .unwrap_or_default();
    (list, sink.out)
}

/// The kill-list item that blocks a plugin `name` (or its repository `repo`), if any.
pub fn blocked<'a>(
    list: &'a [Removed],
    name: Option<&str>,
    repo: Option<&str>,
) -> Option<&'a Removed> {
    let repo_key = repo.map(normalize);
    list.iter().find(|r| {
        name == Some(r.name.as_str())
            || match (&repo_key, &r.repo) {
                (Some(key), Some(removed)) => *key == normalize(removed),
                _ => false,
            }
    })
}

fn from_node(root: &Node, sink: &mut Sink<'_>) -> Vec<Removed> {
    let f = finding::REMOVED_FILE;
    let mut out = Vec::new();
    for item in root.as_map().unwrap_or_default() {
        if item.key != "removed" {
            sink.unknown_key(item, &["removed"], "removed.yaml");
        }
    }
    let Some(list) = root.get("removed") else {
        sink.error(f, Pos::START, "`removed` is missing")
            .hint("Write `removed:` followed by a list of `- name: <entry name>` items (`removed: []` when empty).");
        return out;
    };
    let items = match &list.value.value {
        // Upstream's validator: `removed:` must be a list (`removed: []` when empty).
        Value::Null => {
            sink.error(
                f,
                list.value.pos,
                "`removed` must be a list, found nothing (null)",
            )
            .hint("Write `removed: []` when nothing is removed.");
            return out;
        }
        Value::Seq(items) => items,
        _ => {
            sink.wrong_type(f, "removed", &list.value, "a list of mappings");
            return out;
        }
    };
    for (i, node) in items.iter().enumerate() {
        if let Some(r) = item(sink, i, node) {
            out.push(r);
        }
    }
    out
}

fn item(sink: &mut Sink<'_>, i: usize, node: &Node) -> Option<Removed> {
    let f = finding::REMOVED_FILE;
    let label = format!("removed[{i}]");
    let Some(map) = node.as_map() else {
        sink.wrong_type(
            f,
            &label,
            node,
            "a mapping with `name` (and repo, reason, date)",
        );
        return None;
    };
    let mut removed = Removed {
        name: String::new(),
        repo: None,
        reason: None,
        date: None,
    };
    let mut name_ok = false;
    for entry in map {
        let key = entry.key.as_str();
        let value = &entry.value;
        let field = format!("{label}.{key}");
        match key {
            "name" => {
                if let Some(s) = sink.string(f, &field, value) {
                    if s.trim().is_empty() {
                        sink.error(f, value.pos, format!("`{field}` is empty"))
                            .hint("Write the entry name to block.");
                    } else {
                        // Upstream takes any non-empty string; a name no entry can have is
                        // worth a warning (it blocks nothing by name).
                        if let Err((message, hint)) = fields::check_name(s) {
                            sink.warning(
                                f,
                                value.pos,
                                message.replacen("`name`", &format!("`{field}`"), 1),
                            )
                            .hint(hint)
                            .value(s);
                        }
                        removed.name = s.to_string();
                        name_ok = true;
                    }
                }
            }
            "repo" => {
                if let Some(s) = sink.string(f, &field, value) {
                    if let Some(what) = fields::bad_char(s) {
                        sink.error(f, value.pos, format!("`{field}` contains {what}"))
                            .hint("Write the repository URL on one line, without spaces or control characters.")
                            .value(s);
                    } else if !normalize(s).contains('/') {
                        sink.error(
                            f,
                            value.pos,
                            format!("`{field}` does not name a repository"),
                        )
                        .hint("Write the repository URL, e.g. `https://github.com/owner/repo`.")
                        .value(s);
                    } else {
                        removed.repo = Some(s.to_string());
                    }
                }
            }
            "reason" => removed.reason = sink.string(f, &field, value).map(str::to_string),
            "date" => match &value.value {
                // Upstream's validator wants a string; PyYAML reads an unquoted date as a date.
                Value::Timestamp(s) => {
                    sink.error(
                        f,
                        value.pos,
                        format!("`{field}` must be a string: unquoted, YAML reads `{s}` as a date"),
                    )
                    .hint(format!("Quote it: `date: \"{s}\"`."))
                    .value(s);
                }
                Value::Str(s) => {
                    if !DATE_RE.is_match(s) {
                        sink.warning(f, value.pos, format!("`{field}` is not written YYYY-MM-DD"))
                            .hint("Write the day of removal, e.g. `date: \"2025-01-31\"`.")
                            .value(s);
                    }
                    removed.date = Some(s.clone());
                }
                _ => sink.wrong_type(f, &field, value, "a string (\"YYYY-MM-DD\")"),
            },
            _ => sink.unknown_key(entry, ITEM_KEYS, &format!("`{label}`")),
        }
    }
    if map.iter().all(|e| e.key != "name") {
        sink.error(f, node.pos, format!("`{label}` has no `name`"))
            .hint("Every removed plugin needs `name:`, the entry name to block.");
    }
    name_ok.then_some(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::CheckId;

    fn r(name: &str, repo: Option<&str>) -> Removed {
        Removed {
            name: name.into(),
            repo: repo.map(str::to_string),
            reason: None,
            date: None,
        }
    }

    #[test]
    fn blocked_by_name_or_any_spelling_of_the_repo() {
        let list = [
            r("evil", None),
            r("leaky", Some("git@github.com:Bad/Leaky.git")),
        ];
        assert_eq!(
            blocked(&list, Some("evil"), None).map(|r| r.name.as_str()),
            Some("evil")
        );
        assert_eq!(
            blocked(
                &list,
                Some("renamed"),
                Some("https://www.github.com/bad/leaky/")
            )
            .map(|r| r.name.as_str()),
            Some("leaky")
        );
        assert!(blocked(&list, Some("fine"), Some("https://github.com/bad/other")).is_none());
        assert!(blocked(&list, Some("fine"), None).is_none());
    }

    #[test]
    fn items_are_checked_as_upstream_checks_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("removed.yaml");
        std::fs::write(
            &path,
            "removed:\n  - name: a\n    date: 2025-01-31\n    reason: malware\n  - repo: https://github.com/x/y\n  - name: B\n    date: 31.01.2025\n    note: x\n",
        )
        .unwrap();
        let (list, findings) = load(&path);
        // `B` blocks by name (upstream takes any non-empty string), with a warning.
        let names: Vec<&str> = list.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "B"]);
        use crate::diag::Severity::{Error, Warning};
        let got: Vec<(CheckId, u32, crate::diag::Severity)> = findings
            .iter()
            .map(|f| (f.check, f.pos.line, f.severity))
            .collect();
        assert_eq!(
            got,
            [
                // An unquoted date is a date to PyYAML, not the string upstream requires.
                (finding::REMOVED_FILE, 3, Error),
                (finding::REMOVED_FILE, 5, Error),
                (finding::REMOVED_FILE, 6, Warning),
                (finding::REMOVED_FILE, 7, Warning),
                (finding::UNKNOWN_KEY, 8, Warning),
            ],
            "{findings:#?}"
        );
        std::fs::write(&path, "removed:\n").unwrap();
        let (_, findings) = load(&path);
        assert!(
            findings[0].message.contains("must be a list"),
            "{findings:#?}"
        );
    }
}
