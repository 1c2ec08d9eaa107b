//! YAML → located tree, resolved the way Hermes reads manifests.
//!
//! Hermes loads `plugin.yaml` with PyYAML's `safe_load`, which follows YAML 1.1 for plain
//! scalars: `yes`/`on` are booleans, `1.0` is a float, `2025-01-31` is a date, `0755` is
//! octal. We resolve plain scalars with the same rules so that "this field must be a string"
//! means exactly what Hermes would see. Quoted scalars are always strings.
//!
//! Hostile input is bounded: nesting depth, and the number of nodes after alias expansion
//! (a "billion laughs" document fails with a clear error instead of exhausting memory).
//! Duplicate keys keep the last value (as Python does) and are reported as notes; merge keys
//! (`<<`) are applied as PyYAML applies them.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

use super::lines::CharLines;
use super::{Entry, Limits, Node, ParseError, ParseNote, Parsed, Pos, Value};

static BOOL_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
        .expect("valid regex")
});
static INT_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
    )
    .expect("valid regex")
});
static FLOAT_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
    )
    .expect("valid regex")
});
static NULL_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:~|null|Null|NULL|)$").expect("valid regex"));
static TIMESTAMP_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$",
    )
    .expect("valid regex")
});

const CORE_TAG: &str = "tag:yaml.org,2002:";

/// Parses one YAML document into a located tree.
///
/// An empty document is `null`. More than one document is an error (as for `safe_load`).
pub fn parse(text: &str, limits: Limits) -> Result<Parsed, ParseError> {
    Builder::new(limits).run(text)
}

/// A scalar resolved to a value, plus whether it is the merge key `<<`.
struct Resolved {
    value: Value,
    is_merge: bool,
}

enum Frame {
    Seq {
        pos: Pos,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        entries: Vec<Entry>,
        /// Entry index by key: duplicate detection stays linear in the mapping's size.
        index: HashMap<String, usize>,
        merges: Vec<Node>,
        key: Option<(Node, bool)>,
    },
}

struct Builder {
    limits: Limits,
    stack: Vec<Frame>,
    /// Anchored nodes with their sizes (an alias is charged before its copy is made).
    anchors: HashMap<usize, (Node, usize)>,
    nodes: usize,
    root: Option<Node>,
    notes: Vec<ParseNote>,
    documents: usize,
}

impl Builder {
    fn new(limits: Limits) -> Self {
        Builder {
            limits,
            stack: Vec::new(),
            anchors: HashMap::new(),
            nodes: 0,
            root: None,
            notes: Vec::new(),
            documents: 0,
        }
    }

    fn run(mut self, text: &str) -> Result<Parsed, ParseError> {
        // A byte order mark is not a column (and YAML ignores it).
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut parser = Parser::new_from_str(text);
        // Positions come from the scanner's character offsets: its line numbers count a lone
        // `\r` as a break, which no other position here (or the text's own lines) does.
        let lines = CharLines::new(text);
        while let Some(item) = parser.next_event() {
            let (event, span) = item.map_err(|e| {
                ParseError::new(
                    lines.pos(e.marker().index()),
                    format!("invalid YAML: {}", e.info()),
                )
            })?;
            let pos = lines.pos(span.start.index());
            match event {
                Event::StreamEnd => break,
                Event::StreamStart | Event::Nothing | Event::DocumentEnd => {}
                Event::DocumentStart(_) => {
                    self.documents += 1;
                    if self.documents > 1 {
                        return Err(ParseError::new(
                            pos,
                            "expected a single YAML document, but found another one here",
                        ));
                    }
                }
                Event::Alias(id) => {
                    // Charged first: an alias bomb is refused before its copies are made
                    // (found by fuzz/config_edit: ~1 s of copying per parse at the limit).
                    let count = self
                        .anchors
                        .get(&id)
                        .map(|(_, count)| *count)
                        .ok_or_else(|| ParseError::new(pos, "alias refers to an unknown anchor"))?;
                    self.charge(count, pos)?;
                    let node = self.anchors[&id].0.clone();
                    self.complete(node, false, 0)?;
                }
                Event::Scalar(text, style, anchor, tag) => {
                    self.charge(1, pos)?;
                    let resolved = resolve_scalar(&text, style, tag.as_deref(), pos)?;
                    let node = Node {
                        pos,
                        value: resolved.value,
                        raw: text.into_owned(),
                    };
                    self.complete(node, resolved.is_merge, anchor)?;
                }
                Event::SequenceStart(anchor, tag) => {
                    check_collection_tag(tag.as_deref(), "seq", pos)?;
                    self.open(pos)?;
                    self.stack.push(Frame::Seq {
                        pos,
                        anchor,
                        items: Vec::new(),
                    });
                }
                Event::MappingStart(anchor, tag) => {
                    check_collection_tag(tag.as_deref(), "map", pos)?;
                    self.open(pos)?;
                    self.stack.push(Frame::Map {
                        pos,
                        anchor,
                        entries: Vec::new(),
                        index: HashMap::new(),
                        merges: Vec::new(),
                        key: None,
                    });
                }
                Event::SequenceEnd => match self.stack.pop() {
                    Some(Frame::Seq { pos, anchor, items }) => {
                        self.complete(Node::new(pos, Value::Seq(items)), false, anchor)?;
                    }
                    _ => return Err(ParseError::new(pos, "unbalanced sequence end")),
                },
                Event::MappingEnd => match self.stack.pop() {
                    Some(Frame::Map {
                        pos,
                        anchor,
                        entries,
                        merges,
                        ..
                    }) => {
                        let entries = apply_merges(entries, merges)?;
                        self.complete(Node::new(pos, Value::Map(entries)), false, anchor)?;
                    }
                    _ => return Err(ParseError::new(pos, "unbalanced mapping end")),
                },
            }
        }
        Ok(Parsed {
            root: self
                .root
                .unwrap_or_else(|| Node::new(Pos::START, Value::Null)),
            notes: self.notes,
        })
    }

