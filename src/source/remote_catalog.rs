//! Catalogs that live elsewhere (CAT-6): a git repository (`https://…/catalog.git`, with an
//! optional `#subdir`) or a JSON feed (`https://…/plugin-catalog.json`, as Hermes publishes
//! `{"generated_at", "entries": [...], "removed": [...]}`), each materialised into a directory
//! of entry files under `pm/cache/catalogs/` — the same shape as a local catalog, so lookup,
//! search and the kill list read them alike.
//!
//! A cached copy is used while younger than the TTL (Hermes caches its feed 6 hours); older,
//! it is refreshed first. A refresh that fails falls back to the cache with a warning naming
//! its age (a kill list is never silently stale); with no cache it is an error. A feed is
//! fetched with `If-None-Match`/`If-Modified-Since` when the last answer carried an ETag or a
//! date, so an unchanged feed costs one `304`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use super::git;

/// How long a cached remote catalog is used without refreshing (Hermes's feed TTL).
pub const DEFAULT_TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// The catalog Hermes itself reads (`hermes_cli/plugin_catalog.py`'s `LIVE_CATALOG_URL`): the
/// default when no catalog is configured.
pub const OFFICIAL_FEED: &str =
    "https://hermes-agent.nousresearch.com/docs/api/plugin-catalog.json";

/// The most a feed may weigh.
const MAX_FEED_BYTES: u64 = 16 * 1024 * 1024;

/// Where a catalog is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local directory of entry files.
    Dir(PathBuf),
    /// A git repository, and the directory of entries inside it.
    Git {
        /// The repository URL (without the fragment).
        url: String,
        /// `#subdir`: where the entry files are.
        subdir: Option<String>,
    },
    /// A JSON feed.
    Feed(String),
    /// A JSON feed in a local file (`./plugin-catalog.json`, `file:///…/plugin-catalog.json`).
    FeedFile(PathBuf),
}

impl Location {
    /// Reads a `--catalog`/`HERMES_PLUGINS_CATALOG` value: a URL or a path ending in `.json`
    /// is a feed (a `file://` URL or a path: a local feed file), any other URL (`https://`,
    /// `http://`, `file://`, `ssh://`, `git@host:path`) a git repository, anything else a
    /// directory.
    pub fn parse(value: &str) -> Location {
        let is_url = ["https://", "http://", "file://", "ssh://", "git://"]
            .iter()
            .any(|p| value.starts_with(p))
            || (value.starts_with("git@") && value.contains(':'));
        if !is_url {
            if value.ends_with(".json") {
                return Location::FeedFile(PathBuf::from(value));
            }
            return Location::Dir(PathBuf::from(value));
        }
        if value.starts_with("file://")
            && value.ends_with(".json")
            && let Ok(path) = url::Url::parse(value).map(|u| u.to_file_path())
            && let Ok(path) = path
        {
            return Location::FeedFile(path);
        }
        let (url, fragment) = match value.split_once('#') {
            Some((u, f)) => (u, Some(f.to_string()).filter(|f| !f.is_empty())),
            None => (value, None),
        };
        let path = url.split(['?', '#']).next().unwrap_or(url);
        if path.ends_with(".json") && (url.starts_with("https://") || url.starts_with("http://")) {
            Location::Feed(url.to_string())
        } else {
            Location::Git {
                url: url.to_string(),
                subdir: fragment,
            }
        }
    }
}

/// A catalog ready to read.
#[derive(Debug, Clone)]
pub struct Materialized {
    /// The directory of entry files.
    pub dir: PathBuf,
    /// Set when a refresh failed and an older copy is used: says how old, and why.
    pub warning: Option<String>,
}

