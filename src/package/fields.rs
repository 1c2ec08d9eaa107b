//! Typed reading of fields from a located tree, with a located finding for every mismatch.
//!
//! MAN-3: a wrong type degrades field by field — at runtime it is a warning and the field
//! takes its default; in `validate` it is an error. [`Mode`] selects which.

use crate::diag::{CheckId, Diagnostic, DiagnosticExt, Severity, Sink};
use crate::located::{Dialect, Node, Pos, Value};

/// A value with the position it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub pos: Pos,
}

impl<T> Spanned<T> {
    /// Wraps a value with its position.
    pub fn new(value: T, pos: Pos) -> Self {
        Spanned { value, pos }
    }
}

/// How strictly a package is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `validate` (and install admission): wrong types are errors.
    Validate,
    /// Reading installed packages: wrong types are warnings and the field is defaulted.
    Runtime,
}

/// Reads typed fields, recording findings into a [`Sink`].
pub struct FieldReader<'s, 'o> {
    /// Where findings go.
    pub sink: &'s mut Sink<'o>,
    /// The syntax the tree came from (for type names in messages).
    pub dialect: Dialect,
    /// Validate or runtime.
    pub mode: Mode,
}

impl<'s, 'o> FieldReader<'s, 'o> {
    /// A reader writing into `sink`.
    pub fn new(sink: &'s mut Sink<'o>, dialect: Dialect, mode: Mode) -> Self {
        FieldReader {
            sink,
            dialect,
            mode,
        }
    }

    /// The severity of a type mismatch in this mode.
    pub fn type_severity(&self) -> Severity {
        match self.mode {
            Mode::Validate => Severity::Error,
            Mode::Runtime => Severity::Warning,
        }
    }

    /// Records a finding at `pos`.
    pub fn report(
        &mut self,
        check: CheckId,
        severity: Severity,
        pos: Pos,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.sink.push(check, severity, pos, message)
    }

    /// Records "`field` must be EXPECTED, not TYPE" for `node`, with the value and a hint
    /// for the usual YAML surprises (numbers, booleans and dates that wanted quoting).
    pub fn wrong_type(
        &mut self,
        check: CheckId,
        field: &str,
        node: &Node,
        expected: &str,
    ) -> &mut Diagnostic {
        let severity = self.type_severity();
        let got = node.type_name(self.dialect);
        let hint = quoting_hint(node, expected, self.dialect);
        let degrade = match self.mode {
            Mode::Runtime => "; ignoring it",
            Mode::Validate => "",
        };
        let snippet = node.snippet();
        let diag = self.sink.push(
            check,
            severity,
            node.pos,
            format!("`{field}` must be {expected}, not {got}{degrade}"),
        );
        diag.with_value(snippet);
        if let Some(hint) = hint {
            diag.with_hint(hint);
        }
        diag
    }

    /// A string field (`None`, with a finding, when it is something else; null is absent).
    pub fn string(&mut self, check: CheckId, field: &str, node: &Node) -> Option<Spanned<String>> {
        match &node.value {
            Value::Str(s) => Some(Spanned::new(s.clone(), node.pos)),
            Value::Null => None,
            _ => {
                self.wrong_type(check, field, node, "a string");
                None
            }
        }
    }

    /// A boolean field.
    pub fn boolean(&mut self, check: CheckId, field: &str, node: &Node) -> Option<Spanned<bool>> {
        match &node.value {
            Value::Bool(b) => Some(Spanned::new(*b, node.pos)),
            Value::Null => None,
            _ => {
                self.wrong_type(check, field, node, "true or false");
                None
            }
        }
    }

    /// An integer field.
    pub fn integer(&mut self, check: CheckId, field: &str, node: &Node) -> Option<Spanned<i64>> {
        match &node.value {
            Value::Int(i) => Some(Spanned::new(*i, node.pos)),
            Value::Null => None,
            _ => {
                self.wrong_type(check, field, node, "an integer");
                None
            }
        }
    }

    /// A list of strings; bad items are reported one by one and skipped.
    pub fn string_list(
        &mut self,
        check: CheckId,
        field: &str,
        node: &Node,
    ) -> Vec<Spanned<String>> {
        let items = match &node.value {
            Value::Seq(items) => items,
            Value::Null => return Vec::new(),
            _ => {
                let expected = format!("a {} of strings", self.list_word());
                self.wrong_type(check, field, node, &expected);
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match &item.value {
                Value::Str(s) => out.push(Spanned::new(s.clone(), item.pos)),
                _ => {
                    let label = format!("{field}[{index}]");
                    self.wrong_type(check, &label, item, "a string");
                }
            }
        }
        out
    }

    /// The items of a list field (null is empty; anything else is a finding).
    pub fn list<'n>(&mut self, check: CheckId, field: &str, node: &'n Node) -> &'n [Node] {
        match &node.value {
            Value::Seq(items) => items,
            Value::Null => &[],
            _ => {
                let expected = format!("a {}", self.list_word());
                self.wrong_type(check, field, node, &expected);
                &[]
            }
        }
    }

    /// The entries of a mapping field (null is empty; anything else is a finding).
    pub fn map<'n>(
        &mut self,
        check: CheckId,
        field: &str,
        node: &'n Node,
    ) -> &'n [crate::located::Entry] {
        match &node.value {
            Value::Map(entries) => entries,
            Value::Null => &[],
            _ => {
                let expected = format!("a {}", self.map_word());
                self.wrong_type(check, field, node, &expected);
                &[]
            }
        }
    }

    /// "list" or "array".
    pub fn list_word(&self) -> &'static str {
        match self.dialect {
            Dialect::Yaml => "list",
            Dialect::Json => "array",
        }
    }

    /// "mapping" or "object".
    pub fn map_word(&self) -> &'static str {
        match self.dialect {
            Dialect::Yaml => "mapping",
            Dialect::Json => "object",
        }
    }
}

fn quoting_hint(node: &Node, expected: &str, dialect: Dialect) -> Option<String> {
    if dialect != Dialect::Yaml || !expected.contains("string") {
        return None;
    }
    match &node.value {
        Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Timestamp(_) | Value::Null => {
            Some(format!(
                "YAML reads `{}` as a {}; quote it to keep it text: \"{}\"",
                node.raw,
                node.type_name(dialect),
                node.raw
            ))
        }
        _ => None,
    }
}

/// Whether `name` is an environment variable name as manifests, config schemas and catalog
/// entries must write it: UPPER_SNAKE_CASE (`^[A-Z][A-Z0-9_]*$`). The one home of the rule.
pub fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod env_name_tests {
    #[test]
    fn upper_snake_case_only() {
        for ok in ["A", "API_KEY", "X1_2", "A__"] {
            assert!(super::is_env_name(ok), "{ok}");
        }
        for bad in ["", "_A", "1A", "api_key", "A-B", "A B", "ÄB"] {
            assert!(!super::is_env_name(bad), "{bad}");
        }
    }
}
