//! A content-addressed cache of per-package validation reports, as ruff keeps one: a package
//! whose every file, the settings and the program are unchanged gets the report computed last
//! time without being analysed again, so re-validating a catalog where one plugin changed
//! costs one plugin.
//!
//! The key is a SHA-256 over the program's identity (version, and the executable's size and
//! modification time, so a rebuilt binary never reads its predecessor's answers), the
//! settings that change a report (`--strict`, `--core`'s lock), the package's path as shown
//! and its key, and every entry of the package tree — kind, path, mode, and a file's content
//! hash or a symlink's target. A package with parts the walk could not examine is never
//! cached. Entries are JSON files written atomically (temporary file, rename); one that cannot
//! be read or parsed is a miss, and a cache that cannot be written only costs the next run its
//! time: the cache never changes a result, only how fast it comes.
//!
//! The CLI gives the cache directory (`HERMES_PLUGINS_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/hermes-plugins`, else `~/.cache/hermes-plugins`); entries are under its
//! `validate-v1/<program>/`. Like any cache in a user's home, it
//! is trusted as much as the home is: `--no-cache` ignores it.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::PackageReport;
use crate::pkgfs::PackageRoot;
use crate::pkgfs::tree::Kind;

/// The layout version of entries (part of the directory name).
const FORMAT: &str = "validate-v1";

/// This program's identity: its version, and the executable's size and modification time.
pub fn program_identity() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{modified}", m.len())
        })
        .unwrap_or_default();
    format!("{} {exe}", env!("CARGO_PKG_VERSION"))
}

/// Per-package reports on disk.
#[derive(Debug, Clone)]
pub struct ReportCache {
    dir: PathBuf,
    identity: String,
}

/// The file whose modification time says when a program last wrote to its directory.
const LAST_USED: &str = ".last-used";

/// How long another program's entries are kept after they were last written.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// How the cache served a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Reports read from the cache.
    pub hits: usize,
    /// Packages analysed (and stored, when possible).
    pub misses: usize,
}

impl ReportCache {
    /// The cache under `root` (its `validate-v1/` directory), for a program of `identity`
    /// with `settings` (everything besides the package that changes its report).
    pub fn new(root: &Path, identity: &str, settings: &str) -> ReportCache {
        // One directory per program: a rebuilt or upgraded binary starts afresh, and what
        // the old one left is removed once stale ([`ReportCache::prune`]).
        let program = crate::hash::sha256_hex(identity.as_bytes());
        ReportCache {
            dir: root.join(FORMAT).join(&program[..16]),
            identity: format!("{identity}\n{settings}"),
        }
    }