/// Why a remote catalog cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RemoteCatalogError {
    /// Fetching failed and nothing is cached.
    #[error("cannot fetch the catalog {url}: {message}")]
    Fetch {
        /// The catalog.
        url: String,
        /// What happened.
        message: String,
    },
    /// The cache cannot be written.
    #[error("cannot write the catalog cache {path}: {source}")]
    Cache {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Makes `location` a local directory: as it is for [`Location::Dir`]; the cached copy under
/// `cache` for remote ones, refreshed first when older than `ttl` (always when `force`).
pub fn materialize(
    location: &Location,
    cache: &Path,
    ttl: Duration,
    force: bool,
) -> Result<Materialized, RemoteCatalogError> {
    let (url, subdir) = match location {
        Location::Dir(dir) => {
            return Ok(Materialized {
                dir: dir.clone(),
                warning: None,
            });
        }
        Location::Git { url, subdir } => (url, subdir.as_deref()),
        Location::Feed(url) => (url, None),
        Location::FeedFile(path) => {
            return feed_file(path, cache, &cache.join(slot_name(location)));
        }
    };
    let slot = cache.join(slot_name(location));
    let age = age_of(&slot);
    let entries = |slot: &Path| match subdir {
        Some(sub) => slot.join(sub),
        None => slot.to_path_buf(),
    };
    if !force && age.is_some_and(|a| a < ttl) {
        return Ok(Materialized {
            dir: entries(&slot),
            warning: None,
        });
    }
    let refreshed = match location {
        Location::Feed(_) => refresh_feed(url, cache, &slot),
        _ => refresh_git(url, subdir, cache, &slot),
    };
    match refreshed {
        Ok(()) => Ok(Materialized {
            dir: entries(&slot),
            warning: None,
        }),
        Err(Refresh::Cache(e)) => Err(e),
        Err(Refresh::Fetch(message)) => match age {
            Some(age) => Ok(Materialized {
                dir: entries(&slot),
                warning: Some(format!(
                    "using the catalog {} as cached {} ago: refreshing it failed ({message})",
                    crate::text::redact_credentials(url),
                    describe_age(age)
                )),
            }),
            None => Err(RemoteCatalogError::Fetch {
                url: crate::text::redact_credentials(url).into_owned(),
                message,
            }),
        },
    }
}

/// The copy of a remote catalog kept under `cache`, without fetching anything: `None` when
/// there is none (a local directory or feed file is never cached here).
pub fn cached(location: &Location, cache: &Path) -> Option<PathBuf> {
    let subdir = match location {
        Location::Git { subdir, .. } => subdir.as_deref(),
        Location::Feed(_) => None,
        Location::Dir(_) | Location::FeedFile(_) => return None,
    };
    let slot = cache.join(slot_name(location));
    age_of(&slot)?;
    Some(match subdir {
        Some(sub) => slot.join(sub),
        None => slot,
    })
}

/// A refresh's failure: the network (fall back to the cache) or the cache itself (fail).
enum Refresh {
    Fetch(String),
    Cache(RemoteCatalogError),
}

fn cache_error(path: &Path) -> impl FnOnce(std::io::Error) -> Refresh + '_ {
    move |source| {
        Refresh::Cache(RemoteCatalogError::Cache {
            path: path.display().to_string(),
            source,
        })
    }
}

/// `git-<hash>` / `feed-<hash>` of the URL (and subdirectory).
fn slot_name(location: &Location) -> String {
    let (kind, key) = match location {
        Location::Git { url, subdir } => {
            ("git", format!("{url}#{}", subdir.as_deref().unwrap_or("")))
        }
        Location::Feed(url) => ("feed", url.clone()),
        Location::FeedFile(path) => ("feed-file", path.display().to_string()),
        Location::Dir(dir) => ("dir", dir.display().to_string()),
    };
    let digest = Sha256::digest(key.as_bytes());
    format!("{kind}-{}", crate::hash::hex(&digest[..8]))
}

/// The time since `slot` was last refreshed (its stamp file), if both exist (a stamp without
/// its directory is no copy).
fn age_of(slot: &Path) -> Option<Duration> {
    if !slot.is_dir() {
        return None;
    }
    let modified = std::fs::metadata(stamp(slot)).ok()?.modified().ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}

fn stamp(slot: &Path) -> PathBuf {
    let mut name = slot.file_name().unwrap_or_default().to_os_string();
    name.push(".fetched");
    slot.with_file_name(name)
}