    fn charge(&mut self, nodes: usize, pos: Pos) -> Result<(), ParseError> {
        self.nodes = self.nodes.saturating_add(nodes);
        if self.nodes > self.limits.max_nodes {
            return Err(ParseError::new(
                pos,
                format!(
                    "document expands to more than {} values (alias bomb?); refusing to load it",
                    self.limits.max_nodes
                ),
            ));
        }
        Ok(())
    }

    fn open(&mut self, pos: Pos) -> Result<(), ParseError> {
        self.charge(1, pos)?;
        if self.stack.len() >= self.limits.max_depth {
            return Err(ParseError::new(
                pos,
                format!(
                    "nesting deeper than {} levels; refusing to load it",
                    self.limits.max_depth
                ),
            ));
        }
        Ok(())
    }

    fn complete(&mut self, node: Node, is_merge: bool, anchor: usize) -> Result<(), ParseError> {
        if anchor != 0 {
            let count = node.count();
            self.anchors.insert(anchor, (node.clone(), count));
        }
        match self.stack.last_mut() {
            None => {
                self.root = Some(node);
            }
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries,
                index,
                merges,
                key,
                ..
            }) => match key.take() {
                None => {
                    if matches!(node.value, Value::Seq(_) | Value::Map(_)) {
                        return Err(ParseError::new(
                            node.pos,
                            "mapping keys must be plain values, not lists or mappings",
                        ));
                    }
                    *key = Some((node, is_merge));
                }
                Some((key_node, true)) => {
                    merges.push(node);
                    drop(key_node);
                }
                Some((key_node, false)) => {
                    let name = if key_node.raw.is_empty() {
                        key_node.snippet()
                    } else {
                        key_node.raw.clone()
                    };
                    if let Some(existing) = index.get(&name).map(|&i| &mut entries[i]) {
                        self.notes.push(ParseNote {
                            pos: key_node.pos,
                            message: format!(
                                "duplicate key `{name}` (first at {}); the last value wins",
                                existing.key_pos
                            ),
                            value: name.clone(),
                        });
                        existing.key_pos = key_node.pos;
                        existing.value = node;
                    } else {
                        index.insert(name.clone(), entries.len());
                        entries.push(Entry {
                            key: name,
                            key_pos: key_node.pos,
                            value: node,
                        });
                    }
                }
            },
        }
        Ok(())
    }
}

/// Applies `<<` merge keys: keys from the merged mappings are added unless written explicitly.
fn apply_merges(mut entries: Vec<Entry>, merges: Vec<Node>) -> Result<Vec<Entry>, ParseError> {
    if merges.is_empty() {
        return Ok(entries);
    }
    let mut present: std::collections::HashSet<String> =
        entries.iter().map(|e| e.key.clone()).collect();
    for merge in merges {
        let sources: Vec<Node> = match merge.value {
            Value::Map(_) => vec![merge],
            Value::Seq(items) => items,
            _ => {
                return Err(ParseError::new(
                    merge.pos,
                    "a merge key `<<` needs a mapping or a list of mappings",
                ));
            }
        };
        for source in sources {
            let Value::Map(extra) = source.value else {
                return Err(ParseError::new(
                    source.pos,
                    "a merge key `<<` needs a mapping or a list of mappings",
                ));
            };
            for entry in extra {
                if present.insert(entry.key.clone()) {
                    entries.push(entry);
                }
            }
        }
    }
    Ok(entries)
}

