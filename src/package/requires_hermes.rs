//! `requires_hermes`: the Hermes releases a plugin says it works with. One reader for
//! `validate` (VAL-3) and for `enable`/`sync` (which refuse a plugin whose range excludes the
//! core), so a spec one accepts is one the other can apply.
//!
//! A spec is comma-separated clauses, each an operator (`>=`, `<=`, `==`, `!=`, `>`, `<`;
//! none means `>=`, as Hermes plugin guides write `0.19`) and a PEP 440 version, which may
//! start with `v` (`>=v0.19.0-rc1`).

use std::str::FromStr;
use std::sync::LazyLock;

use regex::Regex;
use uv_pep440::{Version, VersionSpecifier, VersionSpecifiers};

static CLAUSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(>=|<=|==|!=|>|<)?\s*(.*?)\s*$").expect("valid regex"));

/// One clause, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// The operator (`>=` when the clause had none).
    pub op: &'static str,
    /// The version.
    pub version: Version,
}

/// Why a spec cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Nothing but whitespace.
    #[error("requires_hermes is empty")]
    Empty,
    /// Two commas, or a trailing one.
    #[error("requires_hermes has an empty clause (two commas, or a trailing comma)")]
    EmptyClause,
    /// A clause that is not an operator and a version.
    #[error(
        "requires_hermes clause `{0}` does not parse: expected an operator (>=, >, <=, <, ==, !=) and a version such as 0.19"
    )]
    Clause(String),
}

/// Every clause of `spec`, each read or the error it is.
pub fn clauses(spec: &str) -> Vec<Result<Clause, SpecError>> {
    if spec.trim().is_empty() {
        return vec![Err(SpecError::Empty)];
    }
    spec.split(',').map(clause).collect()
}

fn clause(text: &str) -> Result<Clause, SpecError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(SpecError::EmptyClause);
    }
    let caps = CLAUSE
        .captures(text)
        .expect("the clause pattern matches any text");
    let op = match caps.get(1).map(|m| m.as_str()) {
        Some(">=") | None => ">=",
        Some("<=") => "<=",
        Some("==") => "==",
        Some("!=") => "!=",
        Some(">") => ">",
        Some(_) => "<",
    };
    let target = caps.get(2).map_or("", |m| m.as_str());
    let target = target.strip_prefix(['v', 'V']).unwrap_or(target);
    if !target.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(SpecError::Clause(text.to_string()));
    }
    let version = Version::from_str(target).map_err(|_| SpecError::Clause(text.to_string()))?;
    Ok(Clause { op, version })
}

/// `spec` as PEP 440 specifiers, or the first clause that cannot be read.
pub fn specifiers(spec: &str) -> Result<VersionSpecifiers, SpecError> {
    let mut out = Vec::new();
    for c in clauses(spec) {
        let c = c?;
        let text = format!("{}{}", c.op, c.version);
        out.push(VersionSpecifier::from_str(&text).map_err(|_| SpecError::Clause(text.clone()))?);
    }
    Ok(out.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_plugins_write() {
        let contains = |spec: &str, v: &str| {
            specifiers(spec)
                .unwrap()
                .contains(&Version::from_str(v).unwrap())
        };
        assert!(contains(">=0.19, <1.0", "0.19.0"));
        assert!(!contains(">=0.19, <1.0", "1.0"));
        assert!(contains("0.19", "0.20.1"));
        assert!(!contains("0.19", "0.18"));
        assert!(contains("v0.19", "0.19.0"));
        assert!(contains(">=v0.19.0-rc1", "0.19.0"));
        assert!(contains("!=0.19.1", "0.19.2"));
        assert_eq!(specifiers(""), Err(SpecError::Empty));
        assert_eq!(specifiers(">=0.19,,<1"), Err(SpecError::EmptyClause));
        assert!(matches!(specifiers("~=0.19"), Err(SpecError::Clause(_))));
        assert!(matches!(specifiers(">= latest"), Err(SpecError::Clause(_))));
        assert!(matches!(specifiers("vv0.19"), Err(SpecError::Clause(_))));
    }
}
