//! SARIF 2.1.0 output for GitHub code scanning: one rule per check id, one result per finding
//! with a physical location (artifact URI relative to the checkout, line and column).

use serde_json::{Value, json};

use super::{Report, Rule};

/// The SARIF 2.1.0 schema id.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(severity: &str) -> &'static str {
    match severity {
        "error" => "error",
        "warning" => "warning",
        _ => "note",
    }
}

/// `error` → `Error`… for rule names: `requires-env` → `RequiresEnv`.
fn pascal(id: &str) -> String {
    id.split('-')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// Encodes a path as a URI reference: `/` kept, other reserved or non-ASCII bytes escaped.
/// Absolute paths become `file://` URIs with `.` and `..` segments resolved lexically (SARIF
/// consumers reject `..` in file URIs: its meaning changes across symlinks).
pub fn path_to_uri(path: &str) -> String {
    let mut out = String::new();
    let absolute = path.starts_with('/');
    let normalised;
    let path = if absolute {
        out.push_str("file://");
        normalised = normalise_absolute(path);
        normalised.as_str()
    } else {
        path
    };
    for byte in path.trim_start_matches("./").bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// `/a/b/../c/./d` → `/a/c/d`; `..` at the root stays at the root.
fn normalise_absolute(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Renders the report as a SARIF 2.1.0 log.
pub fn render(report: &Report, rules: &[Rule]) -> String {
    let rule_index = |id: &str| rules.iter().position(|r| r.id == id);
    let sarif_rules: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": format!("{}Check", pascal(r.id)),
                "shortDescription": { "text": r.title },
                "fullDescription": { "text": r.help },
                "help": { "text": r.help },
                "defaultConfiguration": { "level": level(r.default_severity) },
                "properties": { "tags": ["hermes-plugins", r.spec] }
            })
        })
        .collect();
    let mut results = Vec::new();
    for package in &report.packages {
        for f in &package.findings {
            let mut text = f.message.clone();
            if let Some(value) = &f.value {
                text.push_str(&format!(" (value: {value})"));
            }
            if let Some(hint) = &f.hint {
                text.push_str(&format!(" Fix: {hint}"));
            }
            let uri = path_to_uri(&f.file);
            let mut artifact = json!({ "uri": uri });
            if !f.file.starts_with('/') {
                artifact["uriBaseId"] = json!("%SRCROOT%");
            }
            let mut result = json!({
                "ruleId": f.check,
                "level": level(&f.severity),
                "message": { "text": text },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": artifact,
                        "region": { "startLine": f.line.max(1), "startColumn": f.column.max(1) }
                    }
                }],
                "properties": { "package": package.key }
            });
            if let Some(i) = rule_index(&f.check) {
                result["ruleIndex"] = json!(i);
            }
            if let Some(component) = &f.component {
                result["properties"]["component"] = json!(component);
            }
            results.push(result);
        }
    }
    let log = json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": report.tool.name,
                    "version": report.tool.version,
                    "semanticVersion": report.tool.version,
                    "informationUri": "https://github.com/NousResearch/hermes-agent",
                    "rules": sarif_rules
                }
            },
            "originalUriBaseIds": { "%SRCROOT%": { "description": { "text": "The directory hermes-plugins ran in" } } },
            "columnKind": "unicodeCodePoints",
            "results": results
        }]
    });
    serde_json::to_string_pretty(&log).expect("SARIF serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(
            path_to_uri("./fixtures/a b/plugin.yaml"),
            "fixtures/a%20b/plugin.yaml"
        );
        assert_eq!(path_to_uri("/tmp/x.yaml"), "file:///tmp/x.yaml");
        assert_eq!(
            path_to_uri("/check/main/../shared/./c/x.py"),
            "file:///check/shared/c/x.py"
        );
        assert_eq!(path_to_uri("/../x"), "file:///x");
        assert_eq!(pascal("requires-env"), "RequiresEnv");
    }
}