    /// Removes the entries of other programs not written to for a week; failures are
    /// ignored (another run may be pruning too).
    pub fn prune(&self) {
        let Some(parent) = self.dir.parent() else {
            return;
        };
        let _ = std::fs::create_dir_all(&self.dir).and_then(|()| {
            std::fs::File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(self.dir.join(LAST_USED))?
                .set_modified(std::time::SystemTime::now())
        });
        let Ok(dirs) = std::fs::read_dir(parent) else {
            return;
        };
        for dir in dirs.filter_map(Result::ok) {
            let path = dir.path();
            let stale = std::fs::metadata(path.join(LAST_USED))
                .or_else(|_| dir.metadata())
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_AFTER);
            if path != self.dir && stale {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    }

    /// The key of a package at `shown` (the path reports print) with `key`, or `None` if it
    /// cannot be cached (parts not examined, a file that cannot be read). `loaded` is what
    /// loading found, in any stable text form: it can depend on other packages (two with the
    /// same key), which the package's own files do not show.
    pub fn key(&self, shown: &str, key: &str, loaded: &str, root: &PackageRoot) -> Option<String> {
        let tree = root.tree();
        if !tree.unexamined.is_empty() {
            return None;
        }
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(self.identity.as_bytes());
        field(shown.as_bytes());
        field(key.as_bytes());
        field(loaded.as_bytes());
        for entry in &tree.entries {
            let meta = std::fs::symlink_metadata(&entry.path).ok()?;
            field(entry.rel.as_bytes());
            field(&crate::files::os::mode(&meta).to_le_bytes());
            match entry.kind {
                Kind::File => {
                    let content = std::fs::read(&entry.path).ok()?;
                    field(b"file");
                    field(&Sha256::digest(&content));
                }
                Kind::Symlink => {
                    let target = std::fs::read_link(&entry.path).ok()?;
                    field(b"symlink");
                    field(target.as_os_str().as_encoded_bytes());
                }
                Kind::Dir => field(b"dir"),
                Kind::Special => field(b"special"),
            }
        }
        Some(crate::hash::hex(&hasher.finalize()))
    }

    fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The report stored under `key`, if there is a readable one.
    pub fn get(&self, key: &str) -> Option<PackageReport> {
        let text =
            crate::files::read_regular(&self.entry(key), crate::files::STATE_LIMIT).ok()??;
        serde_json::from_slice(&text).ok()
    }

    /// Stores `report` under `key` ([`crate::files::write_cache_entry`]); a failure is logged
    /// and otherwise ignored.
    pub fn put(&self, key: &str, report: &PackageReport) {
        let path = self.entry(key);
        let written = serde_json::to_vec(report)
            .map_err(std::io::Error::other)
            .and_then(|bytes| crate::files::write_cache_entry(&path, &bytes));
        if let Err(e) = written {
            tracing::debug!("validation cache: cannot write {}: {e}", path.display());
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn report(name: &str) -> PackageReport {
        PackageReport::plain(
            format!("plugins/{name}"),
            name.into(),
            name.into(),
            "native-v2",
            true,
            true,
            Vec::new(),
        )
    }

    #[test]
    fn a_change_anywhere_in_the_package_or_the_settings_is_another_key() {
        let tmp = tempfile::tempdir().unwrap();
        let pkg = tmp.path().join("p");
        std::fs::create_dir_all(pkg.join("sub")).unwrap();
        std::fs::write(pkg.join("plugin.yaml"), "name: p\n").unwrap();
        std::fs::write(pkg.join("sub/a.py"), "x = 1\n").unwrap();
        let cache = ReportCache::new(&tmp.path().join("cache"), "v1", "strict=false");
        let key = |c: &ReportCache| {
            c.key("p", "p", "", &PackageRoot::open(&pkg).unwrap())
                .unwrap()
        };
        let first = key(&cache);
        assert_eq!(first, key(&cache), "the same package is the same key");
        std::fs::write(pkg.join("sub/a.py"), "x = 2\n").unwrap();
        let edited = key(&cache);
        assert_ne!(first, edited);
        std::os::unix::fs::symlink("a.py", pkg.join("sub/b.py")).unwrap();
        let linked = key(&cache);
        assert_ne!(edited, linked);
        let strict = ReportCache::new(&tmp.path().join("cache"), "v1", "strict=true");
        assert_ne!(linked, key(&strict));
        let rebuilt = ReportCache::new(&tmp.path().join("cache"), "v2", "strict=false");
        assert_ne!(linked, key(&rebuilt));
        assert_ne!(
            linked,
            cache
                .key(
                    "p",
                    "p",
                    "layout: a second package with this key",
                    &PackageRoot::open(&pkg).unwrap()
                )
                .unwrap(),
            "what loading found is part of the key"
        );
        assert_ne!(
            linked,
            cache
                .key("other/p", "p", "", &PackageRoot::open(&pkg).unwrap())
                .unwrap(),
            "the path shown is part of the report"
        );
    }

    #[test]
    fn stored_reports_read_back_and_damaged_ones_are_misses() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = ReportCache::new(tmp.path(), "v1", "");
        let key = "ab".repeat(32);
        assert!(cache.get(&key).is_none());
        cache.put(&key, &report("weather"));
        let back = cache.get(&key).unwrap();
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&report("weather")).unwrap()
        );
        std::fs::write(cache.entry(&key), "{ not json").unwrap();
        assert!(cache.get(&key).is_none());
    }
}
