//! Strict JSON → located tree.
//!
//! `plugin.json` and `mcp.json` are JSON, not JSON5 or JSONC: comments, trailing commas,
//! single quotes and bare words are errors. Positions come from the parser's byte ranges.
//! Duplicate keys keep the last value (as Python's `json` does) and are reported as notes.

use jsonc_parser::ast;
use jsonc_parser::{CollectOptions, ParseOptions};

use super::lines::LineIndex;
use super::{Entry, Limits, Node, ParseError, ParseNote, Parsed, Pos, Value};

/// Parses a JSON document into a located tree.
pub fn parse(text: &str, limits: Limits) -> Result<Parsed, ParseError> {
    let options = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let result =
        jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options).map_err(|e| {
            // From the byte offset, as every node's position is: the parser's own line count
            // also breaks lines at a lone carriage return.
            ParseError::new(
                LineIndex::new(text).pos(e.range().start),
                format!("invalid JSON: {}", e.kind()),
            )
        })?;
    let value = result
        .value
        .ok_or_else(|| ParseError::new(Pos::START, "the file is empty; expected a JSON value"))?;
    let mut converter = Converter {
        lines: LineIndex::new(text),
        limits,
        nodes: 0,
        notes: Vec::new(),
    };
    let root = converter.convert(&value, 0)?;
    Ok(Parsed {
        root,
        notes: converter.notes,
    })
}

struct Converter<'a> {
    lines: LineIndex<'a>,
    limits: Limits,
    nodes: usize,
    notes: Vec<ParseNote>,
}

impl Converter<'_> {
    fn convert(&mut self, value: &ast::Value<'_>, depth: usize) -> Result<Node, ParseError> {
        self.nodes += 1;
        let start = match value {
            ast::Value::StringLit(v) => v.range.start,
            ast::Value::NumberLit(v) => v.range.start,
            ast::Value::BooleanLit(v) => v.range.start,
            ast::Value::Object(v) => v.range.start,
            ast::Value::Array(v) => v.range.start,
            ast::Value::NullKeyword(v) => v.range.start,
        };
        let pos = self.lines.pos(start);
        if self.nodes > self.limits.max_nodes {
            return Err(ParseError::new(
                pos,
                format!(
                    "document has more than {} values; refusing to load it",
                    self.limits.max_nodes
                ),
            ));
        }
        if depth > self.limits.max_depth {
            return Err(ParseError::new(
                pos,
                format!(
                    "nesting deeper than {} levels; refusing to load it",
                    self.limits.max_depth
                ),
            ));
        }
        let node = match value {
            ast::Value::StringLit(v) => Node {
                pos,
                value: Value::Str(v.value.to_string()),
                raw: format!("\"{}\"", v.value),
            },
            ast::Value::NumberLit(v) => {
                let parsed = if v.value.contains(['.', 'e', 'E']) {
                    Value::Float(v.value.parse().unwrap_or(f64::NAN))
                } else {
                    match v.value.parse::<i64>() {
                        Ok(i) => Value::Int(i),
                        Err(_) => Value::Float(v.value.parse().unwrap_or(f64::NAN)),
                    }
                };
                Node {
                    pos,
                    value: parsed,
                    raw: v.value.to_string(),
                }
            }
            ast::Value::BooleanLit(v) => Node {
                pos,
                value: Value::Bool(v.value),
                raw: v.value.to_string(),
            },
            ast::Value::NullKeyword(_) => Node {
                pos,
                value: Value::Null,
                raw: "null".to_string(),
            },
            ast::Value::Array(array) => {
                let mut items = Vec::with_capacity(array.elements.len());
                for element in &array.elements {
                    items.push(self.convert(element, depth + 1)?);
                }
                Node::new(pos, Value::Seq(items))
            }
            ast::Value::Object(object) => {
                let mut entries: Vec<Entry> = Vec::with_capacity(object.properties.len());
                let mut index: std::collections::HashMap<String, usize> =
                    std::collections::HashMap::with_capacity(object.properties.len());
                for prop in &object.properties {
                    let key = prop.name.as_str().to_string();
                    let key_pos = self.lines.pos(prop.range.start);
                    let value = self.convert(&prop.value, depth + 1)?;
                    if let Some(existing) = index.get(&key).map(|&i| &mut entries[i]) {
                        self.notes.push(ParseNote {
                            pos: key_pos,
                            message: format!(
                                "duplicate key \"{key}\" (first at {}); the last value wins",
                                existing.key_pos
                            ),
                            value: key.clone(),
                        });
                        existing.key_pos = key_pos;
                        existing.value = value;
                    } else {
                        index.insert(key.clone(), entries.len());
                        entries.push(Entry {
                            key,
                            key_pos,
                            value,
                        });
                    }
                }
                Node::new(pos, Value::Map(entries))
            }
        };
        Ok(node)
    }
}

#[cfg(test)]
mod tests {

    /// Found by `fuzz/` (located_json): the parser's own line count breaks at a lone
    /// carriage return, so errors landed on lines the text does not have.
    #[test]
    fn error_lines_break_at_newlines_only() {
        let text = "{\n  \"$\u{f}\r\u{f}\u{f}";
        let e = parse(text, Limits::default()).unwrap_err();
        assert_eq!(e.pos.line, 2, "{:?}", e.pos);
        assert_eq!(e.pos, e.pos.clamped(text), "{:?}", e.pos);
    }
    use super::*;

    #[test]
    fn strict_json_with_positions() {
        let parsed = parse(
            "{\n  \"a\": [1, 2.5, \"x\"],\n  \"b\": null\n}",
            Limits::default(),
        )
        .unwrap();
        let a = parsed.root.get("a").unwrap();
        assert_eq!(a.key_pos, Pos::new(2, 3));
        let items = a.value.as_seq().unwrap();
        assert_eq!(items[0].value, Value::Int(1));
        assert_eq!(items[1].value, Value::Float(2.5));
        assert_eq!(items[2].pos, Pos::new(2, 17));
    }

    #[test]
    fn rejects_json5_extensions() {
        for bad in [
            "{\"a\": 1,}",
            "{a: 1}",
            "{'a': 1}",
            "// c\n{}",
            "{\"a\": 0x1}",
            "",
        ] {
            assert!(
                parse(bad, Limits::default()).is_err(),
                "{bad:?} should fail"
            );
        }
        let err = parse("{\n  \"a\": 1,\n  \"b\" 2\n}", Limits::default()).unwrap_err();
        assert_eq!(err.pos.line, 3);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&text, Limits::default()).is_err());
    }

    #[test]
    fn duplicate_keys_noted() {
        let parsed = parse("{\"a\": 1, \"a\": 2}", Limits::default()).unwrap();
        assert_eq!(parsed.root.get("a").unwrap().value.value, Value::Int(2));
        assert_eq!(parsed.notes.len(), 1);
    }
}
