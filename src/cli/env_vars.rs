//! Every environment variable the binary reads, in one list (uv's `EnvVars`), and the small
//! typed readers of the ones that are not clap flags. Only the CLI reads the environment:
//! what a variable decides reaches the library as a value (the [`crate::manager::Context`],
//! the git configuration, a timestamp). The one exception is `HERMES_PLUGINS_FAULT`, the test
//! hook of [`crate::generation::faults`]. Variables the binary *sets* for a child (`exec`)
//! belong to [`crate::agent`]. uv's crates read their own, as uv does: the client
//! `SSL_CERT_FILE`, `SSL_CERT_DIR`, `HTTP(S)_PROXY`, `ALL_PROXY`, `NO_PROXY` and `NETRC`;
//! `uv_configuration::min_stack_size` `UV_STACK_SIZE` (then `RUST_MIN_STACK`) for the
//! resolver threads' stacks.

use std::collections::BTreeSet;
use std::time::Duration;

/// The names.
pub struct EnvVars;

impl EnvVars {
    /// The Hermes home (`--home`).
    pub const HERMES_HOME: &'static str = "HERMES_HOME";
    /// The user's home: `~/.hermes` when `HERMES_HOME` is unset; `~` in messages.
    pub const HOME: &'static str = "HOME";
    /// Set by a shell asking for completions (`COMPLETE=bash`, clap_complete's protocol).
    pub const COMPLETE: &'static str = "COMPLETE";
    /// Where programs are found (`hermes` for an installed core, `--python NAME`).
    pub const PATH: &'static str = "PATH";
    /// `--core`.
    pub const HERMES_PLUGINS_CORE: &'static str = "HERMES_PLUGINS_CORE";
    /// The user's cache (else `XDG_CACHE_HOME`, `HOME`): `validate`'s reports of unchanged
    /// packages (`validate-v1/`) and what uv learns about interpreters, for every home (`uv/`).
    pub const HERMES_PLUGINS_CACHE_DIR: &'static str = "HERMES_PLUGINS_CACHE_DIR";
    /// The user's cache directory (XDG), under which `hermes-plugins/` is the cache.
    pub const XDG_CACHE_HOME: &'static str = "XDG_CACHE_HOME";
    /// `--no-core`.
    pub const HERMES_PLUGINS_NO_CORE: &'static str = "HERMES_PLUGINS_NO_CORE";
    /// `--python`.
    pub const HERMES_PLUGINS_PYTHON: &'static str = "HERMES_PLUGINS_PYTHON";
    /// The package index (before `UV_INDEX_URL`).
    pub const HERMES_PLUGINS_INDEX_URL: &'static str = "HERMES_PLUGINS_INDEX_URL";
    /// The package index, as uv reads it.
    pub const UV_INDEX_URL: &'static str = "UV_INDEX_URL";
    /// Extra package indexes, as uv reads them (whitespace- or comma-separated).
    pub const UV_EXTRA_INDEX_URL: &'static str = "UV_EXTRA_INDEX_URL";
    /// Find-links locations, as uv reads them (whitespace- or comma-separated).
    pub const UV_FIND_LINKS: &'static str = "UV_FIND_LINKS";
    /// uv's credential store directory (read by uv's crates; set by
    /// [`keep_uv_credentials_in_cache`] when the user has no store).
    pub const UV_CREDENTIALS_DIR: &'static str = "UV_CREDENTIALS_DIR";
    /// Seconds a response may stall (indexes, downloads), as uv reads it.
    pub const UV_HTTP_TIMEOUT: &'static str = "UV_HTTP_TIMEOUT";
    /// Seconds a connection may take, as uv reads it.
    pub const UV_HTTP_CONNECT_TIMEOUT: &'static str = "UV_HTTP_CONNECT_TIMEOUT";
    /// `--native-tls`, as uv reads it.
    pub const UV_NATIVE_TLS: &'static str = "UV_NATIVE_TLS";
    /// `--no-index`, as uv reads it.
    pub const UV_NO_INDEX: &'static str = "UV_NO_INDEX";
    /// `--offline`, as uv reads it.
    pub const UV_OFFLINE: &'static str = "UV_OFFLINE";
    /// `--catalog`: directories, git URLs (`#subdir`) or JSON feeds, space-separated; unset or
    /// empty, the official feed; `none`, no catalog.
    pub const HERMES_PLUGINS_CATALOG: &'static str = "HERMES_PLUGINS_CATALOG";
    /// Seconds a remote catalog's cached copy is used before it is refreshed (default 6 h).
    pub const HERMES_PLUGINS_CATALOG_TTL: &'static str = "HERMES_PLUGINS_CATALOG_TTL";
    /// Where `owner/repo` sources are fetched from (a GitHub mirror; tests).
    pub const HERMES_PLUGINS_GITHUB: &'static str = "HERMES_PLUGINS_GITHUB";
    /// Git URL rewrites, `PREFIX=REPLACEMENT` separated by whitespace (`url.<base>.insteadOf`).
    pub const HERMES_PLUGINS_GIT_INSTEAD_OF: &'static str = "HERMES_PLUGINS_GIT_INSTEAD_OF";
    /// A GitHub token offered to github.com (and the `HERMES_PLUGINS_GITHUB` host) when a
    /// repository needs credentials; never printed or recorded.
    pub const GITHUB_TOKEN: &'static str = "GITHUB_TOKEN";
    /// The proxy for `http://` URLs (after `http_proxy`), as curl and git read it.
    pub const HTTP_PROXY: &'static str = "HTTP_PROXY";
    /// The proxy for `https://` URLs (after `https_proxy`).
    pub const HTTPS_PROXY: &'static str = "HTTPS_PROXY";
    /// The proxy for either (after `all_proxy`).
    pub const ALL_PROXY: &'static str = "ALL_PROXY";
    /// Hosts reached without a proxy (after `no_proxy`).
    pub const NO_PROXY: &'static str = "NO_PROXY";
    /// The GitHub CLI's name for the same token (after `GITHUB_TOKEN`).
    pub const GH_TOKEN: &'static str = "GH_TOKEN";
    /// Seconds a git transfer may stall.
    pub const HERMES_PLUGINS_GIT_TIMEOUT: &'static str = "HERMES_PLUGINS_GIT_TIMEOUT";
    /// Seconds a git connection may take.
    pub const HERMES_PLUGINS_GIT_CONNECT_TIMEOUT: &'static str =
        "HERMES_PLUGINS_GIT_CONNECT_TIMEOUT";
    /// Git's CA file (before `SSL_CERT_FILE`).
    pub const GIT_SSL_CAINFO: &'static str = "GIT_SSL_CAINFO";
    /// The CA file, as uv and OpenSSL read it.
    pub const SSL_CERT_FILE: &'static str = "SSL_CERT_FILE";
    /// The CA directory, as uv and OpenSSL read it.
    pub const SSL_CERT_DIR: &'static str = "SSL_CERT_DIR";
    /// The ssh-agent's socket: git over SSH takes its keys from the agent.
    pub const SSH_AUTH_SOCK: &'static str = "SSH_AUTH_SOCK";
    /// "Now" for the quarantine (RFC 3339).
    pub const HERMES_PLUGINS_NOW: &'static str = "HERMES_PLUGINS_NOW";
    /// The creation time recorded in generations (reproducible builds).
    pub const SOURCE_DATE_EPOCH: &'static str = "SOURCE_DATE_EPOCH";
    /// `--lock-timeout`.
    pub const HERMES_PLUGINS_LOCK_TIMEOUT: &'static str = "HERMES_PLUGINS_LOCK_TIMEOUT";
    /// Bytes one wheel may unpack to.
    pub const HERMES_PLUGINS_MAX_WHEEL_SIZE: &'static str = "HERMES_PLUGINS_MAX_WHEEL_SIZE";
    /// `1`: debug logging (as `-v`).
    pub const HERMES_PLUGINS_DEBUG: &'static str = "HERMES_PLUGINS_DEBUG";
    /// A full tracing filter (`uv_resolver=debug,hermes_plugins=trace`).
    pub const HERMES_PLUGINS_LOG: &'static str = "HERMES_PLUGINS_LOG";
    /// No colour.
    pub const NO_COLOR: &'static str = "NO_COLOR";
    /// What `exec` extends for the agent.
    pub const PYTHONPATH: &'static str = "PYTHONPATH";
}