fn check_collection_tag(tag: Option<&Tag>, expected: &str, pos: Pos) -> Result<(), ParseError> {
    match tag {
        None => Ok(()),
        Some(t) if t.handle == CORE_TAG && t.suffix == expected => Ok(()),
        Some(t) if t.handle == "!" && t.suffix.is_empty() => Ok(()),
        Some(t) => Err(unsupported_tag(t, pos)),
    }
}

fn unsupported_tag(tag: &Tag, pos: Pos) -> ParseError {
    let shown = if tag.handle == CORE_TAG {
        format!("!!{}", tag.suffix)
    } else {
        tag.to_string()
    };
    ParseError::new(
        pos,
        format!(
            "unsupported YAML tag `{shown}` (Hermes reads manifests with yaml.safe_load, which rejects it)"
        ),
    )
}

fn resolve_scalar(
    text: &str,
    style: ScalarStyle,
    tag: Option<&Tag>,
    pos: Pos,
) -> Result<Resolved, ParseError> {
    let plain = |value| Resolved {
        value,
        is_merge: false,
    };
    if let Some(tag) = tag {
        if tag.handle == "!" && tag.suffix.is_empty() {
            return Ok(plain(Value::Str(text.to_string())));
        }
        if tag.handle != CORE_TAG {
            return Err(unsupported_tag(tag, pos));
        }
        let value = match tag.suffix.as_str() {
            "str" => Some(Value::Str(text.to_string())),
            "int" => INT_RE.is_match(text).then(|| parse_int(text)),
            "float" => {
                (FLOAT_RE.is_match(text) || INT_RE.is_match(text)).then(|| parse_float(text))
            }
            "bool" => BOOL_RE.is_match(text).then(|| parse_bool(text)),
            "null" => NULL_RE.is_match(text).then_some(Value::Null),
            "timestamp" => TIMESTAMP_RE
                .is_match(text)
                .then(|| Value::Timestamp(text.to_string())),
            _ => return Err(unsupported_tag(tag, pos)),
        };
        return value.map(plain).ok_or_else(|| {
            ParseError::new(
                pos,
                format!(
                    "`{text}` is not a valid value for the tag `!!{}`",
                    tag.suffix
                ),
            )
        });
    }
    if style != ScalarStyle::Plain {
        return Ok(plain(Value::Str(text.to_string())));
    }
    if text == "<<" {
        return Ok(Resolved {
            value: Value::Str(text.to_string()),
            is_merge: true,
        });
    }
    let value = if NULL_RE.is_match(text) {
        Value::Null
    } else if BOOL_RE.is_match(text) {
        parse_bool(text)
    } else if INT_RE.is_match(text) {
        parse_int(text)
    } else if FLOAT_RE.is_match(text) {
        parse_float(text)
    } else if TIMESTAMP_RE.is_match(text) {
        Value::Timestamp(text.to_string())
    } else {
        Value::Str(text.to_string())
    };
    Ok(plain(value))
}

fn parse_bool(text: &str) -> Value {
    Value::Bool(matches!(
        text.to_ascii_lowercase().as_str(),
        "yes" | "true" | "on"
    ))
}

/// Integer per YAML 1.1 (binary, octal with a leading 0, hex, sexagesimal, `_` separators).
fn parse_int(text: &str) -> Value {
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    let (negative, digits) = match cleaned.strip_prefix('-') {
        Some(rest) => (true, rest.to_string()),
        None => (false, cleaned.trim_start_matches('+').to_string()),
    };
    let magnitude: Option<i128> = if let Some(bin) = digits.strip_prefix("0b") {
        i128::from_str_radix(bin, 2).ok()
    } else if let Some(hex) = digits.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()
    } else if digits.contains(':') {
        digits.split(':').try_fold(0i128, |acc, part| {
            part.parse::<i128>()
                .ok()
                .and_then(|p| acc.checked_mul(60)?.checked_add(p))
        })
    } else if digits.len() > 1 && digits.starts_with('0') {
        i128::from_str_radix(&digits[1..], 8).ok()
    } else {
        digits.parse::<i128>().ok()
    };
    match magnitude {
        Some(m) => {
            let signed = if negative { -m } else { m };
            match i64::try_from(signed) {
                Ok(v) => Value::Int(v),
                Err(_) => Value::Float(signed as f64),
            }
        }
        None => Value::Float(f64::NAN),
    }
}

