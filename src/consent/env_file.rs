//! `<home>/.env` (CAP-10): reading it as python-dotenv does, and setting variables surgically
//! so that python-dotenv — what Hermes loads `.env` with, interpolation on — reads back
//! exactly the value that was typed.
//!
//! Reading follows python-dotenv's grammar: bindings (`KEY=value`, `export KEY=value`, a
//! single-quoted key), values unquoted (to an inline `#` comment), single-quoted (`\\` and `\'`
//! escapes) or double-quoted (`\\`, `\'`, `\"`, `\a\b\f\n\r\t\v` escapes), quoted values
//! spanning lines, comments, and lines it cannot parse skipped.
//!
//! Writing: every value is one double-quoted line (Hermes's own `.env` writer quotes the same
//! way, so its settings screens read it too): `\` → `\\`, `"` → `\"`, newline → `\n`, carriage
//! return → `\r`. Two things python-dotenv would otherwise change are written as an
//! interpolation of the empty variable name with a default, which no environment defines:
//! a `$` before `{` as `${:-$}` (else `${HOME}` would be expanded), and a backslash ending the
//! value as `${:-\\}` (else its quote regex, seeing `\"`, would run on to the next `"` in the
//! file). A NUL cannot be in any environment variable and is refused. An existing binding of
//! the key — even one spanning lines — is replaced in place; anything else stays as it is.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// Why a value cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// The name is not an environment variable name.
    #[error(
        "`{0}` is not an environment variable name (letters, digits and _, not starting with a digit)"
    )]
    BadName(String),
    /// The value holds a NUL.
    #[error("the value of {0} contains a NUL character, which no environment variable can hold")]
    Nul(String),
    /// What was written would not read back (the file has text before it that python-dotenv
    /// reads as running on, such as an unclosed quote): nothing is written.
    #[error(
        "{0} cannot be set safely in this .env file: python-dotenv would not read the new value back, or would read another key differently (an unclosed quote or similar before it?); fix the file and try again"
    )]
    Unreadable(String),
}

/// One binding of a dotenv file as python-dotenv sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The key (`None`: a comment, a blank stretch, or a line python-dotenv skips).
    pub key: Option<String>,
    /// The value with escapes decoded (`None`: `KEY` without `=`); interpolation is not applied.
    pub value: Option<String>,
    /// Where it is in the text, including its line ending.
    pub span: Range<usize>,
    /// Whether it starts with `export`.
    pub export: bool,
}

fn re(pattern: &str) -> Regex {
    Regex::new(&format!(r"\A(?:{pattern})")).expect("a valid pattern")
}

static MULTILINE_WHITESPACE: LazyLock<Regex> = LazyLock::new(|| re(r"\s*"));
static WHITESPACE: LazyLock<Regex> = LazyLock::new(|| re(r"[^\S\r\n]*"));
static EXPORT: LazyLock<Regex> = LazyLock::new(|| re(r"export[^\S\r\n]+"));
static SINGLE_QUOTED_KEY: LazyLock<Regex> = LazyLock::new(|| re(r"'([^']+)'"));
static UNQUOTED_KEY: LazyLock<Regex> = LazyLock::new(|| re(r"([^=\#\s]+)"));
static EQUAL_SIGN: LazyLock<Regex> = LazyLock::new(|| re(r"=[^\S\r\n]*"));
static SINGLE_QUOTED_VALUE: LazyLock<Regex> = LazyLock::new(|| re(r"'((?:\\'|[^'])*)'"));
static DOUBLE_QUOTED_VALUE: LazyLock<Regex> = LazyLock::new(|| re(r#""((?:\\"|[^"])*)""#));
static UNQUOTED_VALUE: LazyLock<Regex> = LazyLock::new(|| re(r"([^\r\n]*)"));
static COMMENT: LazyLock<Regex> = LazyLock::new(|| re(r"(?:[^\S\r\n]*#[^\r\n]*)?"));
static END_OF_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"[^\S\r\n]*(?:\r\n|\n|\r|\z)"));
static REST_OF_LINE: LazyLock<Regex> = LazyLock::new(|| re(r"[^\r\n]*(?:\r|\n|\r\n)?"));
static INLINE_COMMENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+#.*").expect("valid"));
static SINGLE_ESCAPES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\\[\\']").expect("valid"));
static DOUBLE_ESCAPES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\\[\\'"abfnrtv]"#).expect("valid"));

/// A cursor over the text; each read consumes what its pattern matched at the cursor.
struct Reader<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Reader<'t> {
    fn read(&mut self, pattern: &Regex) -> Option<regex::Captures<'t>> {
        let rest: &'t str = &self.text[self.at..];
        let caps = pattern.captures(rest)?;
        self.at += caps.get(0).map_or(0, |m| m.end());
        Some(caps)
    }

    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }
}

