//! Shared pieces of the catalog file loaders: bounded reading and parsing, typed field access
//! that reports wrong types with the expected type, and the value rules shared by entries and
//! the kill list (names, URLs).

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::finding::{self, CatalogFinding};
use crate::diag::{CheckId, did_you_mean};
use crate::located::{Dialect, Entry as MapEntry, Limits, Node, Pos, Value, yaml};

/// Largest catalog file read (1 MiB).
pub(crate) const FILE_LIMIT: u64 = 1024 * 1024;

pub(crate) static NAME_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z0-9_-]{1,64}$").expect("valid regex"));

/// Collects findings about one file.
pub(crate) struct Sink<'a> {
    pub file: &'a Path,
    pub out: Vec<CatalogFinding>,
}

impl<'a> Sink<'a> {
    pub fn new(file: &'a Path) -> Self {
        Sink {
            file,
            out: Vec::new(),
        }
    }

    pub fn error(&mut self, check: CheckId, pos: Pos, message: impl Into<String>) -> Builder<'_> {
        self.out
            .push(finding::error(check, self.file, pos, message));
        Builder(self.out.last_mut().expect("just pushed"))
    }

    pub fn warning(&mut self, check: CheckId, pos: Pos, message: impl Into<String>) -> Builder<'_> {
        self.out
            .push(finding::warning(check, self.file, pos, message));
        Builder(self.out.last_mut().expect("just pushed"))
    }

    /// Reports a value of the wrong type, naming the expected one.
    pub fn wrong_type(&mut self, check: CheckId, field: &str, node: &Node, expected: &str) {
        let found = node.type_name(Dialect::Yaml);
        let hint = match &node.value {
            Value::Null => format!("Give `{field}` a value ({expected}), or remove the key."),
            Value::Seq(_) | Value::Map(_) => format!("Write `{field}` as {expected}."),
            _ if expected.starts_with("a string") => format!(
                "Quote the value so YAML reads it as text: {field}: \"{}\"",
                node.snippet().replace('"', "\\\"")
            ),
            _ => format!("Write `{field}` as {expected}."),
        };
        self.error(
            check,
            node.pos,
            format!("`{field}` must be {expected}, found {found}"),
        )
        .hint(hint)
        .value(node.snippet());
    }

    /// The string value of `node`, or a type error.
    pub fn string<'n>(&mut self, check: CheckId, field: &str, node: &'n Node) -> Option<&'n str> {
        match node.as_str() {
            Some(s) => Some(s),
            None => {
                self.wrong_type(check, field, node, "a string");
                None
            }
        }
    }

    /// The items of a list of non-empty strings with their positions, or type errors (bad
    /// items are reported and skipped).
    pub fn string_list(&mut self, check: CheckId, field: &str, node: &Node) -> Vec<(String, Pos)> {
        let Some(items) = node.as_seq() else {
            self.wrong_type(check, field, node, "a list of strings");
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let label = format!("{field}[{i}]");
            match item.as_str() {
                Some(s) if s.trim().is_empty() => {
                    self.error(check, item.pos, format!("`{label}` is an empty string"))
                        .hint("Remove the empty item.")
                        .value(s);
                }
                Some(s) => out.push((s.to_string(), item.pos)),
                None => self.wrong_type(check, &label, item, "a string"),
            }
        }
        out
    }

    /// Warns about a key that is not in `known`, with a suggestion.
    pub fn unknown_key(&mut self, entry: &MapEntry, known: &[&str], context: &str) {
        let hint = match did_you_mean(&entry.key, known.iter().copied()) {
            Some(s) => format!("Did you mean `{s}`? Unknown keys are ignored."),
            None => format!(
                "Unknown keys are ignored; the known keys are: {}.",
                known.join(", ")
            ),
        };
        self.warning(
            finding::UNKNOWN_KEY,
            entry.key_pos,
            format!("unknown key `{}` in {context}", entry.key),
        )
        .hint(hint)
        .value(&entry.key);
    }
}

/// Decorates the finding a [`Sink`] just recorded.
pub(crate) struct Builder<'a>(&'a mut CatalogFinding);

impl Builder<'_> {
    pub fn hint(self, hint: impl Into<String>) -> Self {
        self.0.hint = Some(hint.into());
        self
    }

    pub fn value(self, value: impl AsRef<str>) -> Self {
        self.0.value = Some(crate::located::truncate_chars(value.as_ref(), 120));
        self
    }
}

