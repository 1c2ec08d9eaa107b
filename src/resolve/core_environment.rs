//! What an installed Hermes's environment holds — `hermes-agent`'s version and requirements,
//! and every installed distribution — asked of its interpreter, and remembered in the user's
//! cache while nothing the answer depends on has changed.
//!
//! The interpreter is the authority: `importlib.metadata` is how Hermes and its plugins see
//! the environment (dist-info and egg-info, `.pth` paths, name normalisation), so it is asked
//! rather than imitated. But starting it and reading every distribution's metadata costs
//! ~0.35 s for a Hermes with 63 distributions, against ~0.05 s for an empty interpreter, and
//! every command that loads the core paid it: a no-op `sync` of an 80-plugin home spent most
//! of its time here (issue 32, docs/benchmarks.md).
//!
//! The answer is a function of the interpreter (run with `-I`: no environment variables, no
//! user site) and of the directories on its `sys.path`. Installers add, remove and upgrade a
//! distribution by creating, deleting or renaming its `*.dist-info` directory, which changes
//! the containing directory's modification time; a `.pth` file that adds a directory is itself
//! such an entry, and the directory it adds is on `sys.path` with a stamp of its own. So an
//! entry records a stamp (modification time in nanoseconds, inode) of the interpreter path as
//! given and as resolved, of `pyvenv.cfg`, and of each `sys.path` directory — the latter taken
//! by the interpreter *before* it reads the distributions, so a change made while it reads
//! shows as a newer stamp — and is used only while every stamp is unchanged.
//!
//! File times come from a coarse clock, so a change in the same tick as a stamp can leave it
//! unchanged: as git does for racily clean files, an answer is not remembered while any of its
//! stamps is less than [`SETTLED`] old (the run after an install asks again; the one after that
//! remembers). A relative `sys.path` entry (the working directory, before Python 3.11's `-I`
//! implies `-P`) makes the answer depend on where the command runs: such an answer is not
//! remembered.
//!
//! Not seen: a metadata file rewritten in place inside an existing `*.dist-info` or
//! `*.egg-info` directory (no installer does that; a legacy `setup.py egg_info` run in a
//! checkout on `sys.path` does), and a `sitecustomize` edited in place to move `sys.path`.
//! Removing `<cache>/installed-core-v1` forgets every answer. Entries are JSON, written through
//! a rename; one that cannot be read is a miss, so a damaged cache never changes an answer, only
//! its cost. Like the validation cache (`report::cache`), an entry is trusted as much as the
//! user's home that holds it.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The layout version of entries (the directory's name).
const FORMAT: &str = "installed-core-v1";

/// How old every stamp must be for an answer to be remembered.
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

/// Run with `-I` in the installed Hermes's interpreter: the stamps of what the answer depends
/// on, taken first, then `hermes-agent`'s version and Requires-Dist and every installed
/// distribution.
static SCRIPT: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("{}\n{}", crate::interpreter::HERMES_VERSION, FACTS));

/// The question itself, after [`crate::interpreter::HERMES_VERSION`]: the version is the
/// release Hermes reports (its install stamp where the distribution says `0.0.0`), and the
/// files that answer depends on are stamped like the `sys.path` directories.
const FACTS: &str = r#"
import json, os, sys
from importlib import metadata

def stamp(path):
    try:
        s = os.stat(path)
    except (OSError, ValueError):
        return None
    return [s.st_mtime_ns, s.st_ino]

stamps = [[p, stamp(p)] for p in sys.path]
cfg = os.path.join(sys.prefix, "pyvenv.cfg")
stamps.append([cfg, stamp(cfg)])
found = hermes_version()
if found is None:
    print(json.dumps({"stamps": stamps, "error": "hermes-agent is not installed in this interpreter's environment"}))
else:
    # Stamped before the answer that counts is read, as the directories are.
    stamps.extend([p, stamp(p)] for p in found["files"])
    found = hermes_version()
    dist = metadata.distribution("hermes-agent")
    installed = sorted({(d.metadata["Name"], d.version) for d in metadata.distributions() if d.metadata["Name"]})
    print(json.dumps({"stamps": stamps, "version": found["version"], "requires": dist.requires or [], "installed": installed}))
"#;

/// What the interpreter said about its environment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Facts {
    /// `hermes-agent`'s version.
    pub version: String,
    /// Its `Requires-Dist` lines, as written.
    pub requires: Vec<String>,
    /// Every installed distribution, `(name, version)`, sorted.
    pub installed: Vec<(String, String)>,
}

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// The interpreter was run.
    Asked,
    /// A cache entry whose every stamp still holds.
    Remembered,
}

/// A file's identity as far as change detection goes: modification time (ns) and inode;
/// `None` for a path that cannot be examined (a missing zip on `sys.path`, say).
type Stamp = Option<(i64, u64)>;

/// The interpreter's answer as printed.
#[derive(serde::Deserialize)]
struct Printed {
    stamps: Vec<(String, Stamp)>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    version: String,
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default)]
    installed: Vec<(String, String)>,
}

