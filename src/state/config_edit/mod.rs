//! Surgical edits of a profile `config.yaml`.
//!
//! Hermes keeps a profile's plugin selection in `plugins.enabled` and `plugins.disabled` of
//! its `config.yaml`, a file people write by hand, and per-plugin settings under
//! `plugins.entries.<plugin id>`. This module adds names to and removes names from the two
//! lists ([`apply`], [`enable`], [`disable`], [`forget`]) and sets, removes and reads entry
//! settings ([`set_entry`], [`remove_entry`], [`read_entry`]; see the `entries` submodule for
//! their rules) while leaving every other byte exactly as written: comments,
//! key order, quoting, indentation, other keys, the trailing newline (or its absence) and
//! CRLF line endings all survive. The file is never re-serialised.
//!
//! How an edit works:
//!
//! 1. The text is parsed with the located YAML parser ([`crate::located::yaml`]); the tree
//!    says what the lists contain and where their keys and items start.
//! 2. The few bytes to change are worked out from the text around those positions:
//!    * adding to a block list appends one item line after the last item, copying the last
//!      item's indentation and dash style; adding to a flow list (`[a, b]`) inserts
//!      `, name` after the last item (`[]` becomes `[name]`);
//!    * adding to `enabled:` with no value (or `~`/`null`) turns it into a block list under
//!      the key; a missing key is inserted as the last key of the `plugins:` block mapping;
//!      a missing `plugins:` is appended at the end of the document;
//!    * removing from a block list deletes the item's whole line(s), trailing comment
//!      included; comment lines between items stay. Removing the last remaining item of a
//!      block list writes `[]` after the key (`enabled: []`), so the key still holds an
//!      empty list rather than becoming null. Removing from a flow list deletes the item and
//!      one adjacent comma.
//! 3. The result is parsed again and checked: the edited list must hold exactly the
//!    expected items and every other value in the document must be unchanged. If not, the
//!    edit is refused with [`EditError::SelfCheck`] instead of producing a corrupted file.
//!
//! Items are compared as strings after YAML unquoting (`- "weather"` matches `weather`).
//! Names are written plain when they consist of `[A-Za-z0-9._/-]` and read back as that
//! same string; anything else (`yes`, `1.0`, names with spaces, …) is written double-quoted.
//! Flow mappings (`plugins: {enabled: [a]}`) and anchors, aliases or merge keys in the edited
//! nodes are refused with a message asking to edit the file by hand.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value as J;

use crate::located::{Dialect, Limits, Node, ParseNote, Pos, Value, yaml};

mod entries;

pub use entries::{EntryValue, read_entry, remove_entry, set_entry};

/// Parser limits: generous, a config file is the user's own.
const LIMITS: Limits = Limits {
    max_depth: 64,
    max_nodes: 1_000_000,
};

/// The top-level key holding the selection.
const PLUGINS: &str = "plugins";

/// Which selection list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum List {
    /// `plugins.enabled`.
    Enabled,
    /// `plugins.disabled`.
    Disabled,
}

impl List {
    /// The list's key inside `plugins:`.
    pub fn key(self) -> &'static str {
        match self {
            List::Enabled => "enabled",
            List::Disabled => "disabled",
        }
    }

    /// The other list.
    fn other(self) -> List {
        match self {
            List::Enabled => List::Disabled,
            List::Disabled => List::Enabled,
        }
    }

    /// The dotted path used in messages.
    fn path(self) -> String {
        format!("{PLUGINS}.{}", self.key())
    }
}

/// One change: ensure `name` is (present=true) or is not (present=false) in `plugins.<list>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change<'a> {
    /// The list to change.
    pub list: List,
    /// The plugin name.
    pub name: &'a str,
    /// Whether the name must end up in the list (`true`) or out of it (`false`).
    pub present: bool,
}

/// Why a `config.yaml` could not be edited. The file text is never modified on error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The document is not valid YAML (or not loadable the way Hermes loads it).
    #[error("config.yaml is not valid YAML (line {line}, column {column}): {message}")]
    InvalidYaml {
        /// 1-based line of the problem.
        line: u32,
        /// 1-based column of the problem.
        column: u32,
        /// The parser's message.
        message: String,
    },
    /// A value on the way to the list has the wrong type.
    #[error("line {line}: {path} is a {found}, but it must be {expected}; fix it by hand")]
    WrongType {
        /// What has the wrong type (`plugins`, `plugins.enabled`, `the top level`).
        path: String,
        /// 1-based line where it is written.
        line: u32,
        /// The type found.
        found: &'static str,
        /// The type needed.
        expected: &'static str,
    },
    /// The mapping to edit is written in flow style (`{ … }`).
    #[error(
        "line {line}: {path} is written as a flow mapping (`{{ … }}`), which cannot be edited \
         without rewriting it; edit config.yaml by hand"
    )]
    FlowMapping {
        /// What is a flow mapping (`plugins`, `the top level`).
        path: String,
        /// 1-based line where it starts.
        line: u32,
    },
    /// An anchor, alias or merge key is involved in the node to edit.
    #[error(
        "line {line}: {path} uses a YAML anchor, alias or merge key (`&`, `*`, `<<`), so \
         changing it could change other values too; edit config.yaml by hand"
    )]
    Anchor {
        /// The node involved.
        path: String,
        /// 1-based line of the anchor, alias or merged key.
        line: u32,
    },
    /// The layout of the node is valid YAML but not one this module edits safely.
    #[error("line {line}: cannot edit {path} safely ({detail}); edit config.yaml by hand")]
    Layout {
        /// The node involved.
        path: String,
        /// 1-based line where it is written.
        line: u32,
        /// What is unusual.
        detail: String,
    },
    /// An empty plugin name was given.
    #[error("a plugin name must not be empty")]
    EmptyName,
    /// A value to write cannot be written as given (a mapping naming one key twice).
    #[error("cannot write {path}: {detail}")]
    InvalidValue {
        /// The dotted path of the value.
        path: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The edited text failed the after-edit verification; nothing was written.
    #[error("refusing to edit config.yaml: {detail} (this is a bug; please edit it by hand)")]
    SelfCheck {
        /// What did not match.
        detail: String,
    },
}

