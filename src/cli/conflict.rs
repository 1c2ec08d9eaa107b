//! A resolution conflict shown to people (`--json` carries it in the error's `details`).

use crate::resolve;

/// Prints a conflict for people: the sentences and uv's report (`--json` puts it in the
/// error document's `details`).
pub fn print_conflict(printer: &super::Printer, conflict: &resolve::conflict::Conflict) {
    let mut text = String::from("No solution:\n");
    for s in &conflict.sentences {
        text.push_str(&format!("  - {s}\n"));
    }
    if !conflict.detail.trim().is_empty() {
        text.push_str("\nuv's explanation:\n");
        for line in conflict.detail.lines() {
            text.push_str(&format!("  {line}\n"));
        }
    }
    for h in &conflict.hints {
        text.push_str(&format!("  hint: {h}\n"));
    }
    printer.rendered(&text, false);
}