/// A cache entry.
#[derive(serde::Serialize, serde::Deserialize)]
struct Entry {
    /// The interpreter's stamps ([`interpreter_stamps`]).
    interpreter: (Stamp, Stamp),
    /// Every other path the answer depends on, with its stamp (links followed) when the answer
    /// was taken.
    stamps: Vec<(PathBuf, Stamp)>,
    facts: Facts,
}

/// Asks `python` what its environment holds, or answers from `cache` (the user's cache
/// directory; `None` never remembers) when nothing it depends on has changed. The error says
/// why, for people: the interpreter could not be run or gave no answer, or `hermes-agent` is
/// not installed there (an error is never remembered).
pub fn query(python: &Path, cache: Option<&Path>) -> Result<(Facts, Answered), String> {
    let entry_path = cache.map(|dir| entry_path(dir, python));
    if let Some(facts) = entry_path.as_deref().and_then(|p| remembered(p, python)) {
        tracing::debug!("installed core {}: remembered", python.display());
        return Ok((facts, Answered::Remembered));
    }
    // Stamped before the interpreter runs, for the same reason as the directories.
    let settled_before = now_ns().saturating_sub(SETTLED.as_nanos() as i64);
    let interpreter = interpreter_stamps(python);
    let printed: Printed = crate::interpreter::ask(python, &SCRIPT, &[])?;
    if let Some(error) = printed.error {
        return Err(error);
    }
    let facts = Facts {
        version: printed.version,
        requires: printed.requires,
        installed: printed.installed,
    };
    let settled = |stamp: &Stamp| stamp.is_none_or(|(mtime, _)| mtime < settled_before);
    let cacheable = interpreter.1.is_some()
        && settled(&interpreter.0)
        && settled(&interpreter.1)
        && printed
            .stamps
            .iter()
            .all(|(path, stamp)| Path::new(path).is_absolute() && settled(stamp));
    if let (Some(path), true) = (entry_path, cacheable) {
        let entry = Entry {
            interpreter,
            stamps: printed
                .stamps
                .into_iter()
                .map(|(p, stamp)| (PathBuf::from(p), stamp))
                .collect(),
            facts: facts.clone(),
        };
        let written = serde_json::to_vec(&entry)
            .map_err(std::io::Error::other)
            .and_then(|bytes| crate::files::write_cache_entry(&path, &bytes));
        if let Err(e) = written {
            tracing::debug!("installed core: cannot remember in {}: {e}", path.display());
        }
    }
    Ok((facts, Answered::Asked))
}

/// The entry for `python`: one per interpreter path (as given, made absolute) and script.
fn entry_path(cache: &Path, python: &Path) -> PathBuf {
    let absolute = std::path::absolute(python).unwrap_or_else(|_| python.to_path_buf());
    let mut hasher = Sha256::new();
    hasher.update(absolute.as_os_str().as_encoded_bytes());
    hasher.update([0]);
    hasher.update(SCRIPT.as_bytes());
    let key = crate::hash::hex(&hasher.finalize());
    cache.join(FORMAT).join(format!("{}.json", &key[..32]))
}

/// The facts of the entry for `python` at `path` if it can be read and every stamp in it
/// still holds.
fn remembered(path: &Path, python: &Path) -> Option<Facts> {
    let bytes = crate::files::read_regular(path, crate::files::STATE_LIMIT).ok()??;
    let entry: Entry = serde_json::from_slice(&bytes).ok()?;
    let holds = entry.interpreter == interpreter_stamps(python)
        && entry.interpreter.1.is_some()
        && entry
            .stamps
            .iter()
            .all(|(path, recorded)| stamp(path) == *recorded);
    holds.then_some(entry.facts)
}

/// The interpreter's own stamps: the path as given, not followed (a venv's `bin/python` is a
/// link, and a new link means a new environment), and the file it resolves to.
fn interpreter_stamps(python: &Path) -> (Stamp, Stamp) {
    let link = std::fs::symlink_metadata(python).ok().map(|m| stamp_of(&m));
    (link, stamp(python))
}

/// `path`'s stamp, following links (as `os.stat` does).
fn stamp(path: &Path) -> Stamp {
    std::fs::metadata(path).ok().map(|m| stamp_of(&m))
}

/// The wall clock in the stamps' unit.
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