/// Marks `slot` as refreshed now (its stamp holds what a conditional request needs).
fn touch(slot: &Path, validators: &str) -> Result<(), Refresh> {
    let path = stamp(slot);
    crate::files::write_atomically(&path, validators.as_bytes()).map_err(cache_error(&path))
}

/// `3 h 20 min`, `2 days 4 h`, `45 s`.
fn describe_age(age: Duration) -> String {
    let s = age.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        _ => format!("{} days {} h", s / 86400, s % 86400 / 3600),
    }
}

/// Replaces `slot` with the directory `fresh` (both under the same cache directory). If the
/// new copy cannot take its place, the old one stays: a failed refresh never leaves the slot
/// empty.
fn swap_in(fresh: &Path, slot: &Path) -> Result<(), Refresh> {
    let old = crate::files::replace_dir(fresh, slot).map_err(cache_error(slot))?;
    if let Some(old) = old {
        let _ = crate::store::remove_tree(&old);
    }
    Ok(())
}

fn scratch(cache: &Path) -> Result<tempfile::TempDir, Refresh> {
    std::fs::create_dir_all(cache).map_err(cache_error(cache))?;
    tempfile::Builder::new()
        .prefix(".fetch-")
        .tempdir_in(cache)
        .map_err(cache_error(cache))
}

fn refresh_git(url: &str, subdir: Option<&str>, cache: &Path, slot: &Path) -> Result<(), Refresh> {
    let tmp = scratch(cache)?;
    let checkout = tmp.path().join("checkout");
    let mut progress = |_: usize, _: usize| {};
    git::clone_at(url, None, &checkout, &mut progress)
        .map_err(|e| Refresh::Fetch(e.to_string()))?;
    if let Some(sub) = subdir {
        super::contained_subdir(&checkout, Some(sub)).map_err(|e| Refresh::Fetch(e.to_string()))?;
    }
    // The checkout's history is not needed: only the entry files are read.
    let _ = crate::store::remove_tree(&checkout.join(".git"));
    swap_in(&checkout, slot)?;
    touch(slot, "")
}

/// What a feed's last answer said about itself, for the next conditional request.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Validators {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_modified: Option<String>,
}

fn refresh_feed(url: &str, cache: &Path, slot: &Path) -> Result<(), Refresh> {
    let previous: Validators = std::fs::read_to_string(stamp(slot))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|_| slot.is_dir())
        .unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Refresh::Fetch(format!("cannot start the HTTP client: {e}")))?;
    let answer = runtime.block_on(get_feed(url, &previous));
    let (body, validators) = match answer.map_err(Refresh::Fetch)? {
        Some(fresh) => fresh,
        // 304: what is cached is current.
        None => {
            let text = serde_json::to_string(&previous).unwrap_or_default();
            return touch(slot, &text);
        }
    };
    let feed: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| Refresh::Fetch(format!("the feed is not JSON: {e}")))?;
    let tmp = scratch(cache)?;
    let dir = tmp.path().join("entries");
    std::fs::create_dir(&dir).map_err(cache_error(&dir))?;
    write_entries(&feed, &dir)?;
    swap_in(&dir, slot)?;
    touch(
        slot,
        &serde_json::to_string(&validators).unwrap_or_default(),
    )
}