fn decode(escapes: &Regex, raw: &str) -> String {
    escapes
        .replace_all(raw, |c: &regex::Captures| {
            match c[0].as_bytes()[1] {
                b'a' => "\x07",
                b'b' => "\x08",
                b'f' => "\x0c",
                b'n' => "\n",
                b'r' => "\r",
                b't' => "\t",
                b'v' => "\x0b",
                b'\\' => "\\",
                b'\'' => "'",
                _ => "\"",
            }
            .to_string()
        })
        .into_owned()
}

/// One binding at the cursor, or `None` when it cannot be parsed (python-dotenv skips the
/// rest of the line).
fn binding(r: &mut Reader) -> Option<(Option<String>, Option<String>, bool)> {
    let export = r.read(&EXPORT).is_some();
    let key = match r.peek() {
        Some('#') => None,
        Some('\'') => Some(r.read(&SINGLE_QUOTED_KEY)?[1].to_string()),
        _ => Some(r.read(&UNQUOTED_KEY)?[1].to_string()),
    };
    r.read(&WHITESPACE);
    let value = if r.peek() == Some('=') {
        r.read(&EQUAL_SIGN);
        Some(match r.peek() {
            Some('\'') => decode(&SINGLE_ESCAPES, &r.read(&SINGLE_QUOTED_VALUE)?[1]),
            Some('"') => decode(&DOUBLE_ESCAPES, &r.read(&DOUBLE_QUOTED_VALUE)?[1]),
            None | Some('\r') | Some('\n') => String::new(),
            Some(_) => {
                let raw = r.read(&UNQUOTED_VALUE)?[1].to_string();
                INLINE_COMMENT.replace(&raw, "").trim_end().to_string()
            }
        })
    } else {
        None
    };
    r.read(&COMMENT);
    r.read(&END_OF_LINE)?;
    Some((key, value, export))
}

/// The bindings of a dotenv text, in order, as python-dotenv parses them.
pub fn bindings(text: &str) -> Vec<Binding> {
    let mut out = Vec::new();
    let mut r = Reader { text, at: 0 };
    loop {
        let start = r.at;
        r.read(&MULTILINE_WHITESPACE);
        if r.at >= text.len() {
            if r.at > start {
                out.push(Binding {
                    key: None,
                    value: None,
                    span: start..r.at,
                    export: false,
                });
            }
            return out;
        }
        let line_start = r.at;
        let parsed = binding(&mut r);
        let (key, value, export) = match parsed {
            Some(found) => found,
            None => {
                r.at = line_start;
                r.read(&REST_OF_LINE);
                (None, None, false)
            }
        };
        out.push(Binding {
            key,
            value,
            span: start..r.at,
            export,
        });
        if r.at == start {
            // Nothing consumed (cannot happen with these patterns; never loop forever).
            return out;
        }
    }
}

/// `${NAME}` or `${NAME:-default}`, as python-dotenv's interpolation finds them.
static VARIABLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$\{([^}:]*)(?::-([^}]*))?\}").expect("a valid pattern"));

/// The values Hermes gets from a dotenv text — python-dotenv with interpolation on and
/// `override=True`, as Hermes loads `.env`: in every value, `${NAME}` and `${NAME:-default}`
/// become the value bound earlier in the file, else `environment(NAME)`, else the default
/// (else empty). The last binding of a key wins; `KEY` without `=` binds nothing.
pub fn values(
    text: &str,
    environment: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    // `None`: bound without `=` (python-dotenv resolves a reference to it to "").
    let mut seen: BTreeMap<String, Option<String>> = BTreeMap::new();
    for b in bindings(text) {
        let Some(key) = b.key else { continue };
        let resolved = b.value.map(|raw| {
            VARIABLE
                .replace_all(&raw, |c: &regex::Captures<'_>| {
                    let name = &c[1];
                    match seen.get(name) {
                        Some(value) => value.clone().unwrap_or_default(),
                        None => environment(name).unwrap_or_else(|| {
                            c.get(2).map(|d| d.as_str().to_string()).unwrap_or_default()
                        }),
                    }
                })
                .into_owned()
        });
        seen.insert(key, resolved);
    }
    seen.into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

