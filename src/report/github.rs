//! GitHub Actions workflow commands: one `::error file=…,line=…,col=…,title=…::message` line
//! per finding (warnings as `::warning`, infos as `::notice`).

use super::Report;

/// Escapes data (the message) of a workflow command.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Renders every finding as a workflow command, then a summary line naming the command that
/// made the report (`tool`: `validate`, `catalog check`, `catalog review`) and what it
/// counted (`items`: `package(s)`, `entry file(s)`).
pub fn render(report: &Report, tool: &str, items: &str) -> String {
    let mut out = String::new();
    for package in &report.packages {
        for f in &package.findings {
            let command = match f.severity.as_str() {
                "error" => "error",
                "warning" => "warning",
                _ => "notice",
            };
            let mut message = format!("{}: {}", package.key, f.message);
            if let Some(hint) = &f.hint {
                message.push_str(" — ");
                message.push_str(hint);
            }
            out.push_str(&format!(
                "::{command} file={},line={},col={},title={}::{}\n",
                escape_property(&f.file),
                f.line,
                f.column,
                escape_property(&format!("hermes-plugins {}", f.check)),
                escape_data(&message)
            ));
        }
    }
    let s = report.summary;
    out.push_str(&format!(
        "hermes-plugins {tool}: {} {items}, {} ok, {} failed; {} error(s), {} warning(s)\n",
        s.packages, s.ok, s.failed, s.errors, s.warnings
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_data("a%b\nc"), "a%25b%0Ac");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