/// Reads and parses a catalog file; `None` (with findings) when there is no mapping to look
/// at.
pub(crate) fn read_mapping(sink: &mut Sink<'_>, what: &str) -> Option<Node> {
    let file = sink.file;
    // Never follow a symlinked catalog file: a pull request could point one at a secret on
    // the CI runner, and findings quote what they read.
    match std::fs::symlink_metadata(file) {
        Err(e) => {
            let message = if e.kind() == std::io::ErrorKind::NotFound {
                "the file does not exist".to_string()
            } else {
                format!("the file cannot be read: {e}")
            };
            sink.error(finding::YAML, Pos::START, message);
            return None;
        }
        Ok(m) if m.file_type().is_symlink() => {
            sink.error(finding::YAML, Pos::START, "the file is a symbolic link")
                .hint(format!(
                    "{what} is a regular YAML file in the catalog, not a link."
                ));
            return None;
        }
        Ok(m) if !m.is_file() => {
            sink.error(finding::YAML, Pos::START, "not a regular file")
                .hint(format!("{what} is a YAML file."));
            return None;
        }
        Ok(_) => {}
    }
    let text = match crate::pkgfs::read_limited_text(file, FILE_LIMIT) {
        Ok(text) => text,
        Err(e) => {
            let b = sink.error(finding::YAML, e.pos(), format!("the file {e}"));
            if let Some(v) = e.value() {
                b.value(v);
            }
            return None;
        }
    };
    let parsed = match yaml::parse(&text, Limits::default()) {
        Ok(p) => p,
        Err(e) => {
            let line = text
                .lines()
                .nth(usize::try_from(e.pos.line.saturating_sub(1)).unwrap_or(usize::MAX))
                .unwrap_or_default()
                .to_string();
            let message = e
                .message
                .strip_prefix("invalid YAML: ")
                .unwrap_or(&e.message);
            let b = sink
                .error(
                    finding::YAML,
                    e.pos,
                    format!("the file is not valid YAML: {message}"),
                )
                .hint(format!(
                    "Fix the YAML syntax at line {}, column {} (check indentation, quoting, brackets and `key: value` pairs).",
                    e.pos.line, e.pos.column
                ));
            if !line.trim().is_empty() {
                b.value(line);
            }
            return None;
        }
    };
    for note in &parsed.notes {
        sink.warning(finding::YAML, note.pos, note.message.clone())
            .hint("Keep one of the two; YAML keeps the last value.")
            .value(&note.value);
    }
    match &parsed.root.value {
        Value::Map(_) => Some(parsed.root),
        Value::Null => {
            sink.error(finding::YAML, Pos::START, "the file is empty")
                .hint(format!(
                    "{what} is a YAML mapping of field names to values."
                ));
            None
        }
        _ => {
            let found = parsed.root.type_name(Dialect::Yaml);
            sink.error(
                finding::YAML,
                parsed.root.pos,
                format!("the top level must be a mapping, found {found}"),
            )
            .hint(format!(
                "{what} is a YAML mapping of field names to values."
            ))
            .value(parsed.root.snippet());
            None
        }
    }
}

/// Checks an entry or plugin name (`[a-z0-9_-]{1,64}`): `Err((message, hint))` if invalid.
pub(crate) fn check_name(name: &str) -> Result<(), (String, String)> {
    if NAME_RE.is_match(name) {
        return Ok(());
    }
    let suggestion: String = name
        .trim()
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    let message = if name.is_empty() {
        "`name` is empty".to_string()
    } else if name.chars().count() > 64 {
        format!(
            "`name` is {} characters long; the limit is 64",
            name.chars().count()
        )
    } else {
        "`name` may only contain lowercase letters, digits, `-` and `_`".to_string()
    };
    let hint = if !suggestion.trim_matches('-').is_empty() && NAME_RE.is_match(&suggestion) {
        format!("Use lowercase letters, digits, `-` and `_` only, e.g. `{suggestion}`.")
    } else {
        "Use 1-64 lowercase letters, digits, `-` and `_`.".to_string()
    };
    Err((message, hint))
}

