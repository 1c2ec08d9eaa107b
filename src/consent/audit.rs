//! The consent audit log (CAP-9): `<home>/pm/audit.log`, one JSON object per line — when,
//! which profile and plugin, what was decided (granted, revoked, refused, accepted), which
//! items, and how (a flag or a prompt). Appended, never rewritten; `show NAME --audit` reads it.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// RFC 3339 time.
    pub time: String,
    /// The profile (`default` or a name).
    pub profile: String,
    /// The plugin key.
    pub plugin: String,
    /// `grant`, `revoke`, `deps`, `update`, `env`, `refuse`, `accept-finding`.
    pub action: String,
    /// What the decision covers (capability ids, requirements, surface lines, variable names —
    /// never secret values).
    pub items: Vec<String>,
    /// How it was decided: `prompt`, `--grant`, `--yes`, `--yes-deps`, `capabilities --revoke`,
    /// `update` (automatic revocation of capabilities no longer declared), ….
    pub by: String,
    /// The account that ran the command (from the password database by effective uid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

impl AuditEntry {
    /// A decision taken now by this process's account.
    pub fn now(
        profile: impl Into<String>,
        plugin: impl Into<String>,
        action: impl Into<String>,
        items: Vec<String>,
        by: impl Into<String>,
    ) -> AuditEntry {
        AuditEntry {
            time: now(),
            profile: profile.into(),
            plugin: plugin.into(),
            action: action.into(),
            items,
            by: by.into(),
            user: user(),
        }
    }
}

/// The account running this process: on Windows `USERNAME` (the account the session was
/// started for; no password database to ask).
#[cfg(windows)]
pub fn user() -> Option<String> {
    std::env::var("USERNAME").ok().filter(|n| !n.is_empty())
}

/// The account running this process, from the password database by effective uid (not
/// `$USER`, which any caller can set); the uid itself when it has no entry.
#[cfg(unix)]
pub fn user() -> Option<String> {
    // SAFETY: geteuid cannot fail; getpwuid_r writes only into the buffers given, and the
    // name is read (bounded by the buffer) before they go out of scope.
    unsafe {
        let uid = libc::geteuid();
        let mut entry: libc::passwd = std::mem::zeroed();
        let mut buffer = vec![0 as libc::c_char; 4096];
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            uid,
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        );
        if rc == 0 && !found.is_null() && !entry.pw_name.is_null() {
            let name = std::ffi::CStr::from_ptr(entry.pw_name).to_string_lossy();
            if !name.is_empty() {
                return Some(name.into_owned());
            }
        }
        Some(uid.to_string())
    }
}

/// Appends entries (one `write` per line, `O_APPEND`), then fsyncs.
pub fn append(path: &Path, entries: &[AuditEntry]) -> std::io::Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = crate::files::open_append_regular(path, 0o600)?;
    for e in entries {
        let mut line = serde_json::to_string(e).map_err(std::io::Error::other)?;
        line.push('\n');
        file.write_all(line.as_bytes())?;
    }
    file.sync_all()
}

/// Reads the entries about `plugin` (all entries when `None`); unreadable lines are skipped.
pub fn read(path: &Path, plugin: Option<&str>) -> std::io::Result<Vec<AuditEntry>> {
    let Some(bytes) = crate::files::read_regular(path, crate::files::STATE_LIMIT)? else {
        return Ok(Vec::new());
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<AuditEntry>(l).ok())
        .filter(|e| plugin.is_none_or(|p| e.plugin == p))
        .collect())
}

/// Now, RFC 3339 (UTC, seconds).
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_filters() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("pm/audit.log");
        let entry = |plugin: &str, action: &str| AuditEntry {
            time: "2026-11-30T00:00:00Z".into(),
            profile: "default".into(),
            plugin: plugin.into(),
            action: action.into(),
            items: vec!["tools.override".into()],
            by: "--grant".into(),
            user: Some("tester".into()),
        };
        append(&log, &[entry("a", "grant")]).unwrap();
        append(&log, &[entry("b", "grant"), entry("a", "revoke")]).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .unwrap()
            .write_all(b"not json\n")
            .unwrap();
        let a = read(&log, Some("a")).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[1].action, "revoke");
        assert_eq!(read(&log, None).unwrap().len(), 3);
        assert_eq!(read(&dir.path().join("missing"), None).unwrap(), Vec::new());
    }
}