/// The variables a dotenv text assigns (the last binding of a key wins, as in python-dotenv;
/// `KEY` without `=` assigns nothing), values decoded but not interpolated (which variables
/// are set is all the callers ask; see [`values`] for what Hermes reads).
pub fn parse(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for b in bindings(text) {
        if let (Some(key), Some(value)) = (b.key, b.value) {
            out.insert(key, value);
        }
    }
    out
}

/// Whether `name` can be an environment variable's name here.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `value` as one double-quoted dotenv value that python-dotenv (interpolating) reads back
/// unchanged (see the module documentation).
pub fn encode(name: &str, value: &str) -> Result<String, EnvError> {
    if value.contains('\0') {
        return Err(EnvError::Nul(name.to_string()));
    }
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_none() => out.push_str("${:-\\\\}"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '$' if chars.peek() == Some(&'{') => out.push_str("${:-$}"),
            other => out.push(other),
        }
    }
    out.push('"');
    Ok(out)
}

/// Sets `key` to `value` in the text of a `.env` file: the last binding of the key is
/// replaced (keeping `export` and its line ending), else a line is appended. The result is
/// read back as python-dotenv reads it; if the value would not come back (earlier text runs
/// on into the new line), or another key would read differently (the new text closes a quote
/// an earlier value left open), nothing is returned but [`EnvError::Unreadable`].
pub fn set(text: &str, key: &str, value: &str) -> Result<String, EnvError> {
    let out = set_unchecked(text, key, value)?;
    // Read it back as Hermes will: a file whose earlier text swallows the new line is refused.
    let others = |text: &str| {
        let mut raw = parse(text);
        raw.remove(key);
        raw
    };
    if values(&out, &|_| None).get(key).map(String::as_str) != Some(value)
        || others(&out) != others(text)
    {
        return Err(EnvError::Unreadable(key.to_string()));
    }
    Ok(out)
}

/// [`set`] without the read-back check.
fn set_unchecked(text: &str, key: &str, value: &str) -> Result<String, EnvError> {
    if !valid_name(key) {
        return Err(EnvError::BadName(key.to_string()));
    }
    let line = format!("{key}={}", encode(key, value)?);
    let all = bindings(text);
    let Some(existing) = all.iter().rev().find(|b| b.key.as_deref() == Some(key)) else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&line);
        out.push('\n');
        return Ok(out);
    };
    let original = &text[existing.span.clone()];
    // The binding's span starts with any blank lines before it: keep them.
    let lead = original.len() - original.trim_start().len();
    let ending = if original.ends_with("\r\n") {
        "\r\n"
    } else if original.ends_with('\n') {
        "\n"
    } else if original.ends_with('\r') {
        "\r"
    } else {
        ""
    };
    let mut out = String::with_capacity(text.len() + line.len());
    out.push_str(&text[..existing.span.start + lead]);
    if existing.export {
        out.push_str("export ");
    }
    out.push_str(&line);
    out.push_str(ending);
    out.push_str(&text[existing.span.end..]);
    Ok(out)
}

#[cfg(test)]
mod tests {

    /// Found by `fuzz/` (env_file): after an unclosed single quote, python-dotenv reads the
    /// appended binding as part of a quoted key; the writer refuses instead of writing a
    /// value Hermes would never see.
    #[test]
    fn a_binding_that_would_not_read_back_is_refused() {
        assert_eq!(
            set("'", "FUZZ_KEY", "'=\n"),
            Err(EnvError::Unreadable("FUZZ_KEY".into()))
        );
        assert!(set("A=1\n", "FUZZ_KEY", "'=\n").is_ok());
        // Found by fuzz/env_file: the new line closed a quote an earlier value left open
        // (python-dotenv's `\\'` is an escaped quote when a later `'` exists), so `h\` changed.
        assert_eq!(
            set("h\\='\n\\\\'", "FUZZ_KEY", "'FUZZ"),
            Err(EnvError::Unreadable("FUZZ_KEY".into()))
        );
    }

