//! Surgical edits of per-plugin settings: `plugins.entries.<plugin id>.<key path>`.
//!
//! The same machinery as the selection lists ([`super`]) is used: the located YAML tree says
//! which keys exist and where they start, the few bytes to change are worked out from the
//! text around them, and the result is parsed again and checked before it is returned.
//!
//! Writing ([`set_entry`]):
//!
//! * an existing scalar (`allow_tool_override: false  # why`) has only its value text
//!   replaced, so a trailing comment stays;
//! * an existing block list or mapping is replaced as a whole block (its lines below the key),
//!   copying the old block's indentation and dash style; comment lines before the block and
//!   after its last line stay;
//! * an existing non-empty flow collection (`[a, b]`, `{x: true}`) has just its flow span
//!   rewritten with a flow rendering of the new value; an empty one written on the key's line
//!   (`[]`, `{}`) is treated like a scalar, so a non-empty list or mapping replacing it is
//!   written in block style (the form this module writes itself);
//! * a missing key is appended as the last key of its parent mapping, at the indentation of
//!   its siblings; new nested levels use the file's indentation step (the first nested
//!   block's, else two spaces); in a flow mapping it is appended as `, key: value`;
//! * a missing `plugins:` is appended at the end of the document, as for the lists; a
//!   missing or null `entries:`, `<id>:` or intermediate key is created (null ones are
//!   replaced by the nested mapping).
//!
//! Values: `Bool` is written `true`/`false`; `Int` and `Float` as Rust prints them (the
//! shortest text that reads back as the number; one that would read back as another type is
//! caught by the self-check), `Null` as `null`; `Str` plain when it consists of
//! `[A-Za-z0-9._/-]` and reads back as that same string, else double-quoted (so
//! `2026-11-30T10:00:00Z`, `2026-11-30`, `yes`, `1.0` or `0755`, which YAML 1.1 would read as
//! a date, boolean or number, are quoted); `List` is a block sequence under its key (`[]` when
//! empty); `Map` a nested block mapping (`{}` when empty). Keys, plugin ids included, follow
//! the same quoting rule (`tools/weather` stays plain).
//!
//! Removing ([`remove_entry`]) deletes the key's whole line(s), nested block included. A
//! mapping that loses its last key this way is written as `key: {}` (emptied parents are not
//! removed), so `plugins.entries.<id>` stays a mapping. Removing from a flow mapping deletes
//! the `key: value` item and one adjacent comma (`{}` when none is left).
//!
//! Refused with an error, the file untouched: a value of the wrong type on the path
//! (`entries: 3`, `<id>: true`), anchors, aliases or merged keys on the path, a key written
//! twice, and any result whose re-parse does not hold exactly the written value at the path
//! with every other value unchanged ([`EditError::SelfCheck`]). When the path already holds the
//! value (or, for removal, is absent) the text is returned unchanged.

use serde_json::Value as J;

use super::{
    Doc, Edit, EditError, FlowSeq, Header, LIMITS, PLUGINS, SeqStyle, is_ws, line_number,
    render_name, scan_flow_collection, scan_flow_item, skip_flow_space, skip_quoted, spaces,
    splice, strip_comment,
};
use crate::located::{Dialect, Entry, Node, Value, yaml};

#[cfg(test)]
#[path = "entries_tests.rs"]
mod tests;

/// The key under `plugins:` holding per-plugin settings.
const ENTRIES: &str = "entries";

/// A value to write under an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryValue {
    /// A boolean, written `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// `null`.
    Null,
    /// A string, written plain when that reads back as the same string, else double-quoted.
    Str(String),
    /// A list of strings, written as a block sequence (`[]` when empty).
    List(Vec<String>),
    /// A mapping, written as a nested block mapping in the given key order (`{}` when empty).
    Map(Vec<(String, EntryValue)>),
}

/// Sets `plugins.entries.<id>.<path…>` to `value`, creating `plugins`, `entries`, `<id>` and intermediate mappings as needed.
///
/// An empty `path` sets the entry itself. Returns the text unchanged when the path already
/// holds exactly `value` (a YAML date is not the same as a string).
pub fn set_entry(
    text: &str,
    id: &str,
    path: &[&str],
    value: &EntryValue,
) -> Result<String, EditError> {
    let keys = keys_of(id, path)?;
    value.validate(&keys.join("."))?;
    let (bom, body) = split_bom(text);
    let doc = Doc::parse(body)?;
    if lookup(&doc.root, &keys)?.is_some_and(|node| value.matches(node)) {
        return Ok(text.to_string());
    }
    let edits = doc.plan_set(&keys, value)?;
    let out = splice(body, edits)?;
    check(&doc.root, &out, &keys, Some(value))?;
    Ok(format!("{bom}{out}"))
}

