//! Located document trees.
//!
//! Manifests arrive as YAML (`plugin.yaml`, `SKILL.md` frontmatter, locale files) or JSON
//! (`plugin.json`, `mcp.json`). Both are parsed into the same [`Node`] tree in which every
//! value and every mapping key remembers where it was written, so each diagnostic can point
//! at a file, line and column and quote the offending value.
//!
//! The parsers are defensive: input size, nesting depth and YAML alias expansion are bounded,
//! and every failure is a [`ParseError`] with a position instead of a panic.

pub mod json;
pub mod lines;
pub mod yaml;

use std::fmt;

/// A 1-based line and column; columns count Unicode scalar values, not bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column number (in characters).
    pub column: u32,
}

impl Pos {
    /// This position moved inside `text` (lines split at `\n`): a line past the last becomes
    /// the end of the last line, a column past a line's end that end.
    pub fn clamped(self, text: &str) -> Pos {
        let lines: Vec<&str> = text.split('\n').collect();
        let line = (self.line.max(1) as usize).min(lines.len());
        let end = lines[line - 1].chars().count() + 1;
        let column = if (self.line as usize) > lines.len() {
            end
        } else {
            (self.column.max(1) as usize).min(end)
        };
        Pos::new(
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }

    /// The first character of a file.
    pub const START: Pos = Pos { line: 1, column: 1 };

    /// A position from 1-based line and column numbers.
    pub fn new(line: u32, column: u32) -> Self {
        Pos { line, column }
    }

    /// The position `chars` characters to the right on the same line.
    pub fn shifted(self, chars: usize) -> Self {
        Pos {
            line: self.line,
            column: self
                .column
                .saturating_add(u32::try_from(chars).unwrap_or(u32::MAX)),
        }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Which syntax a tree came from; used to name types the way the author wrote them
/// ("list"/"mapping" in YAML, "array"/"object" in JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// YAML, resolved like PyYAML's `safe_load` (YAML 1.1 plain scalars).
    Yaml,
    /// Strict JSON (RFC 8259).
    Json,
}

/// One value in a located tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Where the value starts.
    pub pos: Pos,
    /// The value itself.
    pub value: Value,
    /// The source text of a scalar (empty for collections), for quoting in messages.
    pub raw: String,
}

/// A mapping entry: a string key with its own position, and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The key as text.
    pub key: String,
    /// Where the key was written.
    pub key_pos: Pos,
    /// The value under the key.
    pub value: Node,
}

/// The value of a [`Node`].
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`, `~` or an empty YAML value.
    Null,
    /// A boolean (`true`; in YAML 1.1 also `yes`, `on`, …).
    Bool(bool),
    /// An integer that fits in 64 bits.
    Int(i64),
    /// A floating-point number (or an integer too large for 64 bits).
    Float(f64),
    /// A string.
    Str(String),
    /// A YAML 1.1 timestamp such as `2025-01-31` (PyYAML loads it as a date, not a string).
    Timestamp(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in source order, keys unique (for duplicates the last one wins, as in Python).
    Map(Vec<Entry>),
}

impl Node {
    /// A node with a value and no raw text.
    pub fn new(pos: Pos, value: Value) -> Self {
        Node {
            pos,
            value,
            raw: String::new(),
        }
    }

    /// The string if this node is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The entries if this node is a mapping.
    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The items if this node is a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// Looks a key up in a mapping node.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.as_map()?.iter().find(|e| e.key == key)
    }

    /// Whether the value is null.
    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The name of this value's type in the given dialect ("string", "list", "object", …).
    pub fn type_name(&self, dialect: Dialect) -> &'static str {
        match (&self.value, dialect) {
            (Value::Null, _) => "null",
            (Value::Bool(_), _) => "boolean",
            (Value::Int(_), _) => "integer",
            (Value::Float(_), _) => "number",
            (Value::Str(_), _) => "string",
            (Value::Timestamp(_), _) => "date",
            (Value::Seq(_), Dialect::Yaml) => "list",
            (Value::Seq(_), Dialect::Json) => "array",
            (Value::Map(_), Dialect::Yaml) => "mapping",
            (Value::Map(_), Dialect::Json) => "object",
        }
    }

    /// A short rendering of the value for messages: scalars as written, collections elided.
    pub fn snippet(&self) -> String {
        const MAX: usize = 80;
        let text = match &self.value {
            Value::Seq(items) => format!("[… {} item(s)]", items.len()),
            Value::Map(entries) => format!("{{… {} key(s)}}", entries.len()),
            Value::Str(s) if self.raw.is_empty() => s.clone(),
            _ if !self.raw.is_empty() => self.raw.clone(),
            Value::Null => "null".to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Str(s) | Value::Timestamp(s) => s.clone(),
        };
        truncate_chars(&text, MAX)
    }

    /// The tree as a JSON value (dates become strings, non-finite numbers null), for schema
    /// validation and for handing manifests to tools that speak JSON.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::Str(s) | Value::Timestamp(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect(),
            ),
        }
    }

    /// Counts the nodes in this tree (used to bound alias expansion).
    pub fn count(&self) -> usize {
        let mut total = 0;
        let mut stack = vec![self];
        while let Some(node) = stack.pop() {
            total += 1;
            match &node.value {
                Value::Seq(items) => stack.extend(items.iter()),
                Value::Map(entries) => stack.extend(entries.iter().map(|e| &e.value)),
                _ => {}
            }
        }
        total
    }
}

/// Shortens `text` to at most `max` characters, marking the cut with `…`; control
/// characters are escaped so a value can never break a one-line message.
pub fn truncate_chars(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, ch) in text.chars().enumerate() {
        if count >= max {
            out.push('…');
            break;
        }
        if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out
}

/// A parse failure with the position where it was detected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message} (at {pos})")]
pub struct ParseError {
    /// Where the problem is.
    pub pos: Pos,
    /// What is wrong, in words.
    pub message: String,
}

impl ParseError {
    /// A parse error at a position.
    pub fn new(pos: Pos, message: impl Into<String>) -> Self {
        ParseError {
            pos,
            message: message.into(),
        }
    }
}

/// Something odd but loadable noticed while parsing (for example a duplicate key).
#[derive(Clone, Debug, PartialEq)]
pub struct ParseNote {
    /// Where it is.
    pub pos: Pos,
    /// What it is.
    pub message: String,
    /// The offending text.
    pub value: String,
}

/// A successfully parsed document with its notes.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// The root value.
    pub root: Node,
    /// Non-fatal observations (duplicate keys, …).
    pub notes: Vec<ParseNote>,
}

/// Limits applied while parsing untrusted documents.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Maximum nesting depth of collections.
    pub max_depth: usize,
    /// Maximum number of nodes after alias expansion.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 64,
            max_nodes: 100_000,
        }
    }
}