/// A variable's value, `None` when unset or empty.
pub fn value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// "Now" for the quarantine: `HERMES_PLUGINS_NOW` (RFC 3339) when set, else the clock.
pub fn now() -> Result<jiff::Timestamp, String> {
    match value(EnvVars::HERMES_PLUGINS_NOW) {
        Some(text) => text.trim().parse::<jiff::Timestamp>().map_err(|e| {
            format!(
                "{}=`{text}` is not an RFC 3339 timestamp: {e}",
                EnvVars::HERMES_PLUGINS_NOW
            )
        }),
        None => Ok(jiff::Timestamp::now()),
    }
}

/// `SOURCE_DATE_EPOCH` (seconds since the Unix epoch) when set; a value that is not a
/// number is an error, as the reproducible-builds specification asks, never ignored.
pub fn source_date_epoch() -> Result<Option<i64>, String> {
    match value(EnvVars::SOURCE_DATE_EPOCH) {
        None => Ok(None),
        Some(text) => text.trim().parse().map(Some).map_err(|_| {
            format!(
                "{} must be a number of seconds since the Unix epoch, not `{}`",
                EnvVars::SOURCE_DATE_EPOCH,
                crate::text::escape(&text)
            )
        }),
    }
}

/// A number of seconds between 1 and 86400 from `name`, if set.
fn seconds(name: &str) -> Result<Option<Duration>, String> {
    let Some(text) = value(name) else {
        return Ok(None);
    };
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|s| (1..=86_400).contains(s))
        .map(|s| Some(Duration::from_secs(s)))
        .ok_or_else(|| {
            format!(
                "{name} must be a number of seconds between 1 and 86400, not `{}`",
                crate::text::escape(&text)
            )
        })
}