/// Removes `plugins.entries.<id>.<path…>` if present (the whole key line(s) incl. a nested block).
///
/// Empty parents are left in place: a mapping that loses its last key is written `key: {}`
/// (still a mapping, valid YAML), and parents are never removed. An absent path returns the
/// text unchanged. An empty `path` removes the whole entry `plugins.entries.<id>`.
pub fn remove_entry(text: &str, id: &str, path: &[&str]) -> Result<String, EditError> {
    let keys = keys_of(id, path)?;
    let (bom, body) = split_bom(text);
    let doc = Doc::parse(body)?;
    if lookup(&doc.root, &keys)?.is_none() {
        return Ok(text.to_string());
    }
    let edits = doc.plan_remove(&keys)?;
    let out = splice(body, edits)?;
    check(&doc.root, &out, &keys, None)?;
    Ok(format!("{bom}{out}"))
}

/// Reads `plugins.entries.<id>.<path…>` as JSON (None when absent).
///
/// A missing or null key on the way counts as absent; a value of another type on the way
/// (`entries: 3`) is an [`EditError::WrongType`]. Dates read as strings.
pub fn read_entry(
    text: &str,
    id: &str,
    path: &[&str],
) -> Result<Option<serde_json::Value>, EditError> {
    let keys = keys_of(id, path)?;
    let doc = Doc::parse(split_bom(text).1)?;
    Ok(lookup(&doc.root, &keys)?.map(Node::to_json))
}

impl EntryValue {
    /// The value as JSON.
    fn json(&self) -> J {
        match self {
            EntryValue::Bool(b) => J::Bool(*b),
            EntryValue::Int(i) => J::from(*i),
            EntryValue::Float(f) => J::from(*f),
            EntryValue::Null => J::Null,
            EntryValue::Str(s) => J::String(s.clone()),
            EntryValue::List(items) => J::Array(items.iter().cloned().map(J::String).collect()),
            EntryValue::Map(entries) => {
                J::Object(entries.iter().map(|(k, v)| (k.clone(), v.json())).collect())
            }
        }
    }

    /// Whether a parsed node holds exactly this value (types included: a date is no string).
    fn matches(&self, node: &Node) -> bool {
        match (self, &node.value) {
            (EntryValue::Bool(a), Value::Bool(b)) => a == b,
            (EntryValue::Int(a), Value::Int(b)) => a == b,
            (EntryValue::Float(a), Value::Float(b)) => a == b,
            (EntryValue::Null, Value::Null) => true,
            (EntryValue::Str(a), Value::Str(b)) => a == b,
            (EntryValue::List(a), Value::Seq(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, n)| n.as_str() == Some(x))
            }
            (EntryValue::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(k, v)| {
                        b.iter()
                            .find(|e| e.key == *k)
                            .is_some_and(|e| v.matches(&e.value))
                    })
            }
            _ => false,
        }
    }

    /// Refuses mappings that name a key twice, at any depth.
    fn validate(&self, path: &str) -> Result<(), EditError> {
        if let EntryValue::Map(entries) = self {
            for (i, (key, value)) in entries.iter().enumerate() {
                if entries[..i].iter().any(|(other, _)| other == key) {
                    return Err(EditError::InvalidValue {
                        path: path.to_string(),
                        detail: format!("the key `{key}` is given twice"),
                    });
                }
                value.validate(&format!("{path}.{key}"))?;
            }
        }
        Ok(())
    }

    /// The value as written on its key's line: scalars and empty collections.
    fn inline(&self) -> Option<String> {
        match self {
            EntryValue::Bool(b) => Some(b.to_string()),
            EntryValue::Int(i) => Some(i.to_string()),
            EntryValue::Float(f) if f.is_finite() => Some(format!("{f:?}")),
            EntryValue::Float(f) if f.is_nan() => Some(".nan".to_string()),
            EntryValue::Float(f) => Some(if *f > 0.0 { ".inf" } else { "-.inf" }.to_string()),
            EntryValue::Null => Some("null".to_string()),
            EntryValue::Str(s) => Some(render_name(s)),
            EntryValue::List(items) if items.is_empty() => Some("[]".to_string()),
            EntryValue::Map(entries) if entries.is_empty() => Some("{}".to_string()),
            EntryValue::List(_) | EntryValue::Map(_) => None,
        }
    }

    /// The value in flow style (`[a, b]`, `{k: v}`).
    fn flow(&self) -> String {
        match self {
            EntryValue::Bool(_)
            | EntryValue::Int(_)
            | EntryValue::Float(_)
            | EntryValue::Null
            | EntryValue::Str(_) => self.inline().unwrap_or_default(),
            EntryValue::List(items) => {
                let items: Vec<String> = items.iter().map(|i| render_name(i)).collect();
                format!("[{}]", items.join(", "))
            }
            EntryValue::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", render_name(k), v.flow()))
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }
        }
    }
}

