//! Shared by the targets: every position a parse or check reports lies inside its input.

#![allow(dead_code)]

use hermes_plugins::diag::Diagnostic;
use hermes_plugins::located::{Node, ParseError, Parsed, Pos, Value};

/// Whether `pos` is a character of `text` or just past the end of its line (`\n` lines):
/// exactly the positions [`Pos::clamped`] leaves alone.
pub fn inside(text: &str, pos: Pos) -> bool {
    pos.line >= 1 && pos.column >= 1 && pos.clamped(text) == pos
}

fn walk(text: &str, node: &Node) {
    assert!(inside(text, node.pos), "node at {:?}", node.pos);
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|n| walk(text, n)),
        Value::Map(entries) => {
            for e in entries {
                assert!(inside(text, e.key_pos), "key at {:?}", e.key_pos);
                walk(text, &e.value);
            }
        }
        _ => {}
    }
}

/// Asserts that every node, key, note or error position of `result` is inside `text`.
pub fn check(text: &str, result: &Result<Parsed, ParseError>) {
    match result {
        Ok(parsed) => {
            walk(text, &parsed.root);
            for note in &parsed.notes {
                assert!(inside(text, note.pos), "note at {:?}", note.pos);
            }
        }
        Err(e) => assert!(inside(text, e.pos), "error at {:?}: {}", e.pos, e.message),
    }
}

/// Asserts that every finding about a file `text_of` knows lies inside that file's text.
pub fn check_findings<'a>(findings: &[Diagnostic], text_of: impl Fn(&str) -> Option<&'a str>) {
    for d in findings {
        if let Some(text) = text_of(&d.file) {
            assert!(
                inside(text, d.pos),
                "{} at {:?} is outside {}: {}",
                d.check.as_str(),
                d.pos,
                d.file,
                d.message
            );
        }
    }
}
