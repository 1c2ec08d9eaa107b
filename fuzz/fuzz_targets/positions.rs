//! Shared by the located-parser targets: every position a parse reports lies inside the input.

use hermes_plugins::located::{Node, ParseError, Parsed, Pos, Value};

/// Whether `pos` is a character of `text` or just past the end of its line.
fn inside(text: &str, pos: Pos) -> bool {
    let lines: Vec<&str> = text.split('\n').collect();
    pos.line >= 1
        && (pos.line as usize) <= lines.len()
        && pos.column >= 1
        && (pos.column as usize) <= lines[pos.line as usize - 1].chars().count() + 1
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