fn stamp_of(meta: &std::fs::Metadata) -> (i64, u64) {
    let (_, inode, _, modified) = crate::files::os::identity(meta);
    (i64::try_from(modified).unwrap_or(i64::MAX), inode)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Sets the modification time of `path` (not following a link) a minute back — to the
    /// nanosecond, so two calls never give the same time.
    fn backdate(path: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        let minute_ago = now_ns() - 60_000_000_000;
        let t = libc::timespec {
            tv_sec: minute_ago / 1_000_000_000,
            tv_nsec: minute_ago % 1_000_000_000,
        };
        // SAFETY: a valid C string and two timespecs.
        let rc = unsafe {
            libc::utimensat(
                libc::AT_FDCWD,
                c.as_ptr(),
                [t, t].as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    }

    /// Backdates everything under `dir`, `dir` included.
    fn settle(dir: &Path) {
        for entry in walkdir::WalkDir::new(dir) {
            backdate(entry.unwrap().path());
        }
    }

    fn add_dist(site: &Path, name: &str, version: &str, requires: &[&str]) {
        let dir = site.join(format!("{}-{version}.dist-info", name.replace('-', "_")));
        std::fs::create_dir_all(&dir).unwrap();
        let mut metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
        for r in requires {
            metadata.push_str(&format!("Requires-Dist: {r}\n"));
        }
        std::fs::write(dir.join("METADATA"), metadata).unwrap();
    }

    /// A real virtual environment (no pip) and its site-packages.
    fn venv(root: &Path) -> (PathBuf, PathBuf) {
        let status = std::process::Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(root)
            .status()
            .unwrap();
        assert!(status.success());
        let site = walkdir::WalkDir::new(root.join("lib"))
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .find(|p| p.ends_with("site-packages"))
            .unwrap();
        (root.join("bin/python"), site)
    }

    #[test]
    fn an_answer_is_remembered_until_the_environment_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let (python, site) = venv(&tmp.path().join("venv"));
        let cache = tmp.path().join("cache");
        add_dist(
            &site,
            "hermes-agent",
            "0.19.0",
            &["httpx==0.28.1", "rich; extra == \"cli\""],
        );
        add_dist(&site, "httpx", "0.28.1", &[]);
        settle(tmp.path());

        let (first, how) = query(&python, Some(&cache)).unwrap();
        assert_eq!(how, Answered::Asked);
        assert_eq!(first.version, "0.19.0");
        assert_eq!(first.requires, ["httpx==0.28.1", "rich; extra == \"cli\""]);
        assert!(first.installed.contains(&("httpx".into(), "0.28.1".into())));
        let (again, how) = query(&python, Some(&cache)).unwrap();
        assert_eq!((&again, how), (&first, Answered::Remembered));

        // An upgrade renames a dist-info directory: the site directory's time moves. Asked
        // again, and, the change being this recent, not remembered until it has settled.
        std::fs::remove_dir_all(site.join("httpx-0.28.1.dist-info")).unwrap();
        add_dist(&site, "httpx", "0.29.0", &[]);
        let (upgraded, how) = query(&python, Some(&cache)).unwrap();
        assert_eq!(how, Answered::Asked);
        assert!(
            upgraded
                .installed
                .contains(&("httpx".into(), "0.29.0".into()))
        );
        assert!(
            !upgraded
                .installed
                .contains(&("httpx".into(), "0.28.1".into()))
        );
        assert_eq!(query(&python, Some(&cache)).unwrap().1, Answered::Asked);
        settle(tmp.path());
        assert_eq!(query(&python, Some(&cache)).unwrap().1, Answered::Asked);
        assert_eq!(
            query(&python, Some(&cache)).unwrap(),
            (upgraded.clone(), Answered::Remembered)
        );

        // A `.pth` file adding a directory is a new entry of the site directory, and the
        // directory it adds is watched from then on.
        let extra = tmp.path().join("extra");
        std::fs::create_dir(&extra).unwrap();
        std::fs::write(site.join("extra.pth"), format!("{}\n", extra.display())).unwrap();
        settle(tmp.path());
        assert_eq!(query(&python, Some(&cache)).unwrap().1, Answered::Asked);
        assert_eq!(
            query(&python, Some(&cache)).unwrap().1,
            Answered::Remembered
        );
        add_dist(&extra, "anyio", "4.9.0", &[]);
        settle(&extra);
        let (with_extra, how) = query(&python, Some(&cache)).unwrap();
        assert_eq!(how, Answered::Asked);
        assert!(
            with_extra
                .installed
                .contains(&("anyio".into(), "4.9.0".into()))
        );

        // A damaged entry is a miss, never an error or a wrong answer.
        let entry = entry_path(&cache, &python);
        std::fs::write(&entry, b"{\"interpreter\": [null, nul").unwrap();
        assert_eq!(
            query(&python, Some(&cache)).unwrap(),
            (with_extra.clone(), Answered::Asked)
        );
        assert_eq!(
            query(&python, Some(&cache)).unwrap().1,
            Answered::Remembered
        );

        // Without a cache directory nothing is remembered.
        assert_eq!(query(&python, None).unwrap().1, Answered::Asked);
        assert_eq!(query(&python, None).unwrap().1, Answered::Asked);
    }

    #[test]
    fn an_environment_without_hermes_is_an_error_and_not_remembered() {
        let tmp = tempfile::tempdir().unwrap();
        let (python, _) = venv(&tmp.path().join("venv"));
        let cache = tmp.path().join("cache");
        settle(tmp.path());
        for _ in 0..2 {
            let e = query(&python, Some(&cache)).unwrap_err();
            assert!(e.contains("hermes-agent is not installed"), "{e}");
        }
        assert!(!cache.join(FORMAT).exists());
        let e = query(&tmp.path().join("no-python"), Some(&cache)).unwrap_err();
        assert!(e.contains("cannot run it"), "{e}");
    }
}