/// HTTP timeouts for indexes and wheel downloads: `UV_HTTP_CONNECT_TIMEOUT` and
/// `UV_HTTP_TIMEOUT` (seconds, as uv reads them), else uv's defaults (10 s, 30 s).
pub fn http_timeouts() -> Result<crate::resolve::engine::HttpTimeouts, String> {
    let mut timeouts = crate::resolve::engine::HttpTimeouts::default();
    if let Some(connect) = seconds(EnvVars::UV_HTTP_CONNECT_TIMEOUT)? {
        timeouts.connect = connect;
    }
    if let Some(read) = seconds(EnvVars::UV_HTTP_TIMEOUT)? {
        timeouts.read = read;
    }
    Ok(timeouts)
}

/// `HERMES_PLUGINS_GIT_INSTEAD_OF`: `PREFIX=REPLACEMENT` rules separated by whitespace; a
/// rule without `=` or with an empty prefix is an error naming it.
fn instead_of_rules(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split_whitespace()
        .map(|rule| match rule.split_once('=') {
            Some((prefix, replacement)) if !prefix.is_empty() => {
                Ok((prefix.to_string(), replacement.to_string()))
            }
            _ => Err(format!(
                "{}: `{}` is not a PREFIX=REPLACEMENT rule",
                EnvVars::HERMES_PLUGINS_GIT_INSTEAD_OF,
                crate::text::escape(rule)
            )),
        })
        .collect()
}

/// The cache directory: `HERMES_PLUGINS_CACHE_DIR`, else `$XDG_CACHE_HOME/hermes-plugins`,
/// else `~/.cache/hermes-plugins` (an empty value counts as unset).
pub fn cache_dir() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    var(EnvVars::HERMES_PLUGINS_CACHE_DIR)
        .map(PathBuf::from)
        .or_else(|| var(EnvVars::XDG_CACHE_HOME).map(|d| PathBuf::from(d).join("hermes-plugins")))
        .or_else(|| var(EnvVars::HOME).map(|h| PathBuf::from(h).join(".cache/hermes-plugins")))
}

