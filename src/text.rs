//! Showing untrusted text safely: names, values and messages that come from plugins, catalogs,
//! URLs or the disk are escaped before they reach a terminal or a log, and credentials in
//! URLs are redacted everywhere they are shown or recorded.
//!
//! Two layers: [`escape`] for one untrusted value interpolated into a message (every control
//! character, including newlines, becomes visible), and [`for_terminal`] at the output edge
//! for whole messages (control characters other than newline and tab are escaped, so no
//! escape sequence from any source can drive the terminal).

use std::borrow::Cow;
use std::fmt::Write;
use std::sync::LazyLock;

use regex::Regex;

/// Whether `c` must not reach a terminal raw: C0/C1 controls, DEL, and the Unicode
/// bidirectional overrides and isolates that reorder what a reader sees.
fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn escape_where(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) && !keep(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One untrusted value, made printable: every control character (newlines included) and
/// every bidirectional override is shown as `\u{..}`.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_where(text, |_| false)
}

/// A whole message for a terminal or log: newlines and tabs stay, every other control
/// character (ESC, CR, BEL, …) and bidirectional override is shown as `\u{..}`.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c == '\n' || c == '\t')
}

static USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    // scheme://userinfo@ — userinfo is everything up to the last `@` before the host part.
    Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/\s@?#]*)@").expect("valid regex")
});

/// Whether a URL scheme is SSH's, whose user name is a login (`git`), not a secret: it is
/// kept, and only a password is removed.
fn is_ssh_scheme(scheme: &str) -> bool {
    let scheme = scheme.trim_end_matches("://").to_ascii_lowercase();
    scheme == "ssh" || scheme == "git+ssh" || scheme == "ssh+git"
}

/// Replaces the user-information part of every URL in `text` (`https://user:pw@host/x` →
/// `https://****@host/x`). Used on everything shown: messages, logs, JSON.
pub fn redact_credentials(text: &str) -> Cow<'_, str> {
    USERINFO.replace_all(text, |caps: &regex::Captures<'_>| {
        let (scheme, userinfo) = (&caps[1], &caps[2]);
        if is_ssh_scheme(scheme) {
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}{user}:****@"),
                None => format!("{scheme}{userinfo}@"),
            }
        } else {
            format!("{scheme}****@")
        }
    })
}

/// A URL without its user information, for recording (`installed.json`, provenance, locks):
/// `https://user:pw@host/x.git` → `https://host/x.git`. An SSH URL keeps its user name, the
/// login `update` needs again (`ssh://git@host/x.git`), and loses only a password. Text that
/// does not parse as a URL is returned with its credentials redacted instead.
pub fn strip_credentials(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if is_ssh_scheme(parsed.scheme()) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(None);
            }
            parsed.to_string()
        }
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Ok(_) => url.to_string(),
        Err(_) => redact_credentials(url).into_owned(),
    }
}

/// Whether `url` carries user information (a user name, a password or a token).
pub fn has_credentials(url: &str) -> bool {
    USERINFO.is_match(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_shows_every_control_character() {
        assert_eq!(escape("plain"), "plain");
        assert_eq!(escape("a\nb"), "a\\u{a}b");
        assert_eq!(escape("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(escape("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape("caf\u{e9}"), "caf\u{e9}");
    }

    #[test]
    fn for_terminal_keeps_lines() {
        assert_eq!(for_terminal("a\n\tb"), "a\n\tb");
        assert_eq!(for_terminal("a\rb\u{7}"), "a\\u{d}b\\u{7}");
        assert_eq!(for_terminal("\u{9b}2J"), "\\u{9b}2J");
    }

    #[test]
    fn credentials_are_redacted_and_stripped() {
        assert_eq!(
            redact_credentials("cannot clone https://user:PW@host/x.git: refused"),
            "cannot clone https://****@host/x.git: refused"
        );
        assert_eq!(
            redact_credentials("https://ghp_token@github.com/a/b"),
            "https://****@github.com/a/b"
        );
        assert_eq!(
            redact_credentials("see https://host/x and git@github.com:a/b"),
            "see https://host/x and git@github.com:a/b"
        );
        assert_eq!(
            strip_credentials("https://user:PW@host/x.git"),
            "https://host/x.git"
        );
        assert_eq!(
            strip_credentials("https://host/x.git"),
            "https://host/x.git"
        );
        // SSH's user name is a login, kept; a password is not.
        assert_eq!(
            redact_credentials("ssh://git@host/x.git and ssh://me:PW@host/y"),
            "ssh://git@host/x.git and ssh://me:****@host/y"
        );
        assert_eq!(
            strip_credentials("ssh://git:PW@host:2222/x.git"),
            "ssh://git@host:2222/x.git"
        );
        assert_eq!(
            strip_credentials("ssh://git@host/x.git"),
            "ssh://git@host/x.git"
        );
        assert!(has_credentials("https://u:p@h/x"));
        assert!(!has_credentials("https://h/x"));
    }
}