/// `plugins`, `entries`, the id, then the path.
fn keys_of<'a>(id: &'a str, path: &[&'a str]) -> Result<Vec<&'a str>, EditError> {
    if id.is_empty() {
        return Err(EditError::EmptyName);
    }
    let mut keys = vec![PLUGINS, ENTRIES, id];
    keys.extend_from_slice(path);
    Ok(keys)
}

fn split_bom(text: &str) -> (&str, &str) {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    }
}

/// `value` nested under `keys` (`a`, `b` → `{a: {b: value}}`).
fn chain(keys: &[&str], value: &EntryValue) -> EntryValue {
    match keys.split_first() {
        None => value.clone(),
        Some((first, rest)) => EntryValue::Map(vec![((*first).to_string(), chain(rest, value))]),
    }
}

fn wrong_type(path: String, line: u32, node: &Node) -> EditError {
    EditError::WrongType {
        path,
        line,
        found: node.type_name(Dialect::Yaml),
        expected: "a mapping",
    }
}

/// The node at `keys`: `None` when a key is missing or a mapping on the way is null.
fn lookup<'n>(root: &'n Node, keys: &[&str]) -> Result<Option<&'n Node>, EditError> {
    match root.value {
        Value::Null => return Ok(None),
        Value::Map(_) => {}
        _ => return Err(wrong_type("the top level".to_string(), root.pos.line, root)),
    }
    let mut node = root;
    for (i, key) in keys.iter().enumerate() {
        let Some(entry) = node.get(key) else {
            return Ok(None);
        };
        if i + 1 == keys.len() {
            return Ok(Some(&entry.value));
        }
        match entry.value.value {
            Value::Null => return Ok(None),
            Value::Map(_) => node = &entry.value,
            _ => {
                return Err(wrong_type(
                    keys[..=i].join("."),
                    entry.key_pos.line,
                    &entry.value,
                ));
            }
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------------
// Locating keys and values in the text
// ---------------------------------------------------------------------------------------

/// Where the value of a key in a block mapping is written.
#[derive(Debug)]
struct BlockSlot {
    /// The key's line.
    h: Header,
    /// The key's indentation.
    indent: usize,
    /// The value text after the `:` (tags included, comment excluded); it may continue on
    /// later lines (multi-line flow collections and scalars) or start on one (`key:\n  [a]`).
    inline: Option<(usize, usize)>,
    /// Where the inline value's flow collection (`[`/`{`) starts, if it is one.
    flow: Option<usize>,
    /// Whole lines below the key line holding the value (block collections, block scalar
    /// bodies, scalars written on the next line).
    below: Option<(usize, usize)>,
    /// The entry's last line.
    last: usize,
}

/// Where the value of a key in a flow mapping is written.
#[derive(Debug)]
struct FlowSlot {
    /// Offset just after the key's `:` (after the key when it has none).
    after_key: usize,
    /// Whether the key has a `:`.
    has_colon: bool,
    /// The value text, if any.
    value: Option<(usize, usize)>,
}

#[derive(Debug)]
enum Slot {
    Block(BlockSlot),
    Flow(FlowSlot),
}

/// A mapping on the path, as written.
enum Parent {
    /// The top-level block mapping: keys at `indent`; new keys go at the end of the document.
    Root { indent: usize },
    /// A block mapping below a key: keys at `indent` on lines `first..=last`; `empty_at` is
    /// where ` {}` goes when it loses its last key.
    Block {
        indent: usize,
        first: usize,
        last: usize,
        empty_at: usize,
    },
    /// A flow mapping `{…}`.
    Flow(FlowSeq),
}

/// Where the walk along a path stopped.
enum Found<'n> {
    /// `keys[i]` is missing from a mapping.
    Missing { i: usize, parent: Parent },
    /// `keys[i]` (not the last key) holds null or an empty `{}`.
    Empty { i: usize, slot: Slot },
    /// The last key exists in `node`.
    Present {
        parent: Parent,
        node: &'n Node,
        slot: Slot,
    },
}

/// How new block content is indented.
struct Style {
    unit: usize,
    seq: SeqStyle,
}

/// The lines of `key: value` with the key indented by `indent`.
fn render_entry(key: &str, value: &EntryValue, indent: usize, style: &Style) -> Vec<String> {
    let head = format!("{}{}:", spaces(indent), render_name(key));
    match value.inline() {
        Some(v) => vec![format!("{head} {v}")],
        None => {
            let mut lines = vec![head];
            lines.extend(render_block(value, indent, style.unit, &style.seq, style));
            lines
        }
    }
}

/// The lines below a key indented by `key_indent` holding a non-empty list or mapping; the
/// first level's keys are `child` further in, deeper ones the style's unit.
fn render_block(
    value: &EntryValue,
    key_indent: usize,
    child: usize,
    seq: &SeqStyle,
    style: &Style,
) -> Vec<String> {
    match value {
        EntryValue::List(items) => items.iter().map(|i| seq.item_line(key_indent, i)).collect(),
        EntryValue::Map(entries) => entries
            .iter()
            .flat_map(|(k, v)| render_entry(k, v, key_indent + child, style))
            .collect(),
        EntryValue::Bool(_)
        | EntryValue::Int(_)
        | EntryValue::Float(_)
        | EntryValue::Null
        | EntryValue::Str(_) => Vec::new(),
    }
}

/// The end of one `key: value` item of a flow mapping starting at `i`.
fn scan_flow_pair(b: &[u8], i: usize) -> Option<usize> {
    let mut end = i;
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        let c = b[j];
        match c {
            b'"' | b'\''
                if j == i
                    || matches!(
                        b[j - 1],
                        b' ' | b'\t' | b'\r' | b'\n' | b'[' | b'{' | b',' | b':'
                    ) =>
            {
                j = skip_quoted(b, j, b.len())?;
                end = j;
                continue;
            }
            b'#' if j > i && matches!(b[j - 1], b' ' | b'\t' | b'\r' | b'\n') => {
                j = skip_flow_space(b, j);
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth == 0 => break,
            b']' | b'}' => depth -= 1,
            b',' if depth == 0 => break,
            _ => {}
        }
        if !matches!(c, b' ' | b'\t' | b'\r' | b'\n') {
            end = j + 1;
        }
        j += 1;
    }
    (j < b.len() && end > i).then_some(end)
}

/// Finds the `key: value` items of the flow mapping whose `{` is at `open`.
fn scan_flow_map(b: &[u8], open: usize) -> Option<FlowSeq> {
    scan_flow_collection(b, open, b'}', scan_flow_pair)
}

impl Doc<'_> {
    fn style(&self) -> Style {
        let unit = self.detect_unit();
        Style {
            unit,
            seq: SeqStyle::indented(unit),
        }
    }

    /// The last line of an unindented block sequence whose first dash is on line `first`.
    fn indentless_end(&self, first: usize, indent: usize) -> usize {
        let mut end = first;
        for i in first + 1..self.lines.len() {
            if !self.is_content(i) {
                continue;
            }
            let ind = self.indent(i);
            if ind > indent || (ind == indent && self.is_dash_line(i)) {
                end = i;
            } else {
                break;
            }
        }
        end
    }

    /// The dash style of the block sequence whose first dash is on line `dash`, relative to a
    /// key indented by `key_indent`.
    fn dash_style(&self, dash: usize, key_indent: usize) -> SeqStyle {
        let indent = self.indent(dash);
        let after: String = self.line_text(dash)[indent + 1..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        SeqStyle {
            offset: indent.saturating_sub(key_indent),
            after_dash: if after.is_empty() {
                " ".to_string()
            } else {
                after
            },
        }
    }

    /// Locates the value of `entry`, a key of a block mapping.
    fn block_slot(&self, entry: &Entry, path: &str) -> Result<BlockSlot, EditError> {
        let h = self.header(entry.key_pos, path)?;
        let b = self.bytes();
        let line = h.line;
        let indent = self.indent(line);
        let layout = |detail: &str| EditError::Layout {
            path: path.to_string(),
            line: line_number(line),
            detail: detail.to_string(),
        };
        let unclosed = || layout("cannot find where the value ends");
        let mut inline = None;
        let mut flow = None;
        let mut below = None;
        let code = (h.after_colon..self.lines[line].end)
            .find(|&i| !is_ws(b[i]))
            .filter(|&i| b[i] != b'#');
        if let Some(start) = code {
            let end = match h.token.map(|t| (t, b[t])) {
                Some((t, b'[' | b'{')) => {
                    flow = Some(t);
                    scan_flow_item(b, t).ok_or_else(unclosed)?
                }
                Some((t, b'"' | b'\'')) => skip_quoted(b, t, b.len()).ok_or_else(unclosed)?,
                Some((_, b'|' | b'>')) => {
                    let end_line = self.block_end(line, indent);
                    if end_line > line {
                        below = Some((line + 1, end_line));
                    }
                    h.code_end
                }
                Some(_) => {
                    // A plain scalar, possibly continued on more indented lines.
                    let end_line = self.block_end(line, indent);
                    if end_line > line {
                        let code = strip_comment(self.line_text(end_line)).trim_end();
                        self.lines[end_line].start + code.len()
                    } else {
                        h.code_end
                    }
                }
                None => h.code_end,
            };
            inline = Some((start, end));
        }
        if h.token.is_none()
            && let Some(n) = self.next_content_line(line + 1)
        {
            let first = self.first_char(n);
            let ind = self.indent(n);
            if ind > indent && matches!(b[first], b'[' | b'{') {
                flow = Some(first);
                inline = Some((first, scan_flow_item(b, first).ok_or_else(unclosed)?));
            } else if ind > indent {
                below = Some((n, self.block_end(line, indent)));
            } else if ind == indent && self.is_dash_line(n) && entry.value.as_seq().is_some() {
                below = Some((n, self.indentless_end(n, indent)));
            }
        }
        let last = [
            Some(line),
            inline.map(|(_, end)| self.line_index_of(end)),
            below.map(|(_, last)| last),
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(line);
        Ok(BlockSlot {
            h,
            indent,
            inline,
            flow,
            below,
            last,
        })
    }

    /// Locates the value of the flow mapping item `start..end`.
    fn flow_slot(&self, (start, end): (usize, usize), path: &str) -> Result<FlowSlot, EditError> {
        let b = self.bytes();
        let key_end = if matches!(b[start], b'"' | b'\'') {
            skip_quoted(b, start, end).unwrap_or(end)
        } else {
            (start..end)
                .find(|&j| {
                    b[j] == b':'
                        && (j + 1 == end || matches!(b[j + 1], b' ' | b'\t' | b'\r' | b'\n'))
                })
                .unwrap_or(end)
        };
        let colon = skip_flow_space(b, key_end);
        if colon >= end || b[colon] != b':' {
            return Ok(FlowSlot {
                after_key: key_end,
                has_colon: false,
                value: None,
            });
        }
        let v = skip_flow_space(b, colon + 1);
        let value = (v < end).then_some((v, end));
        if value.is_some_and(|(v, _)| matches!(b[v], b'&' | b'*')) {
            return Err(EditError::Anchor {
                path: path.to_string(),
                line: line_number(self.line_index_of(v)),
            });
        }
        Ok(FlowSlot {
            after_key: colon + 1,
            has_colon: true,
            value,
        })
    }

    /// Scans the flow mapping at `open` and matches its items with `node`'s entries.
    fn flow_parent(&self, open: usize, node: &Node, path: &str) -> Result<FlowSeq, EditError> {
        let b = self.bytes();
        let line = line_number(self.line_index_of(open));
        let layout = |detail: &str| EditError::Layout {
            path: path.to_string(),
            line,
            detail: detail.to_string(),
        };
        let coll = scan_flow_map(b, open).ok_or_else(|| layout("cannot find its entries"))?;
        for &(start, _) in &coll.items {
            if b[start..].starts_with(b"<<") || matches!(b[start], b'&' | b'*') {
                return Err(EditError::Anchor {
                    path: path.to_string(),
                    line: line_number(self.line_index_of(start)),
                });
            }
        }
        let entries = node.as_map().unwrap_or_default();
        let matched = coll.items.len() == entries.len()
            && entries.iter().zip(&coll.items).all(|(e, &(start, end))| {
                let at = self.offset(e.key_pos);
                at >= start && at < end
            });
        if !matched {
            return Err(layout("cannot match its keys"));
        }
        Ok(coll)
    }

    /// The mapping on the path at the top level.
    fn root_parent(&self) -> Result<Parent, EditError> {
        let at = self.offset(self.root.pos);
        if self.bytes().get(at) == Some(&b'{') {
            return Ok(Parent::Flow(self.flow_parent(
                at,
                &self.root,
                "the top level",
            )?));
        }
        Ok(Parent::Root {
            indent: self.indent(self.line_index(self.root.pos)),
        })
    }

    /// The mapping held by the value at `slot`.
    fn child_parent(&self, slot: &Slot, node: &Node, path: &str) -> Result<Parent, EditError> {
        let layout = |line: usize| EditError::Layout {
            path: path.to_string(),
            line: line_number(line),
            detail: "cannot find the mapping's keys".to_string(),
        };
        match slot {
            Slot::Block(s) => {
                if let Some(open) = s.flow {
                    return Ok(Parent::Flow(self.flow_parent(open, node, path)?));
                }
                let Some((first, last)) = s.below else {
                    return Err(layout(s.h.line));
                };
                let indent = self.indent(first);
                if indent <= s.indent {
                    return Err(layout(first));
                }
                Ok(Parent::Block {
                    indent,
                    first,
                    last,
                    empty_at: s.h.code_end,
                })
            }
            Slot::Flow(f) => match f.value {
                Some((v, _)) if self.bytes()[v] == b'{' => {
                    Ok(Parent::Flow(self.flow_parent(v, node, path)?))
                }
                _ => Err(layout(self.line_index(node.pos))),
            },
        }
    }

    /// Locates `entry` of the mapping `node` written as `parent`, refusing keys that are
    /// written twice or come from elsewhere (merge keys).
    fn slot(
        &self,
        parent: &Parent,
        node: &Node,
        entry: &Entry,
        path: &str,
    ) -> Result<Slot, EditError> {
        let line = self.line_index(entry.key_pos);
        if self.notes.iter().any(|n| n.pos == entry.key_pos) {
            return Err(EditError::Layout {
                path: path.to_string(),
                line: entry.key_pos.line,
                detail: "the key is written more than once".to_string(),
            });
        }
        match parent {
            Parent::Flow(coll) => {
                let k = node
                    .as_map()
                    .and_then(|entries| entries.iter().position(|e| e.key == entry.key))
                    .unwrap_or(0);
                Ok(Slot::Flow(self.flow_slot(coll.items[k], path)?))
            }
            Parent::Root { indent } | Parent::Block { indent, .. } => {
                let in_range = match parent {
                    Parent::Block { first, last, .. } => (*first..=*last).contains(&line),
                    _ => true,
                };
                if self.offset(entry.key_pos) != self.first_char(line)
                    && (self.line_text(line).starts_with("---")
                        || self.bytes()[self.first_char(line)] == b'?')
                {
                    return Err(EditError::Layout {
                        path: path.to_string(),
                        line: entry.key_pos.line,
                        detail: "the key does not start its line".to_string(),
                    });
                }
                if !in_range
                    || self.indent(line) != *indent
                    || self.offset(entry.key_pos) != self.first_char(line)
                {
                    // Written elsewhere: the key comes from a `<<` merge.
                    return Err(EditError::Anchor {
                        path: path.to_string(),
                        line: entry.key_pos.line,
                    });
                }
                Ok(Slot::Block(self.block_slot(entry, path)?))
            }
        }
    }

    /// A flow collection written on its key's line with nothing inside (`[]`, `{}`).
    fn is_empty_flow(&self, s: &BlockSlot) -> bool {
        let (Some(open), Some((_, end))) = (s.flow, s.inline) else {
            return false;
        };
        self.line_index_of(open) == s.h.line
            && self.line_index_of(end) == s.h.line
            && self.text[open + 1..end - 1].trim().is_empty()
    }

    /// Follows `keys` from the (mapping) root.
    fn walk(&self, keys: &[&str]) -> Result<Found<'_>, EditError> {
        let mut parent = self.root_parent()?;
        let mut node = &self.root;
        for (i, key) in keys.iter().enumerate() {
            let path = keys[..=i].join(".");
            let Some(entry) = node.get(key) else {
                return Ok(Found::Missing { i, parent });
            };
            let slot = self.slot(&parent, node, entry, &path)?;
            if i + 1 == keys.len() {
                return Ok(Found::Present { parent, node, slot });
            }
            let empty_flow = matches!(&slot, Slot::Block(s) if self.is_empty_flow(s));
            match &entry.value.value {
                Value::Null => return Ok(Found::Empty { i, slot }),
                Value::Map(m) if m.is_empty() && empty_flow => {
                    return Ok(Found::Empty { i, slot });
                }
                Value::Map(_) => {
                    parent = self.child_parent(&slot, &entry.value, &path)?;
                    node = &entry.value;
                }
                _ => {
                    return Err(wrong_type(path, entry.key_pos.line, &entry.value));
                }
            }
        }
        Err(EditError::SelfCheck {
            detail: "an empty key path".to_string(),
        })
    }

    /// The edits setting `keys` to `value`.
    fn plan_set(&self, keys: &[&str], value: &EntryValue) -> Result<Vec<Edit>, EditError> {
        match &self.root.value {
            Value::Null => {
                self.ensure_blank_document()?;
                let lines = render_entry(keys[0], &chain(&keys[1..], value), 0, &self.style());
                return Ok(vec![self.append_lines(&lines)]);
            }
            Value::Map(_) => {}
            _ => {
                return Err(wrong_type(
                    "the top level".to_string(),
                    self.root.pos.line,
                    &self.root,
                ));
            }
        }
        match self.walk(keys)? {
            Found::Missing { i, parent } => {
                Ok(self.insert(&parent, keys[i], &chain(&keys[i + 1..], value)))
            }
            Found::Empty { i, slot } => Ok(self.replace(&slot, &chain(&keys[i + 1..], value))),
            Found::Present { slot, .. } => Ok(self.replace(&slot, value)),
        }
    }

    /// The edits removing `keys` (none when absent).
    fn plan_remove(&self, keys: &[&str]) -> Result<Vec<Edit>, EditError> {
        if !matches!(self.root.value, Value::Map(_)) {
            return Ok(Vec::new());
        }
        let Found::Present { parent, node, slot } = self.walk(keys)? else {
            return Ok(Vec::new());
        };
        let key = keys[keys.len() - 1];
        let entries = node.as_map().unwrap_or_default();
        match (&parent, &slot) {
            (Parent::Flow(coll), _) => {
                let k = entries.iter().position(|e| e.key == key).unwrap_or(0);
                let items = &coll.items;
                Ok(vec![if items.len() == 1 {
                    Edit::delete(coll.open + 1, coll.close)
                } else if k + 1 < items.len() {
                    Edit::delete(items[k].0, items[k + 1].0)
                } else {
                    Edit::delete(items[k - 1].1, items[k].1)
                }])
            }
            (_, Slot::Block(s)) => {
                let mut edits = self.delete_lines(&(s.h.line..=s.last).collect());
                if let Parent::Block { empty_at, .. } = parent
                    && entries.len() == 1
                {
                    edits.push(Edit::insert(empty_at, " {}".to_string()));
                }
                Ok(edits)
            }
            (_, Slot::Flow(_)) => Err(EditError::SelfCheck {
                detail: "a flow item in a block mapping".to_string(),
            }),
        }
    }

    /// Adds `key: value` as the last key of `parent`.
    fn insert(&self, parent: &Parent, key: &str, value: &EntryValue) -> Vec<Edit> {
        match parent {
            Parent::Root { indent } => {
                vec![self.append_lines(&render_entry(key, value, *indent, &self.style()))]
            }
            Parent::Block { indent, last, .. } => {
                vec![self.insert_after(*last, &render_entry(key, value, *indent, &self.style()))]
            }
            Parent::Flow(coll) => {
                let item = format!("{}: {}", render_name(key), value.flow());
                vec![coll.append(self.text, item)]
            }
        }
    }

    /// Replaces the value at `slot` by `value`.
    fn replace(&self, slot: &Slot, value: &EntryValue) -> Vec<Edit> {
        let s = match slot {
            Slot::Flow(f) => {
                let text = value.flow();
                return vec![match f.value {
                    Some((start, end)) => Edit {
                        start,
                        end,
                        with: text,
                    },
                    None if f.has_colon => Edit::insert(f.after_key, format!(" {text}")),
                    None => Edit::insert(f.after_key, format!(": {text}")),
                }];
            }
            Slot::Block(s) => s,
        };
        let inline = value.inline();
        if let (Some(_), Some((start, end))) = (s.flow, s.inline)
            && (inline.is_some() || !self.is_empty_flow(s))
        {
            // A flow collection: rewrite just its span.
            return vec![Edit {
                start,
                end,
                with: value.flow(),
            }];
        }
        if let Some(text) = inline {
            let mut edits = vec![match s.inline {
                Some((start, end)) => Edit {
                    start,
                    end,
                    with: text,
                },
                None => Edit::insert(s.h.code_end, format!(" {text}")),
            }];
            if let Some((first, last)) = s.below {
                edits.extend(self.delete_lines(&(first..=last).collect()));
            }
            return edits;
        }
        let style = self.style();
        let (child, seq) = match s.below {
            Some((first, _)) => {
                let indent = self.indent(first);
                let child = if indent > s.indent {
                    indent - s.indent
                } else {
                    style.unit
                };
                let seq = if self.is_dash_line(first) {
                    self.dash_style(first, s.indent)
                } else {
                    style.seq.clone()
                };
                (child, seq)
            }
            None => (style.unit, style.seq.clone()),
        };
        let lines = render_block(value, s.indent, child, &seq, &style);
        if let (None, Some((first, last))) = (s.inline, s.below) {
            return vec![Edit {
                start: self.lines[first].start,
                end: self.lines[last].end,
                with: lines.join(self.nl),
            }];
        }
        let mut edits = Vec::new();
        let mut at = s.h.line;
        if let Some((_, end)) = s.inline {
            edits.push(Edit::delete(s.h.after_colon, end));
            at = self.line_index_of(end);
        }
        if let Some((first, last)) = s.below {
            edits.extend(self.delete_lines(&(first..=last).collect()));
        }
        edits.push(self.insert_after(at, &lines));
        edits
    }
}

// ---------------------------------------------------------------------------------------
// Self-check
// ---------------------------------------------------------------------------------------

/// The document as JSON without the value at `keys`; mappings on the path left empty or null
/// count as absent, a null document as an empty mapping.
fn without_path(root: &Node, keys: &[&str]) -> J {
    fn strip(json: &mut J, keys: &[&str]) {
        let (Some((first, rest)), J::Object(map)) = (keys.split_first(), json) else {
            return;
        };
        if rest.is_empty() {
            map.remove(*first);
        } else if let Some(child) = map.get_mut(*first) {
            strip(child, rest);
            if child.is_null() || child.as_object().is_some_and(serde_json::Map::is_empty) {
                map.remove(*first);
            }
        }
    }
    let mut json = root.to_json();
    if json.is_null() {
        json = J::Object(serde_json::Map::new());
    }
    strip(&mut json, keys);
    json
}

/// Re-parses the edited text: `keys` must hold exactly `expected` (be absent for `None`) and
/// every other value must be as in `original`.
fn check(
    original: &Node,
    text: &str,
    keys: &[&str],
    expected: Option<&EntryValue>,
) -> Result<(), EditError> {
    let fail = |detail: String| EditError::SelfCheck { detail };
    let path = keys.join(".");
    let edited = yaml::parse(text, LIMITS)
        .map_err(|e| fail(format!("the edited text would not be valid YAML ({e})")))?
        .root;
    let actual =
        lookup(&edited, keys).map_err(|e| fail(format!("{path} could not be read back ({e})")))?;
    let ok = match (expected, actual) {
        (Some(value), Some(node)) => value.matches(node),
        (None, None) => true,
        _ => false,
    };
    if !ok {
        let show = |j: Option<J>| j.map_or_else(|| "missing".to_string(), |j| j.to_string());
        return Err(fail(format!(
            "{path} would be {} instead of {}",
            show(actual.map(Node::to_json)),
            show(expected.map(EntryValue::json)),
        )));
    }
    if without_path(original, keys) != without_path(&edited, keys) {
        return Err(fail(format!("a value outside {path} would change")));
    }
    Ok(())
}