/// uv's credential store (`uv auth login`, `<state dir>/uv/credentials/credentials.toml`):
/// read where the user has one. Where there is none, uv's auth middleware would still take the
/// store's lock to find that out, creating `~/.local/share/uv/credentials/` and a lock file for
/// a user who never used uv; `UV_CREDENTIALS_DIR` then points it into our cache, the only
/// place besides the Hermes home this tool writes. Must run before any thread starts (it sets
/// an environment variable): the first thing `cli::main` does.
#[cfg(feature = "manager")]
pub fn keep_uv_credentials_in_cache() {
    if std::env::var_os(EnvVars::UV_CREDENTIALS_DIR).is_some_and(|v| !v.is_empty()) {
        return;
    }
    let Ok(file) = uv_auth::TextCredentialStore::default_file() else {
        return;
    };
    if file.exists() {
        return;
    }
    let Some(cache) = cache_dir() else {
        return;
    };
    // SAFETY: called at the start of `cli::main`, before this process starts any thread, so
    // nothing reads the environment concurrently.
    unsafe { std::env::set_var(EnvVars::UV_CREDENTIALS_DIR, cache.join("uv-credentials")) };
}

/// The cache every home shares for what uv learns about interpreters, `<cache dir>/uv`
/// (see [`crate::resolve::engine::UvCache`]).
#[cfg(feature = "manager")]
pub fn interpreter_cache() -> Option<std::path::PathBuf> {
    cache_dir().map(|d| d.join("uv"))
}

/// The names of the variables set in this process (whatever their value): a plugin's
/// `requires_env` is met by any of them.
pub fn set_names() -> BTreeSet<String> {
    std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .collect()
}

/// How git reaches servers: timeouts, certificate authorities (`GIT_SSL_CAINFO`, else
/// `SSL_CERT_FILE`; `SSL_CERT_DIR`), URL rewrites.
pub fn git_config() -> Result<crate::source::git::GitConfig, String> {
    let mut timeouts = crate::source::git::Timeouts::default();
    for (name, field) in [
        (
            EnvVars::HERMES_PLUGINS_GIT_CONNECT_TIMEOUT,
            &mut timeouts.connect,
        ),
        (EnvVars::HERMES_PLUGINS_GIT_TIMEOUT, &mut timeouts.stall),
    ] {
        if let Some(duration) = seconds(name)? {
            *field = duration;
        }
    }
    let instead_of = match value(EnvVars::HERMES_PLUGINS_GIT_INSTEAD_OF) {
        Some(rules) => instead_of_rules(&rules)?,
        None => Vec::new(),
    };
    Ok(crate::source::git::GitConfig {
        timeouts,
        ca_file: value(EnvVars::GIT_SSL_CAINFO)
            .or_else(|| value(EnvVars::SSL_CERT_FILE))
            .map(Into::into),
        ca_dir: value(EnvVars::SSL_CERT_DIR).map(Into::into),
        instead_of,
        github_token: value(EnvVars::GITHUB_TOKEN)
            .or_else(|| value(EnvVars::GH_TOKEN))
            .map(crate::source::git::Secret),
        github_hosts: std::iter::once("github.com".to_string())
            .chain(
                value(EnvVars::HERMES_PLUGINS_GITHUB)
                    .and_then(|base| url::Url::parse(&base).ok()?.host_str().map(str::to_string)),
            )
            .collect(),
        proxies: crate::source::git::Proxies {
            http: value("http_proxy").or_else(|| value(EnvVars::HTTP_PROXY)),
            https: value("https_proxy").or_else(|| value(EnvVars::HTTPS_PROXY)),
            all: value("all_proxy").or_else(|| value(EnvVars::ALL_PROXY)),
            no_proxy: value("no_proxy")
                .or_else(|| value(EnvVars::NO_PROXY))
                .map(|v| {
                    v.split(',')
                        .map(|h| h.trim().to_string())
                        .filter(|h| !h.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        },
        ssh_agent: value(EnvVars::SSH_AUTH_SOCK).is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instead_of_rules_are_pairs_and_a_malformed_rule_is_named() {
        assert_eq!(
            instead_of_rules("https://github.com/=file:///mirror/ a=b").unwrap(),
            vec![
                (
                    "https://github.com/".to_string(),
                    "file:///mirror/".to_string()
                ),
                ("a".to_string(), "b".to_string())
            ]
        );
        let err = instead_of_rules("a=b https://github.com/").unwrap_err();
        assert!(err.contains("`https://github.com/`"), "{err}");
        assert!(instead_of_rules("=x").is_err());
    }
}