/// Applies the changes to the text of a config.yaml and returns the new text (unchanged text when nothing changes).
///
/// Changes apply in order, so a later change sees the effect of an earlier one. The original
/// text must be valid YAML even when no change is needed.
pub fn apply(text: &str, changes: &[Change<'_>]) -> Result<String, EditError> {
    if changes.iter().any(|c| c.name.is_empty()) {
        return Err(EditError::EmptyName);
    }
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let original = Doc::parse(body)?.root;
    let mut current = body.to_string();
    for change in changes {
        let doc = Doc::parse(&current)?;
        let edits = doc.plan(change)?;
        if !edits.is_empty() {
            current = splice(&current, edits)?;
        }
    }
    if current == body {
        return Ok(text.to_string());
    }
    self_check(&original, &current, changes)?;
    Ok(format!("{bom}{current}"))
}

/// Convenience: enable = present in Enabled + absent from Disabled.
pub fn enable(text: &str, name: &str) -> Result<String, EditError> {
    apply(
        text,
        &[
            Change {
                list: List::Enabled,
                name,
                present: true,
            },
            Change {
                list: List::Disabled,
                name,
                present: false,
            },
        ],
    )
}

/// Convenience: disable = absent from Enabled + present in Disabled.
pub fn disable(text: &str, name: &str) -> Result<String, EditError> {
    apply(
        text,
        &[
            Change {
                list: List::Enabled,
                name,
                present: false,
            },
            Change {
                list: List::Disabled,
                name,
                present: true,
            },
        ],
    )
}

/// Convenience: forget = absent from both Enabled and Disabled.
pub fn forget(text: &str, name: &str) -> Result<String, EditError> {
    apply(
        text,
        &[
            Change {
                list: List::Enabled,
                name,
                present: false,
            },
            Change {
                list: List::Disabled,
                name,
                present: false,
            },
        ],
    )
}

// ---------------------------------------------------------------------------------------
// Text model
// ---------------------------------------------------------------------------------------

/// One replacement of the byte range `start..end` by `with`.
#[derive(Debug)]
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

impl Edit {
    fn insert(at: usize, with: String) -> Self {
        Edit {
            start: at,
            end: at,
            with,
        }
    }

    fn delete(start: usize, end: usize) -> Self {
        Edit {
            start,
            end,
            with: String::new(),
        }
    }
}

/// Applies non-overlapping edits.
fn splice(text: &str, mut edits: Vec<Edit>) -> Result<String, EditError> {
    edits.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut cursor = 0;
    for edit in edits {
        if edit.start < cursor || edit.end < edit.start || edit.end > text.len() {
            return Err(EditError::SelfCheck {
                detail: "the planned edits overlap".to_string(),
            });
        }
        out.push_str(&text[cursor..edit.start]);
        out.push_str(&edit.with);
        cursor = edit.end;
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}

/// A line as byte offsets: `start..end` is its text without the line break, `next` the start
/// of the following line (equal to `end` for a last line without a line break).
#[derive(Clone, Copy, Debug)]
struct Line {
    start: usize,
    end: usize,
    next: usize,
}

/// What the key line of `key: value` looks like.
#[derive(Debug)]
struct Header {
    /// 0-based line index of the key.
    line: usize,
    /// Byte offset just after the `:`.
    after_colon: usize,
    /// Byte offset of the first value character on the key line (tags skipped), if any.
    token: Option<usize>,
    /// Byte offset after the last non-blank character before a comment or the line end.
    code_end: usize,
}

/// How items of a block list are written: dash column relative to the key, and what follows
/// the dash.
#[derive(Clone, Debug)]
struct SeqStyle {
    offset: usize,
    after_dash: String,
}

impl SeqStyle {
    fn indented(unit: usize) -> Self {
        SeqStyle {
            offset: unit,
            after_dash: " ".to_string(),
        }
    }

    fn item_line(&self, key_indent: usize, name: &str) -> String {
        format!(
            "{}-{}{}",
            spaces(key_indent + self.offset),
            self.after_dash,
            render_name(name)
        )
    }
}

/// A flow sequence's brackets and items as byte offsets.
#[derive(Debug)]
struct FlowSeq {
    open: usize,
    close: usize,
    items: Vec<(usize, usize)>,
}

impl FlowSeq {
    /// The edit appending `item` after the last item (or filling empty brackets), reusing the
    /// collection's own separator when it is a one-line comma.
    fn append(&self, text: &str, item: String) -> Edit {
        let Some(&(_, last_end)) = self.items.last() else {
            let inner = &text[self.open + 1..self.close];
            return if inner.trim().is_empty() {
                Edit {
                    start: self.open + 1,
                    end: self.close,
                    with: item,
                }
            } else {
                Edit::insert(self.open + 1, item)
            };
        };
        let sep = match self.items.as_slice() {
            [(_, end0), (start1, _), ..] => {
                let s = &text[*end0..*start1];
                if s.trim() == "," && !s.contains('\n') {
                    s
                } else {
                    ", "
                }
            }
            _ => ", ",
        };
        Edit::insert(last_end, format!("{sep}{item}"))
    }
}

/// A parsed document with its line table.
struct Doc<'t> {
    text: &'t str,
    lines: Vec<Line>,
    nl: &'static str,
    root: Node,
    notes: Vec<ParseNote>,
}

fn spaces(n: usize) -> String {
    " ".repeat(n)
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn column0(pos: Pos) -> usize {
    pos.column.saturating_sub(1) as usize
}

fn line_number(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

impl<'t> Doc<'t> {
    fn parse(text: &'t str) -> Result<Self, EditError> {
        let parsed = yaml::parse(text, LIMITS).map_err(|e| EditError::InvalidYaml {
            line: e.pos.line,
            column: e.pos.column,
            message: e.message,
        })?;
        let mut lines = Vec::new();
        let mut start = 0;
        let mut nl = None;
        loop {
            match text[start..].find('\n') {
                Some(i) => {
                    let at = start + i;
                    let crlf = at > start && text.as_bytes()[at - 1] == b'\r';
                    nl.get_or_insert(if crlf { "\r\n" } else { "\n" });
                    let end = if crlf { at - 1 } else { at };
                    lines.push(Line {
                        start,
                        end,
                        next: at + 1,
                    });
                    start = at + 1;
                }
                None => {
                    lines.push(Line {
                        start,
                        end: text.len(),
                        next: text.len(),
                    });
                    break;
                }
            }
        }
        Ok(Doc {
            text,
            lines,
            nl: nl.unwrap_or("\n"),
            root: parsed.root,
            notes: parsed.notes,
        })
    }

    fn bytes(&self) -> &'t [u8] {
        self.text.as_bytes()
    }

    fn line_text(&self, i: usize) -> &'t str {
        let l = self.lines[i];
        &self.text[l.start..l.end]
    }

    fn indent(&self, i: usize) -> usize {
        self.line_text(i).bytes().take_while(|b| *b == b' ').count()
    }

    fn is_content(&self, i: usize) -> bool {
        let t = self.line_text(i).trim_start();
        !t.is_empty() && !t.starts_with('#')
    }

    /// A line whose first non-blank text is a block sequence dash (`-` then blank or end).
    fn is_dash_line(&self, i: usize) -> bool {
        let t = &self.line_text(i)[self.indent(i)..];
        t == "-" || t.starts_with("- ") || t.starts_with("-\t")
    }

    fn next_content_line(&self, from: usize) -> Option<usize> {
        (from..self.lines.len()).find(|i| self.is_content(*i))
    }

    /// Offset of the first non-blank byte of a line.
    fn first_char(&self, i: usize) -> usize {
        let l = self.lines[i];
        l.start + self.line_text(i).len() - self.line_text(i).trim_start().len()
    }

    fn line_index(&self, pos: Pos) -> usize {
        (pos.line.max(1) as usize - 1).min(self.lines.len() - 1)
    }

    /// The byte offset of a 1-based position (columns in characters).
    fn offset(&self, pos: Pos) -> usize {
        let l = self.lines[self.line_index(pos)];
        let text = &self.text[l.start..l.end];
        text.char_indices()
            .nth(column0(pos))
            .map_or(l.end, |(i, _)| l.start + i)
    }

    /// The last content line of the block under the key on line `key_line` (whose key is
    /// indented by `key_indent`), or `key_line` when the block is empty.
    fn block_end(&self, key_line: usize, key_indent: usize) -> usize {
        let mut last = key_line;
        for i in key_line + 1..self.lines.len() {
            if !self.is_content(i) {
                continue;
            }
            if self.indent(i) <= key_indent {
                break;
            }
            last = i;
        }
        last
    }

    /// Inserts whole lines after line `i` (before its line break, so a missing final line
    /// break stays missing).
    fn insert_after(&self, i: usize, new_lines: &[String]) -> Edit {
        let mut with = String::new();
        for line in new_lines {
            with.push_str(self.nl);
            with.push_str(line);
        }
        Edit::insert(self.lines[i].end, with)
    }

    /// Deletes the given lines, merged into runs of consecutive lines.
    fn delete_lines(&self, lines: &BTreeSet<usize>) -> Vec<Edit> {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for &i in lines {
            match runs.last_mut() {
                Some((_, last)) if *last + 1 == i => *last = i,
                _ => runs.push((i, i)),
            }
        }
        runs.into_iter()
            .map(|(first, last)| {
                let end = self.lines[last];
                if end.next == end.end && first > 0 {
                    // The last line of a file without a final line break: take the break
                    // before the run instead, so the file still ends without one.
                    Edit::delete(self.lines[first - 1].end, end.end)
                } else {
                    Edit::delete(self.lines[first].start, end.next)
                }
            })
            .collect()
    }

    /// Reads the key line of `key: value` starting at `key_pos`. Anchors and aliases on the
    /// value are refused.
    fn header(&self, key_pos: Pos, path: &str) -> Result<Header, EditError> {
        let line = self.line_index(key_pos);
        let l = self.lines[line];
        let b = self.bytes();
        let layout = |detail: &str| EditError::Layout {
            path: path.to_string(),
            line: line_number(line),
            detail: detail.to_string(),
        };
        let key = self.offset(key_pos);
        let mut i = match b.get(key) {
            Some(b'"') | Some(b'\'') => skip_quoted(b, key, l.end)
                .ok_or_else(|| layout("the key's closing quote is not on its line"))?,
            _ => key,
        };
        while !(i < l.end && b[i] == b':' && (i + 1 == l.end || is_ws(b[i + 1]))) {
            if i >= l.end {
                return Err(layout("no `:` after the key on its line"));
            }
            i += 1;
        }
        let after_colon = i + 1;
        let mut j = after_colon;
        let mut code_end = after_colon;
        let token = loop {
            while j < l.end && is_ws(b[j]) {
                j += 1;
            }
            if j >= l.end || b[j] == b'#' {
                break None;
            }
            match b[j] {
                b'&' | b'*' => {
                    return Err(EditError::Anchor {
                        path: path.to_string(),
                        line: line_number(line),
                    });
                }
                b'!' => {
                    while j < l.end && !is_ws(b[j]) {
                        j += 1;
                    }
                    code_end = j;
                }
                _ => break Some(j),
            }
        };
        if let Some(start) = token {
            let mut k = start;
            while k < l.end && !(b[k] == b'#' && is_ws(b[k - 1])) {
                if !is_ws(b[k]) {
                    code_end = k + 1;
                }
                k += 1;
            }
        }
        Ok(Header {
            line,
            after_colon,
            token,
            code_end,
        })
    }

    /// Where a non-null value starts: on the key line, or the first content line after it.
    fn value_start(&self, h: &Header) -> Option<usize> {
        h.token.or_else(|| {
            self.next_content_line(h.line + 1)
                .map(|i| self.first_char(i))
        })
    }

    /// The indentation step used by the file (the first nested block's extra indentation).
    fn detect_unit(&self) -> usize {
        let mut prev: Option<(usize, bool)> = None;
        for i in 0..self.lines.len() {
            if !self.is_content(i) {
                continue;
            }
            let indent = self.indent(i);
            if let Some((prev_indent, opens)) = prev
                && opens
                && indent > prev_indent
            {
                let unit = indent - prev_indent;
                return if (1..=8).contains(&unit) { unit } else { 2 };
            }
            let code = strip_comment(self.line_text(i)).trim_end();
            prev = Some((indent, code.ends_with(':')));
        }
        2
    }

    /// Works out the edits for one change (none when the text already complies).
    fn plan(&self, change: &Change<'_>) -> Result<Vec<Edit>, EditError> {
        let root = &self.root;
        match &root.value {
            Value::Null => {
                if !change.present {
                    return Ok(Vec::new());
                }
                self.ensure_blank_document()?;
                return Ok(vec![self.append_plugins(0, self.detect_unit(), change)]);
            }
            Value::Map(_) => {}
            _ => {
                return Err(EditError::WrongType {
                    path: "the top level".to_string(),
                    line: root.pos.line,
                    found: root.type_name(Dialect::Yaml),
                    expected: "a mapping",
                });
            }
        }
        let Some(plugins) = root.get(PLUGINS) else {
            if !change.present {
                return Ok(Vec::new());
            }
            if self.bytes().get(self.offset(root.pos)) == Some(&b'{') {
                return Err(EditError::FlowMapping {
                    path: "the top level".to_string(),
                    line: root.pos.line,
                });
            }
            return Ok(vec![self.append_plugins(
                column0(root.pos),
                self.detect_unit(),
                change,
            )]);
        };
        self.plan_in_plugins(plugins, change)
    }

    /// The edits for one change inside an existing `plugins:` key.
    fn plan_in_plugins(
        &self,
        plugins: &crate::located::Entry,
        change: &Change<'_>,
    ) -> Result<Vec<Edit>, EditError> {
        let list_path = change.list.path();
        let plugins_indent = column0(plugins.key_pos);
        match &plugins.value.value {
            Value::Null => {
                if !change.present {
                    return Ok(Vec::new());
                }
                let h = self.header(plugins.key_pos, PLUGINS)?;
                let unit = self.detect_unit();
                let child = plugins_indent + unit;
                let mut edits = Vec::new();
                if h.code_end > h.after_colon {
                    edits.push(Edit::delete(h.after_colon, h.code_end));
                }
                edits.push(self.insert_after(
                    h.line,
                    &[
                        format!("{}{}:", spaces(child), change.list.key()),
                        SeqStyle::indented(unit).item_line(child, change.name),
                    ],
                ));
                return Ok(edits);
            }
            Value::Map(_) => {}
            _ => {
                return Err(EditError::WrongType {
                    path: PLUGINS.to_string(),
                    line: plugins.key_pos.line,
                    found: plugins.value.type_name(Dialect::Yaml),
                    expected: "a mapping",
                });
            }
        }
        let target = plugins.value.get(change.list.key());
        let items = match target.map(|e| &e.value) {
            None => None,
            Some(node) if node.is_null() => None,
            Some(Node {
                value: Value::Seq(items),
                ..
            }) => Some(items.as_slice()),
            Some(node) => {
                return Err(EditError::WrongType {
                    path: list_path,
                    line: target.map_or(node.pos.line, |e| e.key_pos.line),
                    found: node.type_name(Dialect::Yaml),
                    expected: "a list",
                });
            }
        };
        let contains = items.is_some_and(|items| items.iter().any(|n| names_match(n, change.name)));
        if contains == change.present {
            return Ok(Vec::new());
        }
        self.plan_list_edit(plugins, target, items, change)
    }

    /// The edits that add a name to, or take it from, the selection list (an edit is
    /// needed): `plugins` must be a block mapping we can find our way around.
    fn plan_list_edit(
        &self,
        plugins: &crate::located::Entry,
        target: Option<&crate::located::Entry>,
        items: Option<&[Node]>,
        change: &Change<'_>,
    ) -> Result<Vec<Edit>, EditError> {
        let list_path = change.list.path();
        let plugins_indent = column0(plugins.key_pos);
        let ph = self.header(plugins.key_pos, PLUGINS)?;
        let flow = || EditError::FlowMapping {
            path: PLUGINS.to_string(),
            line: plugins.key_pos.line,
        };
        let layout = |line: usize, detail: &str| EditError::Layout {
            path: PLUGINS.to_string(),
            line: line_number(line),
            detail: detail.to_string(),
        };
        if let Some(token) = ph.token {
            return Err(if self.bytes()[token] == b'{' {
                flow()
            } else {
                layout(ph.line, "unexpected text after `plugins:`")
            });
        }
        let first_child = self
            .next_content_line(ph.line + 1)
            .ok_or_else(|| layout(ph.line, "no entries below `plugins:`"))?;
        match self.bytes()[self.first_char(first_child)] {
            b'{' => return Err(flow()),
            b'&' | b'*' => {
                return Err(EditError::Anchor {
                    path: PLUGINS.to_string(),
                    line: line_number(first_child),
                });
            }
            _ => {}
        }
        let child_indent = self.indent(first_child);
        if child_indent <= plugins_indent {
            return Err(layout(first_child, "its entries are not indented below it"));
        }
        let unit = child_indent - plugins_indent;
        let last = self.block_end(ph.line, plugins_indent);
        let inside = |pos: Pos| {
            let i = self.line_index(pos);
            i > ph.line && i <= last
        };
        let Some(entry) = target else {
            // Missing key: becomes the last key of the `plugins:` mapping.
            let style = self
                .sibling_style(plugins, change.list.other(), &inside)
                .unwrap_or_else(|| SeqStyle::indented(unit));
            return Ok(vec![self.insert_after(
                last,
                &[
                    format!("{}{}:", spaces(child_indent), change.list.key()),
                    style.item_line(child_indent, change.name),
                ],
            )]);
        };
        if !inside(entry.key_pos) {
            // The key comes from a `<<` merge of a mapping written elsewhere.
            return Err(EditError::Anchor {
                path: list_path,
                line: entry.key_pos.line,
            });
        }
        let h = self.header(entry.key_pos, &list_path)?;
        let Some(items) = items else {
            let key_indent = column0(entry.key_pos);
            // `enabled:` (or `enabled: ~`) with no list: turn it into a block list.
            let style = self
                .sibling_style(plugins, change.list.other(), &inside)
                .unwrap_or_else(|| SeqStyle::indented(unit));
            let mut edits = Vec::new();
            if h.code_end > h.after_colon {
                edits.push(Edit::delete(h.after_colon, h.code_end));
            }
            edits.push(self.insert_after(h.line, &[style.item_line(key_indent, change.name)]));
            return Ok(edits);
        };
        self.edit_existing_list(&h, items, change, &list_path)
    }

    /// The edits inside a list that exists (flow `[…]` or block `- …`).
    fn edit_existing_list(
        &self,
        h: &Header,
        items: &[Node],
        change: &Change<'_>,
        list_path: &str,
    ) -> Result<Vec<Edit>, EditError> {
        let list_layout = |line: usize, detail: &str| EditError::Layout {
            path: list_path.to_string(),
            line: line_number(line),
            detail: detail.to_string(),
        };
        let start = self
            .value_start(h)
            .ok_or_else(|| list_layout(h.line, "cannot find where the list starts"))?;
        let start_line = self.line_index_of(start);
        match self.bytes()[start] {
            b'[' => self.edit_flow(start, items, change, list_path),
            b'-' if start_line > h.line && self.is_dash_line(start_line) => {
                self.edit_block(h, start_line, items, change, list_path)
            }
            b'&' | b'*' => Err(EditError::Anchor {
                path: list_path.to_string(),
                line: line_number(start_line),
            }),
            _ => Err(list_layout(
                start_line,
                "the list is written in an unusual way",
            )),
        }
    }

    fn line_index_of(&self, offset: usize) -> usize {
        match self.lines.binary_search_by_key(&offset, |l| l.start) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// The style of the other selection list, when it is a non-empty block list in `plugins`.
    fn sibling_style(
        &self,
        plugins: &crate::located::Entry,
        list: List,
        inside: &dyn Fn(Pos) -> bool,
    ) -> Option<SeqStyle> {
        let entry = plugins.value.get(list.key())?;
        if !inside(entry.key_pos) || entry.value.as_seq().is_none_or(<[Node]>::is_empty) {
            return None;
        }
        let h = self.header(entry.key_pos, "").ok()?;
        if h.token.is_some() {
            return None;
        }
        let dash_line = self.next_content_line(h.line + 1)?;
        if !self.is_dash_line(dash_line) {
            return None;
        }
        let key_indent = column0(entry.key_pos);
        let offset = self.indent(dash_line).checked_sub(key_indent)?;
        let after: String = self.line_text(dash_line)[self.indent(dash_line) + 1..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        Some(SeqStyle {
            offset,
            after_dash: if after.is_empty() {
                " ".to_string()
            } else {
                after
            },
        })
    }

    /// Adds to or removes from a block list whose first dash is on `first_dash`.
    fn edit_block(
        &self,
        h: &Header,
        first_dash: usize,
        items: &[Node],
        change: &Change<'_>,
        path: &str,
    ) -> Result<Vec<Edit>, EditError> {
        let layout = |line: usize, detail: String| EditError::Layout {
            path: path.to_string(),
            line: line_number(line),
            detail,
        };
        // Item k spans from dashes[k] to ends[k] (its last content line).
        let dash_indent = self.indent(first_dash);
        let mut dashes = vec![first_dash];
        let mut ends = Vec::new();
        let mut last_content = first_dash;
        for i in first_dash + 1..self.lines.len() {
            if !self.is_content(i) {
                continue;
            }
            let indent = self.indent(i);
            if indent > dash_indent {
                last_content = i;
            } else if indent == dash_indent && self.is_dash_line(i) {
                ends.push(last_content);
                dashes.push(i);
                last_content = i;
            } else {
                break;
            }
        }
        ends.push(last_content);
        if dashes.len() != items.len() {
            return Err(layout(
                first_dash,
                format!(
                    "found {} dash lines for {} items",
                    dashes.len(),
                    items.len()
                ),
            ));
        }
        for &dash in &dashes {
            let t = &self.line_text(dash)[dash_indent + 1..];
            if matches!(t.trim_start().bytes().next(), Some(b'&' | b'*')) {
                return Err(EditError::Anchor {
                    path: path.to_string(),
                    line: line_number(dash),
                });
            }
        }
        for (k, item) in items.iter().enumerate() {
            let line = self.line_index(item.pos);
            if line < dashes[k] || line > ends[k] {
                return Err(layout(line, "an item is not where expected".to_string()));
            }
        }
        if change.present {
            let last_dash = dashes[dashes.len() - 1];
            let text = self.line_text(last_dash);
            let after = text[dash_indent + 1..]
                .bytes()
                .take_while(|b| is_ws(*b))
                .count();
            let prefix = if after == 0 || dash_indent + 1 + after == text.len() {
                format!("{}- ", spaces(dash_indent))
            } else {
                text[..dash_indent + 1 + after].to_string()
            };
            let line = format!("{prefix}{}", render_name(change.name));
            return Ok(vec![self.insert_after(ends[ends.len() - 1], &[line])]);
        }
        let mut doomed = BTreeSet::new();
        let mut removed = 0;
        for (k, item) in items.iter().enumerate() {
            if names_match(item, change.name) {
                removed += 1;
                doomed.extend(dashes[k]..=ends[k]);
            }
        }
        let mut edits = self.delete_lines(&doomed);
        if removed == items.len() {
            // Keep the key holding an empty list rather than null.
            edits.push(Edit::insert(h.code_end, " []".to_string()));
        }
        Ok(edits)
    }

    /// Adds to or removes from a flow list whose `[` is at byte `open`.
    fn edit_flow(
        &self,
        open: usize,
        items: &[Node],
        change: &Change<'_>,
        path: &str,
    ) -> Result<Vec<Edit>, EditError> {
        let line = line_number(self.line_index_of(open));
        let layout = |detail: &str| EditError::Layout {
            path: path.to_string(),
            line,
            detail: detail.to_string(),
        };
        let b = self.bytes();
        let seq = scan_flow_seq(b, open).ok_or_else(|| layout("cannot find the list's items"))?;
        if seq.items.len() != items.len() {
            return Err(layout("cannot match the list's items"));
        }
        for &(start, _) in &seq.items {
            if matches!(b[start], b'&' | b'*') {
                return Err(EditError::Anchor {
                    path: path.to_string(),
                    line: line_number(self.line_index_of(start)),
                });
            }
        }
        for (&(start, end), item) in seq.items.iter().zip(items) {
            let at = self.offset(item.pos);
            if at < start || at > end {
                return Err(layout("cannot match the list's items"));
            }
        }
        let name = render_name(change.name);
        if change.present {
            return Ok(vec![seq.append(self.text, name)]);
        }
        let doomed: Vec<bool> = items.iter().map(|n| names_match(n, change.name)).collect();
        let Some(last_kept) = doomed.iter().rposition(|d| !d) else {
            return Ok(vec![Edit::delete(seq.open + 1, seq.close)]);
        };
        let mut edits = Vec::new();
        for (k, &gone) in doomed.iter().enumerate() {
            if !gone {
                continue;
            }
            if k < last_kept {
                // `item, ` up to the next item.
                edits.push(Edit::delete(seq.items[k].0, seq.items[k + 1].0));
            } else {
                // The trailing run of removed items: `, item, item` after the last kept one.
                edits.push(Edit::delete(
                    seq.items[last_kept].1,
                    seq.items[seq.items.len() - 1].1,
                ));
                break;
            }
        }
        Ok(edits)
    }

    /// For a null document: refuses if the null is written out (`~`, `null`), since keys
    /// cannot be appended to it.
    fn ensure_blank_document(&self) -> Result<(), EditError> {
        for i in 0..self.lines.len() {
            if !self.is_content(i) {
                continue;
            }
            let t = self.line_text(i);
            let marker = ["---", "..."].iter().any(|m| {
                t.strip_prefix(m).is_some_and(|rest| {
                    let rest = rest.trim_start();
                    rest.is_empty() || (rest.starts_with('#') && rest.len() < t.len() - 3)
                })
            });
            if !marker && !t.starts_with('%') {
                return Err(EditError::WrongType {
                    path: "the top level".to_string(),
                    line: line_number(i),
                    found: "null",
                    expected: "a mapping",
                });
            }
        }
        Ok(())
    }

    /// Appends a new `plugins:` block at the end of the document (before a `...` end marker).
    fn append_plugins(&self, indent: usize, unit: usize, change: &Change<'_>) -> Edit {
        let lines = [
            format!("{}{PLUGINS}:", spaces(indent)),
            format!("{}{}:", spaces(indent + unit), change.list.key()),
            SeqStyle::indented(unit).item_line(indent + unit, change.name),
        ];
        self.append_lines(&lines)
    }

    /// Appends whole lines at the end of the document (before a `...` end marker), each
    /// ended by the file's line break.
    fn append_lines(&self, lines: &[String]) -> Edit {
        let end_marker = (0..self.lines.len()).find(|&i| {
            self.line_text(i)
                .strip_prefix("...")
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        });
        let mut with = String::new();
        let at = match end_marker {
            Some(i) => self.lines[i].start,
            None => {
                if !self.text.is_empty() && !self.text.ends_with('\n') {
                    with.push_str(self.nl);
                }
                self.text.len()
            }
        };
        for line in lines {
            with.push_str(line);
            with.push_str(self.nl);
        }
        Edit::insert(at, with)
    }
}

/// The line without a trailing `# comment` (a `#` after a blank, outside quotes).
fn strip_comment(line: &str) -> &str {
    let b = line.as_bytes();
    let mut quote = None;
    for (i, &c) in b.iter().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            None if c == b'#' && (i == 0 || is_ws(b[i - 1])) => return &line[..i],
            None => {}
        }
    }
    line
}

/// The offset after a quoted scalar starting at `start`, if it closes before `limit`.
fn skip_quoted(b: &[u8], start: usize, limit: usize) -> Option<usize> {
    let quote = b[start];
    let mut i = start + 1;
    while i < limit {
        match b[i] {
            b'\\' if quote == b'"' => i += 2,
            c if c == quote => {
                if quote == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                } else {
                    return Some(i + 1);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Skips blanks, line breaks and comments inside a flow collection.
fn skip_flow_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\r' | b'\n') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            _ => break,
        }
    }
    i
}

/// The end offset of one flow item starting at `i`.
fn scan_flow_item(b: &[u8], i: usize) -> Option<usize> {
    match b[i] {
        b'"' | b'\'' => skip_quoted(b, i, b.len()),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' | b'\'' => {
                        j = skip_quoted(b, j, b.len())?;
                        continue;
                    }
                    b'#' if matches!(b[j - 1], b' ' | b'\t' | b'\r' | b'\n') => {
                        j = skip_flow_space(b, j);
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut end = i;
            let mut j = i;
            while j < b.len() {
                let c = b[j];
                if matches!(c, b',' | b'[' | b']' | b'{' | b'}')
                    || (c == b'#' && j > i && matches!(b[j - 1], b' ' | b'\t' | b'\r' | b'\n'))
                {
                    break;
                }
                if !matches!(c, b' ' | b'\t' | b'\r' | b'\n') {
                    end = j + 1;
                }
                j += 1;
            }
            (end > i).then_some(end)
        }
    }
}

/// Finds the items of the flow sequence whose `[` is at `open`.
fn scan_flow_seq(b: &[u8], open: usize) -> Option<FlowSeq> {
    scan_flow_collection(b, open, b']', scan_flow_item)
}

/// Finds the items of the flow collection opened at `open` and closed by `close`, each item
/// spanned by `item` (a sequence item, or a mapping's `key: value` pair).
fn scan_flow_collection(
    b: &[u8],
    open: usize,
    close: u8,
    item: fn(&[u8], usize) -> Option<usize>,
) -> Option<FlowSeq> {
    let mut i = open + 1;
    let mut items = Vec::new();
    let mut want_item = true;
    loop {
        i = skip_flow_space(b, i);
        match *b.get(i)? {
            c if c == close => {
                return Some(FlowSeq {
                    open,
                    close: i,
                    items,
                });
            }
            b',' if !want_item => {
                want_item = true;
                i += 1;
            }
            b']' | b'}' => return None,
            _ if want_item => {
                let end = item(b, i)?;
                items.push((i, end));
                i = end;
                want_item = false;
            }
            _ => return None,
        }
    }
}

/// Whether a list item is the scalar `name` (compared after unquoting).
fn names_match(node: &Node, name: &str) -> bool {
    scalar_text(node) == Some(name)
}

/// A scalar's text as written (after unquoting); `None` for collections.
fn scalar_text(node: &Node) -> Option<&str> {
    match node.value {
        Value::Seq(_) | Value::Map(_) => None,
        _ => Some(&node.raw),
    }
}

/// A name as a YAML scalar: plain when that reads back as the same string, else quoted.
fn render_name(name: &str) -> String {
    let safe = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-'));
    let reads_back = |doc: String| {
        yaml::parse(&doc, LIMITS).is_ok_and(|p| {
            p.root
                .as_seq()
                .is_some_and(|items| items.len() == 1 && items[0].as_str() == Some(name))
        })
    };
    if !name.is_empty()
        && safe
        && reads_back(format!("- {name}\n"))
        && reads_back(format!("[{name}]\n"))
    {
        return name.to_string();
    }
    let mut out = String::from("\"");
    for c in name.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------------------
// Self-check
// ---------------------------------------------------------------------------------------

/// A selection list's state in a document.
#[derive(Debug, PartialEq)]
enum State {
    Absent,
    Null,
    Items(Vec<J>),
    Other(J),
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            State::Absent => f.write_str("missing"),
            State::Null => f.write_str("null"),
            State::Items(items) => write!(f, "{}", J::Array(items.clone())),
            State::Other(j) => write!(f, "{j}"),
        }
    }
}

/// The node of `plugins.<list>`, if `plugins` is a mapping holding it.
fn lookup(root: &Node, list: List) -> Option<&Node> {
    Some(&root.get(PLUGINS)?.value.get(list.key())?.value)
}

fn state_of(root: &Node, list: List) -> State {
    match lookup(root, list) {
        None => State::Absent,
        Some(n) if n.is_null() => State::Null,
        Some(n) => match n.as_seq() {
            Some(items) => State::Items(items.iter().map(Node::to_json).collect()),
            None => State::Other(n.to_json()),
        },
    }
}

/// What `plugins.<list>` must hold after applying `changes` to `original`.
fn expected_state(original: &Node, list: List, changes: &[Change<'_>]) -> State {
    let mut items: Option<Vec<(J, Option<String>)>> = match lookup(original, list) {
        Some(n) => n.as_seq().map(|items| {
            items
                .iter()
                .map(|i| (i.to_json(), scalar_text(i).map(str::to_string)))
                .collect()
        }),
        None => None,
    };
    for change in changes.iter().filter(|c| c.list == list) {
        let contains = items
            .as_ref()
            .is_some_and(|v| v.iter().any(|(_, t)| t.as_deref() == Some(change.name)));
        if change.present && !contains {
            items.get_or_insert_with(Vec::new).push((
                J::String(change.name.to_string()),
                Some(change.name.to_string()),
            ));
        } else if !change.present
            && let Some(v) = items.as_mut()
        {
            v.retain(|(_, t)| t.as_deref() != Some(change.name));
        }
    }
    match items {
        Some(v) => State::Items(v.into_iter().map(|(j, _)| j).collect()),
        None => state_of(original, list),
    }
}

/// The document as JSON without the two selection lists (an emptied or null `plugins`
/// counts as absent, a null document as an empty mapping).
fn without_lists(root: &Node) -> J {
    let mut json = root.to_json();
    if json.is_null() {
        json = J::Object(serde_json::Map::new());
    }
    if let J::Object(map) = &mut json {
        let drop_plugins = match map.get_mut(PLUGINS) {
            Some(J::Object(plugins)) => {
                plugins.remove(List::Enabled.key());
                plugins.remove(List::Disabled.key());
                plugins.is_empty()
            }
            Some(J::Null) => true,
            _ => false,
        };
        if drop_plugins {
            map.remove(PLUGINS);
        }
    }
    json
}

/// Re-parses the edited text and verifies it says exactly what was intended.
fn self_check(original: &Node, text: &str, changes: &[Change<'_>]) -> Result<(), EditError> {
    let fail = |detail: String| EditError::SelfCheck { detail };
    let edited = yaml::parse(text, LIMITS)
        .map_err(|e| fail(format!("the edited text would not be valid YAML ({e})")))?
        .root;
    for list in [List::Enabled, List::Disabled] {
        let expected = expected_state(original, list, changes);
        let actual = state_of(&edited, list);
        if expected != actual {
            return Err(fail(format!(
                "{} would be {actual} instead of {expected}",
                list.path()
            )));
        }
    }
    if without_lists(original) != without_lists(&edited) {
        return Err(fail(
            "a value outside plugins.enabled and plugins.disabled would change".to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# my settings
model: gpt-x   # comment
plugins:
  enabled:
    - weather
    - news     # keep this comment
  disabled: [old-thing]
  entries:
    weather:
      allow_tool_override: true
other: 1
";

    fn add(list: List, name: &str) -> Change<'_> {
        Change {
            list,
            name,
            present: true,
        }
    }

    fn remove(list: List, name: &str) -> Change<'_> {
        Change {
            list,
            name,
            present: false,
        }
    }

    fn enabled_of(text: &str) -> State {
        state_of(&Doc::parse(text).unwrap().root, List::Enabled)
    }

    fn strs(names: &[&str]) -> State {
        State::Items(names.iter().map(|n| J::String((*n).to_string())).collect())
    }

    // --- block lists -------------------------------------------------------------------

    #[test]
    fn enable_appends_a_block_item_and_keeps_everything_else() {
        let out = enable(SAMPLE, "calendar").unwrap();
        assert_eq!(
            out,
            SAMPLE.replace(
                "    - news     # keep this comment\n",
                "    - news     # keep this comment\n    - calendar\n"
            )
        );
    }

    #[test]
    fn enabling_twice_changes_nothing_the_second_time() {
        let once = enable(SAMPLE, "calendar").unwrap();
        assert_eq!(enable(&once, "calendar").unwrap(), once);
        assert_eq!(enable(SAMPLE, "weather").unwrap(), SAMPLE);
        assert_eq!(disable(SAMPLE, "old-thing").unwrap(), SAMPLE);
        assert_eq!(forget(SAMPLE, "unknown").unwrap(), SAMPLE);
    }

    #[test]
    fn removing_deletes_the_whole_line_with_its_comment() {
        let out = forget(SAMPLE, "news").unwrap();
        assert_eq!(
            out,
            SAMPLE.replace("    - news     # keep this comment\n", "")
        );
    }

    #[test]
    fn disable_moves_a_name_from_block_to_flow_list() {
        let out = disable(SAMPLE, "weather").unwrap();
        let expected = SAMPLE
            .replace("    - weather\n", "")
            .replace("[old-thing]", "[old-thing, weather]");
        assert_eq!(out, expected);
    }

    #[test]
    fn enable_moves_a_name_out_of_the_flow_list() {
        let out = enable(SAMPLE, "old-thing").unwrap();
        let expected = SAMPLE
            .replace(
                "    - news     # keep this comment\n",
                "    - news     # keep this comment\n    - old-thing\n",
            )
            .replace("[old-thing]", "[]");
        assert_eq!(out, expected);
    }

    #[test]
    fn new_item_goes_before_comments_after_the_last_item() {
        let text = "plugins:\n  enabled:\n    - a\n    # about b\n    - b\n    # trailing note\n  disabled: []\n";
        let out = apply(text, &[add(List::Enabled, "c")]).unwrap();
        assert_eq!(
            out,
            "plugins:\n  enabled:\n    - a\n    # about b\n    - b\n    - c\n    # trailing note\n  disabled: []\n"
        );
    }

    #[test]
    fn comments_between_items_survive_removal() {
        let text = "plugins:\n  enabled:\n    - a\n    # about b\n    - b\n    - c\n";
        let out = apply(text, &[remove(List::Enabled, "b")]).unwrap();
        assert_eq!(
            out,
            "plugins:\n  enabled:\n    - a\n    # about b\n    - c\n"
        );
    }

    #[test]
    fn emptying_a_block_list_leaves_an_empty_flow_list() {
        let text = "plugins:\n  enabled:   # mine\n    - a\n    # note\n    - a\nx: 1\n";
        let out = apply(text, &[remove(List::Enabled, "a")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled: []   # mine\n    # note\nx: 1\n");
        assert_eq!(enabled_of(&out), State::Items(vec![]));
        // And adding again afterwards goes into the flow list.
        let again = apply(&out, &[add(List::Enabled, "b")]).unwrap();
        assert_eq!(
            again,
            "plugins:\n  enabled: [b]   # mine\n    # note\nx: 1\n"
        );
    }

    #[test]
    fn dash_style_of_the_last_item_is_copied() {
        let text = "plugins:\n  enabled:\n    -   a\n";
        let out = apply(text, &[add(List::Enabled, "b")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled:\n    -   a\n    -   b\n");
    }

    #[test]
    fn four_space_indentation() {
        let text = "plugins:\n    enabled:\n        - a\n    entries: {}\n";
        let out = apply(text, &[add(List::Enabled, "b")]).unwrap();
        assert_eq!(
            out,
            "plugins:\n    enabled:\n        - a\n        - b\n    entries: {}\n"
        );
        let out = apply(text, &[add(List::Disabled, "c")]).unwrap();
        assert_eq!(
            out,
            "plugins:\n    enabled:\n        - a\n    entries: {}\n    disabled:\n        - c\n"
        );
    }

    #[test]
    fn unindented_sequences() {
        let text = "plugins:\n  enabled:\n  - a\n  - b\n  other: 1\n";
        let out = apply(text, &[add(List::Enabled, "c")]).unwrap();
        assert_eq!(
            out,
            "plugins:\n  enabled:\n  - a\n  - b\n  - c\n  other: 1\n"
        );
        let out = apply(text, &[remove(List::Enabled, "a")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled:\n  - b\n  other: 1\n");
        // A new sibling list copies the unindented style.
        let out = apply(text, &[add(List::Disabled, "z")]).unwrap();
        assert_eq!(
            out,
            "plugins:\n  enabled:\n  - a\n  - b\n  other: 1\n  disabled:\n  - z\n"
        );
    }

    #[test]
    fn quoted_items_compare_unquoted() {
        let text = "plugins:\n  enabled:\n    - \"weather\"\n    - 'news'\n";
        assert_eq!(enable(text, "weather").unwrap(), text);
        let out = disable(text, "news").unwrap();
        assert_eq!(
            out,
            "plugins:\n  enabled:\n    - \"weather\"\n  disabled:\n    - news\n"
        );
    }

    #[test]
    fn names_that_need_quotes_are_double_quoted() {
        let text = "plugins:\n  enabled:\n    - a\n";
        for (name, written) in [
            ("my plugin", "\"my plugin\""),
            ("yes", "\"yes\""),
            ("1.0", "\"1.0\""),
            ("123", "\"123\""),
            ("null", "\"null\""),
            ("-", "\"-\""),
            ("a\"b\\c", "\"a\\\"b\\\\c\""),
            ("org/tool_x-1.2", "org/tool_x-1.2"),
        ] {
            let out = apply(text, &[add(List::Enabled, name)]).unwrap();
            assert_eq!(out, format!("{text}    - {written}\n"), "{name}");
            assert_eq!(enabled_of(&out), strs(&["a", name]));
            // And the quoted form is recognised when removing.
            assert_eq!(apply(&out, &[remove(List::Enabled, name)]).unwrap(), text);
        }
    }

    #[test]
    fn plain_scalars_of_other_types_compare_as_text() {
        let text = "plugins:\n  enabled: [123, a]\n";
        assert_eq!(apply(text, &[add(List::Enabled, "123")]).unwrap(), text);
        assert_eq!(
            apply(text, &[remove(List::Enabled, "123")]).unwrap(),
            "plugins:\n  enabled: [a]\n"
        );
    }

    #[test]
    fn comment_lines_before_the_first_item() {
        let text = "plugins:\n  enabled:\n    # first\n    - a\n";
        let out = apply(text, &[add(List::Enabled, "b")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled:\n    # first\n    - a\n    - b\n");
    }

    #[test]
    fn quoted_keys_and_indented_top_level() {
        let text = "\"plugins\":\n  'enabled': [a]\n";
        let out = apply(text, &[add(List::Enabled, "b")]).unwrap();
        assert_eq!(out, "\"plugins\":\n  'enabled': [a, b]\n");
        assert_eq!(
            enable("  a: 1\n", "x").unwrap(),
            "  a: 1\n  plugins:\n    enabled:\n      - x\n"
        );
    }

    // --- flow lists --------------------------------------------------------------------

    #[test]
    fn flow_list_additions() {
        let cases = [
            ("[a, b]", "[a, b, c]"),
            ("[]", "[c]"),
            ("[ ]", "[c]"),
            ("[a,b]", "[a,b,c]"),
            ("[a]", "[a, c]"),
            ("[a, b,]", "[a, b, c,]"),
            ("['a', \"b\"]", "['a', \"b\", c]"),
        ];
        for (before, after) in cases {
            let text = format!("plugins:\n  enabled: {before}  # note\nx: 1\n");
            let out = apply(&text, &[add(List::Enabled, "c")]).unwrap();
            assert_eq!(out, format!("plugins:\n  enabled: {after}  # note\nx: 1\n"));
        }
    }

    #[test]
    fn flow_list_removals() {
        let cases = [
            ("[a, b, c]", "a", "[b, c]"),
            ("[a, b, c]", "b", "[a, c]"),
            ("[a, b, c]", "c", "[a, b]"),
            ("[a]", "a", "[]"),
            ("[a, b, a]", "a", "[b]"),
            ("[b, a, a]", "a", "[b]"),
            ("[ \"a\" ]", "a", "[]"),
        ];
        for (before, name, after) in cases {
            let text = format!("plugins:\n  disabled: {before}\n");
            let out = apply(&text, &[remove(List::Disabled, name)]).unwrap();
            assert_eq!(
                out,
                format!("plugins:\n  disabled: {after}\n"),
                "{before} - {name}"
            );
        }
    }

    #[test]
    fn multi_line_flow_list() {
        let text = "plugins:\n  enabled: [\n    a,  # first\n    b\n  ]\n";
        let out = apply(text, &[add(List::Enabled, "c")]).unwrap();
        assert_eq!(
            out,
            "plugins:\n  enabled: [\n    a,  # first\n    b, c\n  ]\n"
        );
        let out = apply(text, &[remove(List::Enabled, "a")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled: [\n    b\n  ]\n");
    }

    #[test]
    fn flow_list_on_the_line_after_its_key() {
        let text = "plugins:\n  enabled:\n    [a]\n";
        let out = apply(text, &[add(List::Enabled, "b")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled:\n    [a, b]\n");
    }

    // --- missing and null values ---------------------------------------------------------

    #[test]
    fn null_list_becomes_a_block_list() {
        let text = "plugins:\n  enabled:\n  disabled: [x]\n";
        let out = apply(text, &[add(List::Enabled, "a")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled:\n    - a\n  disabled: [x]\n");
        let text = "plugins:\n  enabled: ~   # none yet\n";
        let out = apply(text, &[add(List::Enabled, "a")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled:   # none yet\n    - a\n");
        // Removing from a null list changes nothing.
        assert_eq!(apply(text, &[remove(List::Enabled, "a")]).unwrap(), text);
    }

    #[test]
    fn missing_list_key_is_the_last_key_of_plugins() {
        let text = "plugins:\n  entries:\n    weather:\n      on: true\n  # comment\nother: 1\n";
        let out = apply(text, &[add(List::Disabled, "w")]).unwrap();
        assert_eq!(
            out,
            "plugins:\n  entries:\n    weather:\n      on: true\n  disabled:\n    - w\n  # comment\nother: 1\n"
        );
    }

    #[test]
    fn null_plugins_gets_a_list() {
        let text = "plugins:\nother: 1\n";
        let out = apply(text, &[add(List::Enabled, "a")]).unwrap();
        assert_eq!(out, "plugins:\n  enabled:\n    - a\nother: 1\n");
        let text = "plugins: null # later\n";
        let out = apply(text, &[add(List::Enabled, "a")]).unwrap();
        assert_eq!(out, "plugins: # later\n  enabled:\n    - a\n");
    }

    #[test]
    fn missing_plugins_is_appended() {
        assert_eq!(
            enable("model: x\n", "a").unwrap(),
            "model: x\nplugins:\n  enabled:\n    - a\n"
        );
        assert_eq!(
            enable("model: x", "a").unwrap(),
            "model: x\nplugins:\n  enabled:\n    - a\n"
        );
        assert_eq!(
            disable("model: x\n", "a").unwrap(),
            "model: x\nplugins:\n  disabled:\n    - a\n"
        );
        // The file's indentation step is used.
        assert_eq!(
            enable("a:\n    b: 1\n", "p").unwrap(),
            "a:\n    b: 1\nplugins:\n    enabled:\n        - p\n"
        );
        // Nothing to remove: nothing written.
        assert_eq!(forget("model: x", "a").unwrap(), "model: x");
    }

    #[test]
    fn empty_whitespace_and_comment_only_files() {
        let block = "plugins:\n  enabled:\n    - a\n";
        assert_eq!(enable("", "a").unwrap(), block);
        assert_eq!(enable("\n  \n", "a").unwrap(), format!("\n  \n{block}"));
        assert_eq!(enable("# hi", "a").unwrap(), format!("# hi\n{block}"));
        assert_eq!(enable("# hi\n", "a").unwrap(), format!("# hi\n{block}"));
        assert_eq!(forget("", "a").unwrap(), "");
    }

    #[test]
    fn document_markers() {
        assert_eq!(
            enable("---\n", "a").unwrap(),
            "---\nplugins:\n  enabled:\n    - a\n"
        );
        assert_eq!(
            enable("---\nx: 1\n...\n", "a").unwrap(),
            "---\nx: 1\nplugins:\n  enabled:\n    - a\n...\n"
        );
        let text = "--- # doc\nplugins:\n  enabled: [a]\n";
        assert_eq!(
            enable(text, "b").unwrap(),
            "--- # doc\nplugins:\n  enabled: [a, b]\n"
        );
    }

    // --- line endings and encodings ----------------------------------------------------

    #[test]
    fn crlf_files_stay_crlf() {
        let text = SAMPLE.replace('\n', "\r\n");
        let out = enable(&text, "calendar").unwrap();
        assert_eq!(
            out,
            text.replace(
                "    - news     # keep this comment\r\n",
                "    - news     # keep this comment\r\n    - calendar\r\n"
            )
        );
        let out = forget(&text, "weather").unwrap();
        assert_eq!(out, text.replace("    - weather\r\n", ""));
        let out = enable("a: 1\r\n", "x").unwrap();
        assert_eq!(out, "a: 1\r\nplugins:\r\n  enabled:\r\n    - x\r\n");
        let out = enable("a: 1", "x").unwrap();
        assert_eq!(out, "a: 1\nplugins:\n  enabled:\n    - x\n");
    }

    #[test]
    fn missing_final_newline_stays_missing() {
        let text = "plugins:\n  enabled:\n    - a";
        assert_eq!(
            enable(text, "b").unwrap(),
            "plugins:\n  enabled:\n    - a\n    - b"
        );
        let text = "plugins:\n  enabled:\n    - a\n    - b";
        assert_eq!(forget(text, "b").unwrap(), "plugins:\n  enabled:\n    - a");
        assert_eq!(forget(text, "a").unwrap(), "plugins:\n  enabled:\n    - b");
        let text = "plugins:\n  enabled:\n    - a";
        assert_eq!(forget(text, "a").unwrap(), "plugins:\n  enabled: []");
        let text = "plugins:\r\n  enabled:\r\n    - a\r\n    - b";
        assert_eq!(
            forget(text, "b").unwrap(),
            "plugins:\r\n  enabled:\r\n    - a"
        );
    }

    #[test]
    fn byte_order_mark_is_kept() {
        let text = "\u{feff}plugins:\n  enabled: [a]\n";
        assert_eq!(
            enable(text, "b").unwrap(),
            "\u{feff}plugins:\n  enabled: [a, b]\n"
        );
        assert_eq!(enable(text, "a").unwrap(), text);
    }

    // --- several changes ---------------------------------------------------------------

    #[test]
    fn changes_apply_in_order() {
        let text = "plugins:\n  enabled: [a]\n";
        let out = apply(
            text,
            &[
                add(List::Enabled, "b"),
                add(List::Disabled, "a"),
                remove(List::Enabled, "a"),
                add(List::Enabled, "c"),
            ],
        )
        .unwrap();
        assert_eq!(out, "plugins:\n  enabled: [b, c]\n  disabled:\n    - a\n");
        // Adding and removing the same name ends where it started.
        let out = apply(text, &[add(List::Enabled, "z"), remove(List::Enabled, "z")]).unwrap();
        assert_eq!(out, text);
    }

    // --- errors ------------------------------------------------------------------------

    #[test]
    fn invalid_yaml_is_refused_with_its_line() {
        let err = enable("a: 1\nb: [x\n", "p").unwrap_err();
        assert!(matches!(err, EditError::InvalidYaml { .. }), "{err:?}");
        assert!(err.to_string().contains("(line "), "{err}");
        let err = enable("a: 1\n---\nb: 2\n", "p").unwrap_err();
        assert!(
            matches!(err, EditError::InvalidYaml { line: 2, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn wrong_types_are_refused() {
        let err = enable("x: 1\nplugins: everything\n", "p").unwrap_err();
        assert_eq!(
            err,
            EditError::WrongType {
                path: "plugins".into(),
                line: 2,
                found: "string",
                expected: "a mapping",
            }
        );
        assert!(
            err.to_string().starts_with("line 2: plugins is a string"),
            "{err}"
        );
        let err = enable("plugins:\n  enabled: yes\n", "p").unwrap_err();
        assert!(
            matches!(&err, EditError::WrongType { path, line: 2, found: "boolean", .. } if path == "plugins.enabled"),
            "{err:?}"
        );
        let err = forget("plugins:\n  disabled:\n    a: 1\n", "p").unwrap_err();
        assert!(
            matches!(
                err,
                EditError::WrongType {
                    found: "mapping",
                    ..
                }
            ),
            "{err:?}"
        );
        let err = enable("- a\n- b\n", "p").unwrap_err();
        assert!(
            matches!(&err, EditError::WrongType { path, found: "list", .. } if path == "the top level"),
            "{err:?}"
        );
        let err = enable("null\n", "p").unwrap_err();
        assert!(
            matches!(
                err,
                EditError::WrongType {
                    found: "null",
                    line: 1,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(enable("a: 1\n", ""), Err(EditError::EmptyName));
    }

    #[test]
    fn flow_mappings_are_refused_unless_nothing_changes() {
        let text = "plugins: {enabled: [a]}\n";
        assert_eq!(enable(text, "a").unwrap(), text);
        let err = enable(text, "b").unwrap_err();
        assert_eq!(
            err,
            EditError::FlowMapping {
                path: "plugins".into(),
                line: 1
            }
        );
        assert!(
            err.to_string().contains("edit config.yaml by hand"),
            "{err}"
        );
        let err = enable("{a: 1}\n", "b").unwrap_err();
        assert!(
            matches!(err, EditError::FlowMapping { line: 1, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn anchors_and_aliases_are_refused() {
        let cases = [
            "plugins:\n  enabled: &e [a]\nother: *e\n",
            "base: &b [a]\nplugins:\n  enabled: *b\n",
            "plugins:\n  enabled:\n    - &n a\nother: *n\n",
            "n: &n a\nplugins:\n  enabled:\n    - *n\n",
            "plugins: &p\n  enabled: [a]\nother: *p\n",
            "d: &d {enabled: [a]}\nplugins:\n  <<: *d\n  disabled: []\n",
            "n: &n a\nplugins:\n  enabled: [*n]\n",
        ];
        for text in cases {
            let err = enable(text, "b").unwrap_err();
            assert!(matches!(err, EditError::Anchor { .. }), "{text}: {err:?}");
            assert!(err.to_string().contains("anchor"), "{err}");
        }
        // Anchors elsewhere in the file do not matter.
        let text = "x: &x 1\ny: *x\nplugins:\n  enabled: [a]\n";
        assert_eq!(
            enable(text, "b").unwrap(),
            "x: &x 1\ny: *x\nplugins:\n  enabled: [a, b]\n"
        );
    }

    /// fuzz/findings/config_edit-slow-unit-d2a0b953: 4 KB of anchors and aliases expanding
    /// to nearly the node budget. Accepted (it is under the budget, and PyYAML loads it), and
    /// edited correctly; its cost is the budget's, linear in it (docs/security.md).
    #[test]
    fn an_alias_heavy_document_under_the_budget_is_edited() {
        let input = include_bytes!("../../../fuzz/findings/config_edit-slow-unit-d2a0b953");
        let (&choice, rest) = input.split_first().unwrap();
        assert_eq!(choice, 0, "the fuzz target's first byte: enable `news`");
        let text = std::str::from_utf8(rest).unwrap();
        let edited = enable(text, "news").unwrap();
        let read = yaml::parse(&edited, LIMITS).unwrap().root;
        let enabled = read.get("plugins").unwrap().value.get("enabled").unwrap();
        let names: Vec<_> = enabled
            .value
            .as_seq()
            .unwrap()
            .iter()
            .map(|n| n.as_str())
            .collect();
        assert_eq!(names, [Some("news")]);
        assert!(
            edited.starts_with(text.trim_end()),
            "only appended to:\n{edited}"
        );
    }

    #[test]
    fn self_check_refuses_a_wrong_result() {
        // A block scalar item whose last line looks like a comment fools the line scanner;
        // the re-parse notices and nothing is produced.
        let text = "plugins:\n  enabled:\n    - |\n      text\n      # not a comment\n";
        let err = apply(text, &[add(List::Enabled, "x")]).unwrap_err();
        assert!(matches!(err, EditError::SelfCheck { .. }), "{err:?}");
    }

    #[test]
    fn self_check_compares_lists_and_other_values() {
        let original = Doc::parse("a: 1\nplugins:\n  enabled: [x]\n").unwrap().root;
        let changes = [add(List::Enabled, "y")];
        assert!(self_check(&original, "a: 1\nplugins:\n  enabled: [x, y]\n", &changes).is_ok());
        assert!(self_check(&original, "a: 2\nplugins:\n  enabled: [x, y]\n", &changes).is_err());
        assert!(self_check(&original, "a: 1\nplugins:\n  enabled: [y, x]\n", &changes).is_err());
        assert!(self_check(&original, "a: 1\nplugins:\n  enabled: [x, y\n", &changes).is_err());
    }
}
