//! Plugin keys: the names Hermes configuration and the package manager's state use for a
//! plugin (`weather`, or `tools/weather` in a category layout). A key comes from untrusted
//! input (a manifest `name`, a directory name, `installed.json`), and keys become path
//! components (`plugin-data/<key>`, `generations/<N>/plugins/<key>`), so a key is a *name*,
//! never a path: it is checked here, and every path built from one goes through
//! [`join_key`], which checks it again.

use std::path::{Path, PathBuf};

/// Longest segment of a key (the catalog's name limit).
pub const MAX_SEGMENT: usize = 64;

/// Why a string is not a plugin key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}: `{shown}`", shown = crate::text::escape(.key))]
pub struct KeyError {
    /// The string as given.
    pub key: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Checks one segment: 1–64 ASCII letters, digits, `_`, `-` and `.`, starting with a letter,
/// digit or `_`, without `..`. This is Hermes's own install rule (no `/`, `\` or `..`,
/// not `.`/`..`) narrowed to what is safe as a file name and a Python module slug on every
/// platform.
fn check_segment(segment: &str) -> Result<(), &'static str> {
    if segment.is_empty() {
        return Err("a plugin key has an empty segment");
    }
    if segment.len() > MAX_SEGMENT {
        return Err("a plugin key segment is longer than 64 characters");
    }
    if segment.chars().any(char::is_control) {
        return Err("a plugin key contains a control character");
    }
    if segment.contains("..") {
        return Err("a plugin key contains `..`");
    }
    let first = segment.as_bytes()[0];
    if !(first.is_ascii_alphanumeric() || first == b'_') {
        return Err("a plugin key must start with a letter, a digit or `_`");
    }
    if !segment
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Err("a plugin key may only contain ASCII letters, digits, `_`, `-` and `.`");
    }
    Ok(())
}

/// Checks a plugin key: one segment (`weather`) or `<category>/<plugin>`; see
/// [`check_segment`] for the characters.
pub fn check_key(key: &str) -> Result<(), KeyError> {
    let fail = |reason| KeyError {
        key: key.to_string(),
        reason,
    };
    let segments: Vec<&str> = key.split('/').collect();
    if segments.len() > 2 {
        return Err(fail(
            "a plugin key has at most one `/` (`<category>/<plugin>`)",
        ));
    }
    for segment in segments {
        check_segment(segment).map_err(fail)?;
    }
    Ok(())
}

/// Checks a plugin *name* (a manifest `name`, a flat key): one segment, no `/`.
pub fn check_name(name: &str) -> Result<(), KeyError> {
    let fail = |reason| KeyError {
        key: name.to_string(),
        reason,
    };
    if name.contains('/') {
        return Err(fail("a plugin name cannot contain `/`"));
    }
    check_segment(name).map_err(fail)
}

/// Whether `key` is a valid plugin key.
pub fn is_key(key: &str) -> bool {
    check_key(key).is_ok()
}

/// `parent/<key>`, after proving that the result stays inside `parent`: the key is checked
/// with [`check_key`], and the joined path is checked lexically to have `parent` as a
/// strict prefix with only normal components after it. The single way the package manager
/// turns a key into a path.
pub fn join_key(parent: &Path, key: &str) -> Result<PathBuf, KeyError> {
    check_key(key)?;
    let joined = parent.join(key);
    let inside = joined.strip_prefix(parent).is_ok_and(|rest| {
        rest.components().count() >= 1
            && rest
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
    });
    if !inside {
        return Err(KeyError {
            key: key.to_string(),
            reason: "a plugin key must stay inside its directory",
        });
    }
    Ok(joined)
}

/// A serde `deserialize_with` for key fields of files under `pm/`: a key that is not valid
/// makes the whole file unreadable (fail closed) instead of becoming a path later.
pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let key = <String as serde::Deserialize>::deserialize(d)?;
    check_key(&key).map_err(serde::de::Error::custom)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_category_keys_are_keys() {
        for key in [
            "weather",
            "image_gen/openai",
            "web-exa",
            "_private",
            "A1",
            "my.plugin",
            "x".repeat(64).as_str(),
        ] {
            assert!(is_key(key), "{key}");
        }
    }

    #[test]
    fn paths_and_control_characters_are_not() {
        for key in [
            "",
            "/home/u/projects",
            "../../../../x",
            "..",
            ".",
            "a/../b",
            "a/b/c",
            "a//b",
            "a\\b",
            "-rf",
            ".hidden",
            "line\nbreak",
            "esc\u{1b}[31m",
            "tab\tkey",
            "nul\0",
            "caf\u{e9}",
            "x".repeat(65).as_str(),
            "a..b",
        ] {
            assert!(!is_key(key), "{key:?}");
        }
    }

    #[test]
    fn join_key_stays_inside() {
        let parent = Path::new("/home/u/.hermes/plugin-data");
        assert_eq!(
            join_key(parent, "tools/weather").unwrap(),
            parent.join("tools").join("weather")
        );
        for bad in ["/etc", "../x", "a/../../x", ""] {
            assert!(join_key(parent, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_error_escapes_the_key() {
        let e = check_key("a\u{1b}[2Jb").unwrap_err();
        let shown = e.to_string();
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(shown.contains("\\u{1b}"), "{shown}");
    }
}