/// The first control or whitespace character of `text`, described.
pub(crate) fn bad_char(text: &str) -> Option<String> {
    text.chars()
        .enumerate()
        .find(|(_, c)| c.is_control() || c.is_whitespace())
        .map(|(i, c)| {
            let kind = if c.is_control() {
                "a control character"
            } else {
                "whitespace"
            };
            format!("{kind} (U+{:04X}) at character {}", u32::from(c), i + 1)
        })
}

/// What kind of https URL a field holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlKind {
    /// A repository: needs a path, no query or fragment.
    Repo,
    /// Any web page or image.
    Page,
}

/// Checks that `text` is an absolute https URL without credentials, whitespace or control
/// characters: `Err((message, hint))` if not.
pub(crate) fn check_https_url(
    field: &str,
    text: &str,
    kind: UrlKind,
) -> Result<(), (String, String)> {
    let https_form = || {
        let key = crate::repo_url::normalize(text);
        if key.contains('/') && !key.contains(char::is_whitespace) {
            format!("https://{key}")
        } else {
            "https://github.com/owner/repo".to_string()
        }
    };
    if let Some(what) = bad_char(text) {
        return Err((
            format!("`{field}` contains {what}"),
            "Write the URL on one line, without spaces or control characters.".to_string(),
        ));
    }
    let parsed = match ::url::Url::parse(text) {
        Ok(u) => u,
        Err(e) => {
            return Err((
                format!("`{field}` is not an absolute URL ({e})"),
                format!("Write the full https URL, e.g. `{}`.", https_form()),
            ));
        }
    };
    if parsed.scheme() != "https" {
        return Err((
            format!(
                "`{field}` must be an https:// URL, found {}://",
                parsed.scheme()
            ),
            format!("Use `{}`.", https_form()),
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err((
            format!("`{field}` has no host"),
            "Write the full https URL, e.g. `https://github.com/owner/repo`.".to_string(),
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err((
            format!("`{field}` must not contain credentials (user@ or user:password@)"),
            format!("Use `{}`; never put tokens in the catalog.", https_form()),
        ));
    }
    if kind == UrlKind::Repo {
        if parsed.fragment().is_some() {
            return Err((
                format!("`{field}` must not have a #fragment"),
                "Put a directory inside the repository in `subdir:` instead.".to_string(),
            ));
        }
        if parsed.query().is_some() {
            return Err((
                format!("`{field}` must not have a ?query"),
                format!("Use `{}`.", https_form()),
            ));
        }
        if parsed.path().trim_matches('/').is_empty() {
            return Err((
                format!("`{field}` names no repository (the URL has no path)"),
                "Write the repository URL, e.g. `https://github.com/owner/repo`.".to_string(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("web-search_2").is_ok());
        let (msg, hint) = check_name("My Plugin").unwrap_err();
        assert!(msg.contains("lowercase"), "{msg}");
        assert!(hint.contains("`my-plugin`"), "{hint}");
        assert!(check_name(&"a".repeat(65)).unwrap_err().0.contains("65"));
        assert!(check_name("").unwrap_err().0.contains("empty"));
    }

    #[test]
    fn urls() {
        let repo = |s: &str| check_https_url("repo", s, UrlKind::Repo);
        assert!(repo("https://github.com/owner/repo").is_ok());
        assert!(
            repo("http://github.com/owner/repo")
                .unwrap_err()
                .1
                .contains("https://github.com/owner/repo")
        );
        assert!(
            repo("git@github.com:owner/repo.git")
                .unwrap_err()
                .1
                .contains("https://github.com/owner/repo")
        );
        assert!(
            repo("https://github.com/owner/repo\u{7}")
                .unwrap_err()
                .0
                .contains("control")
        );
        assert!(
            repo("https://github.com/owner/ repo")
                .unwrap_err()
                .0
                .contains("whitespace")
        );
        assert!(
            repo("https://tok@github.com/owner/repo")
                .unwrap_err()
                .0
                .contains("credentials")
        );
        assert!(
            repo("https://github.com/owner/repo#sub")
                .unwrap_err()
                .1
                .contains("subdir")
        );
        assert!(
            repo("https://github.com/")
                .unwrap_err()
                .0
                .contains("no repository")
        );
        let page = |s: &str| check_https_url("docs_url", s, UrlKind::Page);
        assert!(page("https://example.com/?a=b#c").is_ok());
        assert!(page("ftp://example.com/x").is_err());
    }
}