    #[test]
    fn values_interpolate_as_python_dotenv_with_override() {
        // python-dotenv 1.2.2, DotEnv(override=True) with HOME=/h, on the same text:
        // {'A': '2', 'B': '1x', 'C': 'd', 'D': '/h', 'E': None, 'F': 'y', 'G': '2'}
        let text = "A=1\nB=${A}x\nC=${MISSING:-d}\nD=${HOME}\nE\nF=${E}y\nA=2\nG=${A}\n";
        let got = values(text, &|name| (name == "HOME").then(|| "/h".to_string()));
        let want: BTreeMap<String, String> = [
            ("A", "2"),
            ("B", "1x"),
            ("C", "d"),
            ("D", "/h"),
            ("F", "y"),
            ("G", "2"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, want);
    }
    use super::*;

    #[test]
    fn parse_follows_python_dotenv() {
        let text = "# keys\nexport OPENAI_KEY=\"sk-1 2\"\nPLAIN=abc # note\nQ='x y'\n\nMULTI='a\nb'\n'QK'=v\nNOVALUE\nbroken line\nE=\n";
        let vars = parse(text);
        assert_eq!(vars["OPENAI_KEY"], "sk-1 2");
        assert_eq!(vars["PLAIN"], "abc");
        assert_eq!(vars["Q"], "x y");
        assert_eq!(vars["MULTI"], "a\nb");
        assert_eq!(vars["QK"], "v");
        assert_eq!(vars["E"], "");
        assert!(!vars.contains_key("NOVALUE"));
        assert_eq!(parse("D=\"a\\tb\\\\c\\\"d\\'e\"\n")["D"], "a\tb\\c\"d'e");
        assert_eq!(parse("S='a\\\\b\\'c\\n'")["S"], "a\\b'c\\n");
        // Bindings tile the text: nothing is lost when one is replaced.
        let spans: String = bindings(text)
            .iter()
            .map(|b| &text[b.span.clone()])
            .collect();
        assert_eq!(spans, text);
    }

    #[test]
    fn set_is_surgical() {
        let text = "# keys\nexport OPENAI_KEY=\"sk-1 2\"\nPLAIN=abc # note\nQ='x y'\n";
        assert_eq!(
            set(text, "PLAIN", "new").unwrap(),
            "# keys\nexport OPENAI_KEY=\"sk-1 2\"\nPLAIN=\"new\"\nQ='x y'\n"
        );
        assert_eq!(
            set(text, "OPENAI_KEY", "a\"b$c").unwrap(),
            "# keys\nexport OPENAI_KEY=\"a\\\"b$c\"\nPLAIN=abc # note\nQ='x y'\n"
        );
        assert_eq!(set("A=1", "B", "2").unwrap(), "A=1\nB=\"2\"\n");
        assert_eq!(set("", "B", "2").unwrap(), "B=\"2\"\n");
        assert_eq!(
            set("A=1\r\nB=2\r\n", "A", "3").unwrap(),
            "A=\"3\"\r\nB=2\r\n"
        );
        // A value spanning lines is replaced whole.
        assert_eq!(set("M='a\nb'\nZ=1\n", "M", "c").unwrap(), "M=\"c\"\nZ=1\n");
        assert_eq!(set("\n\nA=1\n", "A", "2").unwrap(), "\n\nA=\"2\"\n");
        assert!(matches!(set("", "A", "a\0b"), Err(EnvError::Nul(_))));
        assert!(matches!(set("", "1A", "x"), Err(EnvError::BadName(_))));
    }

    #[test]
    fn encoding_defeats_interpolation_and_the_quote_regex() {
        assert_eq!(encode("K", "${HOME}").unwrap(), "\"${:-$}{HOME}\"");
        assert_eq!(encode("K", "a\\").unwrap(), "\"a${:-\\\\}\"");
        assert_eq!(encode("K", "l1\nl2\r").unwrap(), "\"l1\\nl2\\r\"");
        assert_eq!(encode("K", "$HOME $").unwrap(), "\"$HOME $\"");
        // Decoded (before interpolation) the way python-dotenv decodes it.
        let text = format!("K={}\nN=\"x\"\n", encode("K", "a\\").unwrap());
        assert_eq!(parse(&text)["K"], "a${:-\\}");
        assert_eq!(parse(&text)["N"], "x");
    }
}