/// A local feed file as a directory of entries: written into its cache slot again only when
/// the file changed since (its size and modification time are the slot's stamp), so a
/// 16 MiB feed is not unpacked on every command. No network, no TTL.
fn feed_file(path: &Path, cache: &Path, slot: &Path) -> Result<Materialized, RemoteCatalogError> {
    let failed = |message: String| RemoteCatalogError::Fetch {
        url: path.display().to_string(),
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| failed(e.to_string()))?;
    if !meta.is_file() {
        return Err(failed("not a file".into()));
    }
    if meta.len() > MAX_FEED_BYTES {
        return Err(failed(format!(
            "the feed is larger than {MAX_FEED_BYTES} bytes"
        )));
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let identity = format!("{{\"size\":{},\"mtime_ns\":{mtime}}}", meta.len());
    let current =
        slot.is_dir() && std::fs::read_to_string(stamp(slot)).is_ok_and(|text| text == identity);
    if !current {
        let refresh = || -> Result<(), Refresh> {
            let mut body = Vec::new();
            std::fs::File::open(path)
                .and_then(|f| f.take(MAX_FEED_BYTES + 1).read_to_end(&mut body))
                .map_err(|e| Refresh::Fetch(e.to_string()))?;
            if body.len() as u64 > MAX_FEED_BYTES {
                return Err(Refresh::Fetch(format!(
                    "the feed is larger than {MAX_FEED_BYTES} bytes"
                )));
            }
            let feed: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|e| Refresh::Fetch(format!("the feed is not JSON: {e}")))?;
            let tmp = scratch(cache)?;
            let dir = tmp.path().join("entries");
            std::fs::create_dir(&dir).map_err(cache_error(&dir))?;
            write_entries(&feed, &dir)?;
            swap_in(&dir, slot)?;
            touch(slot, &identity)
        };
        match refresh() {
            Ok(()) => {}
            Err(Refresh::Fetch(message)) => return Err(failed(message)),
            Err(Refresh::Cache(e)) => return Err(e),
        }
    }
    Ok(Materialized {
        dir: slot.to_path_buf(),
        warning: None,
    })
}

/// GETs the feed (conditionally when `previous` has validators): `None` on `304`.
async fn get_feed(
    url: &str,
    previous: &Validators,
) -> Result<Option<(Vec<u8>, Validators)>, String> {
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(Duration::from_secs(30))
        .user_agent(concat!("hermes-plugins/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| describe(&e))?;
    let mut request = client.get(url);
    if let Some(etag) = &previous.etag {
        request = request.header(reqwest::header::IF_NONE_MATCH, etag);
    }
    if let Some(date) = &previous.last_modified {
        request = request.header(reqwest::header::IF_MODIFIED_SINCE, date);
    }
    let mut response = request.send().await.map_err(|e| describe(&e))?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_MODIFIED {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(format!("the server answered {status}"));
    }
    let header = |name: reqwest::header::HeaderName| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let validators = Validators {
        etag: header(reqwest::header::ETAG),
        last_modified: header(reqwest::header::LAST_MODIFIED),
    };
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e))? {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > MAX_FEED_BYTES {
            return Err(format!("the feed is larger than {MAX_FEED_BYTES} bytes"));
        }
    }
    Ok(Some((body, validators)))
}

/// reqwest's error with its causes (its own message alone says only "error sending request").
fn describe(error: &reqwest::Error) -> String {
    crate::exit::layers(error).join(": ")
}

/// Writes a feed's entries as `<name>.yaml` (each its JSON object: JSON is YAML) and its
/// removal list as `removed.yaml`, so the catalog rules read them as they read a directory.
/// An entry without a usable name is left out (the name becomes a file name).
fn write_entries(feed: &serde_json::Value, dir: &Path) -> Result<(), Refresh> {
    let Some(entries) = feed.get("entries").and_then(|e| e.as_array()) else {
        return Err(Refresh::Fetch(
            "the feed has no `entries` list (expected {\"entries\": [...], \"removed\": [...]})"
                .into(),
        ));
    };
    for entry in entries {
        let Some(name) = entry.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        if name.is_empty()
            || name.len() > 64
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
            || name == "removed"
        {
            tracing::warn!(
                "the catalog feed's entry `{}` has an unusable name; skipped",
                crate::text::escape(name)
            );
            continue;
        }
        let path = dir.join(format!("{name}.yaml"));
        let text = serde_json::to_string_pretty(entry).unwrap_or_default();
        std::fs::write(&path, text + "\n").map_err(cache_error(&path))?;
    }
    let removed = feed
        .get("removed")
        .cloned()
        .unwrap_or(serde_json::Value::Array(Vec::new()));
    let path = dir.join("removed.yaml");
    let text = serde_json::to_string_pretty(&serde_json::json!({ "removed": removed }))
        .unwrap_or_default();
    std::fs::write(&path, text + "\n").map_err(cache_error(&path))?;
    Ok(())
}