fn parse_float(text: &str) -> Value {
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    let lower = cleaned.to_ascii_lowercase();
    let value = match lower.as_str() {
        ".inf" | "+.inf" => f64::INFINITY,
        "-.inf" => f64::NEG_INFINITY,
        ".nan" => f64::NAN,
        _ if lower.contains(':') => {
            let negative = lower.starts_with('-');
            let body = lower.trim_start_matches(['-', '+']);
            let total = body.split(':').fold(0.0, |acc, part| {
                acc * 60.0 + part.parse::<f64>().unwrap_or(0.0)
            });
            if negative { -total } else { total }
        }
        _ => lower.parse::<f64>().unwrap_or(f64::NAN),
    };
    Value::Float(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by `fuzz/` (located_yaml): an error at the end of the input was placed on a
    /// line past the last one.
    #[test]
    fn an_error_at_the_end_is_inside_the_text() {
        let text = "name: x\nmaintainer: team\n\u{4}\u{4}\u{4}";
        let e = parse(text, Limits::default()).unwrap_err();
        assert!(e.pos.line <= 3, "{:?}", e.pos);
        assert_eq!(e.pos, e.pos.clamped(text), "{:?}", e.pos);
    }

    /// Found by `fuzz/` (located_yaml): the scanner counts a lone `\r` as a line break, so
    /// its line numbers ran past the text's `\n`-separated lines.
    #[test]
    fn a_lone_carriage_return_is_not_a_line() {
        let text = "removed:\n  \r name: x\n";
        let doc = parse(text, Limits::default()).expect("parses").root;
        let Value::Map(entries) = &doc.value else {
            panic!("{doc:?}")
        };
        let Value::Map(inner) = &entries[0].value.value else {
            panic!("{doc:?}")
        };
        assert_eq!(inner[0].key_pos, Pos::new(2, 5));
        assert_eq!(inner[0].value.pos, Pos::new(2, 11));
        let e = parse("a: 1\r\rb: [\n", Limits::default()).unwrap_err();
        assert_eq!(e.pos, e.pos.clamped("a: 1\r\rb: [\n"), "{:?}", e.pos);
    }

    fn root(text: &str) -> Node {
        parse(text, Limits::default()).expect("parses").root
    }

    #[test]
    fn plain_scalars_resolve_like_pyyaml() {
        let doc = root(
            "a: yes\nb: 1.0\nc: 1.0.0\nd: 0755\ne: 2025-01-31\nf: ~\ng: 'yes'\nh: 1e3\ni: 0x1F\n",
        );
        let get = |k: &str| doc.get(k).unwrap().value.value.clone();
        assert_eq!(get("a"), Value::Bool(true));
        assert_eq!(get("b"), Value::Float(1.0));
        assert_eq!(get("c"), Value::Str("1.0.0".into()));
        assert_eq!(get("d"), Value::Int(0o755));
        assert_eq!(get("e"), Value::Timestamp("2025-01-31".into()));
        assert_eq!(get("f"), Value::Null);
        assert_eq!(get("g"), Value::Str("yes".into()));
        assert_eq!(get("h"), Value::Str("1e3".into()));
        assert_eq!(get("i"), Value::Int(31));
    }

    #[test]
    fn positions_are_one_based() {
        let doc = root("\u{feff}name: x\nlist:\n  - a\n");
        let name = doc.get("name").unwrap();
        assert_eq!(name.key_pos, Pos::new(1, 1));
        assert_eq!(name.value.pos, Pos::new(1, 7));
        let list = doc.get("list").unwrap().value.as_seq().unwrap();
        assert_eq!(list[0].pos, Pos::new(3, 5));
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let err = parse(&text, Limits::default()).unwrap_err();
        assert!(err.message.contains("alias bomb"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse(&text, Limits::default()).is_err());
        let text = "- ".repeat(200) + "x";
        let err = parse(&text, Limits::default()).unwrap_err();
        assert!(err.message.contains("nesting"), "{err}");
    }

    #[test]
    fn duplicate_keys_keep_last_and_note() {
        let parsed = parse("a: 1\nb: 2\na: 3\n", Limits::default()).unwrap();
        assert_eq!(parsed.root.get("a").unwrap().value.value, Value::Int(3));
        assert_eq!(parsed.notes.len(), 1);
        assert_eq!(parsed.notes[0].pos, Pos::new(3, 1));
    }

    #[test]
    fn merge_keys_apply() {
        let doc = root("base: &b {x: 1, y: 2}\nitem:\n  <<: *b\n  y: 3\n");
        let item = &doc.get("item").unwrap().value;
        assert_eq!(item.get("x").unwrap().value.value, Value::Int(1));
        assert_eq!(item.get("y").unwrap().value.value, Value::Int(3));
    }

    #[test]
    fn errors_carry_positions() {
        let err = parse("a: [1, 2\n", Limits::default()).unwrap_err();
        assert_eq!(err.pos.line, 2);
        let err = parse("a: 1\n---\nb: 2\n", Limits::default()).unwrap_err();
        assert_eq!(err.pos.line, 2);
        let err = parse("a: !!python/object:os.system x\n", Limits::default()).unwrap_err();
        assert!(err.message.contains("unsupported YAML tag"), "{err}");
    }

    #[test]
    fn empty_document_is_null() {
        assert!(root("").is_null());
        assert!(root("# just a comment\n").is_null());
    }
}
