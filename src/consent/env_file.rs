//! `<home>/.env` (CAP-10): reading it, and setting variables surgically — an existing
//! `KEY=…` (or `export KEY=…`) line is replaced in place, a new one is appended; comments,
//! order and every other line stay as they are. The file is written with mode 0600.

use std::collections::BTreeMap;

/// Parses `KEY=value` lines (`export ` prefix, quotes and comments understood).
pub fn parse(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if let Some((key, value)) = split(line) {
            out.insert(key.to_string(), unquote(value));
        }
    }
    out
}

fn split(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') {
        return None;
    }
    let trimmed = trimmed.strip_prefix("export ").unwrap_or(trimmed);
    let (key, value) = trimmed.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some((key, value.trim()))
}

fn unquote(value: &str) -> String {
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        let inner = &value[1..value.len() - 1];
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(other) => out.push(other),
                    None => {}
                }
            } else {
                out.push(c);
            }
        }
        out
    } else if value.len() >= 2 && value.starts_with('\'') && value.ends_with('\'') {
        value[1..value.len() - 1].to_string()
    } else {
        // An unquoted value ends at an inline comment.
        match value.find(" #") {
            Some(i) => value[..i].trim_end().to_string(),
            None => value.to_string(),
        }
    }
}

fn quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+,=".contains(c));
    if plain {
        return value.to_string();
    }
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '$' => out.push_str("\\$"),
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// Sets `key` to `value` in the text of a `.env` file.
pub fn set(text: &str, key: &str, value: &str) -> String {
    let line = format!("{key}={}", quote(value));
    let mut replaced = false;
    let mut out = String::with_capacity(text.len() + line.len() + 1);
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let _ = i;
        let content = raw.trim_end_matches(['\n', '\r']);
        let ending = &raw[content.len()..];
        match split(content) {
            Some((k, _)) if k == key && !replaced => {
                let export = content.trim_start().starts_with("export ");
                out.push_str(if export { "export " } else { "" });
                out.push_str(&line);
                out.push_str(ending);
                replaced = true;
            }
            _ => out.push_str(raw),
        }
    }
    if !replaced {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_set_surgically() {
        let text = "# keys\nexport OPENAI_KEY=\"sk-1 2\"\nPLAIN=abc # note\nQ='x y'\n";
        let vars = parse(text);
        assert_eq!(vars["OPENAI_KEY"], "sk-1 2");
        assert_eq!(vars["PLAIN"], "abc");
        assert_eq!(vars["Q"], "x y");
        assert_eq!(
            set(text, "PLAIN", "new"),
            "# keys\nexport OPENAI_KEY=\"sk-1 2\"\nPLAIN=new\nQ='x y'\n"
        );
        assert_eq!(
            set(text, "OPENAI_KEY", "a\"b$c"),
            "# keys\nexport OPENAI_KEY=\"a\\\"b\\$c\"\nPLAIN=abc # note\nQ='x y'\n"
        );
        assert_eq!(set("A=1", "B", "2"), "A=1\nB=2\n");
        assert_eq!(set("", "B", "2"), "B=2\n");
        assert_eq!(parse(&set("", "S", "a b\"c")).get("S").unwrap(), "a b\"c");
        assert_eq!(set("A=1\r\nB=2\r\n", "A", "3"), "A=3\r\nB=2\r\n");
    }
}