/// Reads a TTL in seconds (`HERMES_PLUGINS_CATALOG_TTL`).
pub fn parse_ttl(value: &str) -> Result<Duration, String> {
    value
        .trim()
        .parse::<u64>()
        .map(Duration::from_secs)
        .map_err(|_| {
            format!(
                "HERMES_PLUGINS_CATALOG_TTL must be a number of seconds, not `{}`",
                crate::text::escape(value)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        assert_eq!(
            Location::parse("plugin-catalog"),
            Location::Dir("plugin-catalog".into())
        );
        assert_eq!(
            Location::parse("https://example.org/docs/api/plugin-catalog.json"),
            Location::Feed("https://example.org/docs/api/plugin-catalog.json".into())
        );
        assert_eq!(
            Location::parse("https://github.com/acme/hermes.git#plugin-catalog"),
            Location::Git {
                url: "https://github.com/acme/hermes.git".into(),
                subdir: Some("plugin-catalog".into())
            }
        );
        // A feed file: by path, and by `file://` URL (a `file://` repository stays git).
        assert_eq!(
            Location::parse("./feeds/plugin-catalog.json"),
            Location::FeedFile("./feeds/plugin-catalog.json".into())
        );
        #[cfg(unix)]
        assert_eq!(
            Location::parse("file:///srv/feeds/plugin%20catalog.json"),
            Location::FeedFile("/srv/feeds/plugin catalog.json".into())
        );
        #[cfg(windows)]
        assert_eq!(
            Location::parse("file:///C:/srv/feeds/plugin%20catalog.json"),
            Location::FeedFile("C:\\srv\\feeds\\plugin catalog.json".into())
        );
        assert_eq!(
            Location::parse("file:///srv/catalog.git"),
            Location::Git {
                url: "file:///srv/catalog.git".into(),
                subdir: None
            }
        );
        assert_eq!(
            Location::parse("git@github.com:acme/catalog"),
            Location::Git {
                url: "git@github.com:acme/catalog".into(),
                subdir: None
            }
        );
        assert_ne!(
            slot_name(&Location::parse("https://a/x.json")),
            slot_name(&Location::parse("https://a/y.json"))
        );
    }

    /// A stamp whose directory is gone (a refresh interrupted long ago) is no copy: the
    /// catalog is fetched, and an unreachable one is an error, never an empty directory.
    #[test]
    fn a_stamp_without_its_copy_is_no_copy() {
        let cache = tempfile::tempdir().unwrap();
        let location = Location::parse("http://127.0.0.1:9/plugin-catalog.json");
        let slot = cache.path().join(slot_name(&location));
        std::fs::write(stamp(&slot), "{}").unwrap();
        let result = materialize(&location, cache.path(), DEFAULT_TTL, false);
        assert!(
            matches!(result, Err(RemoteCatalogError::Fetch { .. })),
            "{result:?}"
        );
    }

    #[test]
    fn ages_read_as_people_say_them() {
        assert_eq!(describe_age(Duration::from_secs(42)), "42 s");
        assert_eq!(
            describe_age(Duration::from_secs(7 * 3600 + 5 * 60)),
            "7 h 5 min"
        );
        assert_eq!(
            describe_age(Duration::from_secs(2 * 86400 + 3 * 3600)),
            "2 days 3 h"
        );
    }

    #[test]
    fn feed_entries_become_entry_files() {
        let dir = tempfile::tempdir().unwrap();
        let feed = serde_json::json!({
            "generated_at": "2026-11-30T00:00:00Z",
            "entries": [
                {"name": "weather", "repo": "https://github.com/acme/weather", "sha": "a".repeat(40)},
                {"name": "../escape", "repo": "https://x", "sha": "b".repeat(40)}
            ],
            "removed": [{"name": "bad", "reason": "malware"}]
        });
        assert!(write_entries(&feed, dir.path()).is_ok());
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["removed.yaml", "weather.yaml"]);
        let (entry, findings) = crate::catalog::entry::load(&dir.path().join("weather.yaml"));
        assert_eq!(entry.unwrap().name, "weather", "{findings:?}");
        let (removed, _) = crate::catalog::removed::load(&dir.path().join("removed.yaml"));
        assert_eq!(removed[0].name, "bad");
    }
}
