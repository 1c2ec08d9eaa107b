//! A temp Hermes home with the loopback index and plugins in real git repositories (made
//! with git2), for the package-manager tests.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use serde_json::Value;

use super::index::{TestIndex, Wheel};
use super::repo;

pub const NOW: &str = "2026-12-01T00:00:00Z";

/// The packages the plugins use.
pub fn index() -> TestIndex {
    TestIndex::start(&[
        Wheel::new("weatherlib", "1.0.0", "2025-01-01T00:00:00Z").requires("colorlib>=1"),
        Wheel::new("weatherlib", "2.0.0", "2025-06-01T00:00:00Z").requires("colorlib>=2"),
        Wheel::new("colorlib", "1.0.0", "2025-01-01T00:00:00Z"),
        Wheel::new("colorlib", "2.0.0", "2025-06-01T00:00:00Z"),
        Wheel::new("newslib", "1.0.0", "2025-01-01T00:00:00Z"),
    ])
}

/// The files of a native plugin that depends on `deps`.
pub fn plugin_files(name: &str, version: &str, deps: &[&str]) -> Vec<(String, String)> {
    let list = deps
        .iter()
        .map(|d| format!("  - \"{d}\"\n"))
        .collect::<String>();
    vec![
        (
            "plugin.yaml".into(),
            format!(
                "name: {name}\nversion: {version}\ndescription: test plugin {name}\nmanifest_version: 2\nprovides_tools:\n  - {name}_tool\npython_dependencies:\n{list}"
            ),
        ),
        (
            "__init__.py".into(),
            format!(
                "VERSION = \"{version}\"\n\ndef _tool(**kwargs):\n    return VERSION\n\ndef register(ctx):\n    ctx.register_tool(name=\"{name}_tool\", toolset=\"{name}\", schema={{}}, handler=_tool)\n"
            ),
        ),
    ]
}

/// Writes files into a work tree and commits them; returns the commit id.
pub fn commit(repo_dir: &Path, files: &[(String, String)], message: &str) -> String {
    let repo = git2::Repository::open(repo_dir).unwrap();
    for (path, text) in files {
        let full = repo_dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, text).unwrap();
    }
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::new(
        "Test",
        "test@example.org",
        &git2::Time::new(1_700_000_000, 0),
    )
    .unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap()
        .to_string()
}

/// A git repository at `dir` with a plugin in it (at `subdir` if given).
pub fn git_plugin(
    dir: &Path,
    subdir: Option<&str>,
    name: &str,
    version: &str,
    deps: &[&str],
) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let repo = git2::Repository::init(dir).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    let files: Vec<(String, String)> = plugin_files(name, version, deps)
        .into_iter()
        .map(|(p, t)| match subdir {
            Some(s) => (format!("{s}/{p}"), t),
            None => (p, t),
        })
        .collect();
    commit(dir, &files, &format!("{name} {version}"))
}

/// A git repository `<tmp>/<name>-repo` with `files` committed on `main`.
pub fn repo_with(w: &World, name: &str, files: &[(String, String)]) -> PathBuf {
    let dir = w.tmp.path().join(format!("{name}-repo"));
    std::fs::create_dir_all(&dir).unwrap();
    let repo = git2::Repository::init(&dir).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    commit(&dir, files, "v1");
    dir
}

/// Runs a prepared command (extra environment, a timeout) and returns (code, stdout,
/// stderr); `None` code means killed by a signal.
pub fn outcome(cmd: &mut assert_cmd::Command) -> (Option<i32>, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One test world: a temp home and the index.
pub struct World {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub index: TestIndex,
}

impl World {
    pub fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        World {
            home,
            tmp,
            index: index(),
        }
    }

    /// The command with the world's environment.
    pub fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.std_cmd(args))
    }

    /// The same as a `std::process::Command` (for spawning and killing).
    pub fn std_cmd(&self, args: &[&str]) -> StdCommand {
        #[allow(deprecated)]
        let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("hermes-plugins"));
        c.current_dir(repo())
            .env_remove("HERMES_PLUGINS_CORE")
            .env("HERMES_PLUGINS_NO_CORE", "1")
            .env_remove("HERMES_PLUGINS_DEBUG")
            .env("NO_COLOR", "1")
            .env("HERMES_HOME", &self.home)
            .env("HERMES_PLUGINS_NOW", NOW)
            .env("HERMES_PLUGINS_INDEX_URL", self.index.url())
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env_remove("UV_INDEX_URL")
            .env_remove("HERMES_PLUGINS_FAULT")
            .env("HERMES_PLUGINS_CATALOG", "none")
            .env_remove("HERMES_PLUGINS_GITHUB")
            .env("HERMES_PLUGINS_CACHE_DIR", super::user_cache())
            .args(args);
        c
    }

    /// Installs and enables a `news` plugin (one dependency) from a git repository, with the
    /// real interpreter behind `python3` and `user_cache` as the user's cache directory.
    pub fn enable_news_with_user_cache(&self, user_cache: &Path) {
        let repo = self.tmp.path().join("news");
        git_plugin(&repo, None, "news", "1.0.0", &["newslib>=1"]);
        let out = self
            .cmd(&["install", &file_url(&repo), "--enable", "--yes-deps"])
            .env(
                "HERMES_PLUGINS_PYTHON",
                super::synthetic::python_executable(),
            )
            .env("HERMES_PLUGINS_CACHE_DIR", user_cache)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(self.current(), Some(1));
    }

    /// Runs and returns (code, stdout, stderr); `None` code means killed by a signal.
    pub fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        outcome(&mut self.cmd(args))
    }

    /// Runs expecting success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(
            code,
            Some(0),
            "{args:?} failed:\nstdout:\n{out}\nstderr:\n{err}"
        );
        out
    }

    /// Runs with `--json` expecting success.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.ok(&all);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    pub fn pm(&self) -> PathBuf {
        self.home.join("pm")
    }

    /// The generation `current` points to.
    pub fn current(&self) -> Option<u64> {
        std::fs::read_link(self.pm().join("current"))
            .ok()
            .and_then(|t| t.file_name()?.to_str()?.parse().ok())
    }

    /// Runs Python code in the current generation's venv.
    pub fn venv_python(&self, code: &str) -> String {
        let env = self.json(&["env"]);
        let python = env["python"]["executable"].as_str().unwrap();
        let out = StdCommand::new(python).args(["-c", code]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// What an interrupted or failed writer must not leave: dot-named (staging, partial)
    /// entries directly in `pm/`, `pm/store`, `pm/generations` and the wheel cache, and
    /// anything in the scratch directory `pm/tmp`.
    pub fn leftovers(&self) -> Vec<String> {
        let pm = self.pm();
        let mut found = Vec::new();
        for dir in [
            pm.clone(),
            pm.join("store"),
            pm.join("generations"),
            pm.join("cache/wheels"),
        ] {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                if e.file_name().to_string_lossy().starts_with('.') {
                    found.push(e.path().display().to_string());
                }
            }
        }
        for e in std::fs::read_dir(pm.join("tmp"))
            .into_iter()
            .flatten()
            .flatten()
        {
            found.push(e.path().display().to_string());
        }
        found
    }

    /// Generation directories present (numbers).
    pub fn generation_dirs(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.pm().join("generations"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// `file://` URL of a path.
pub fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Another process holding `pm/lock` of `w` (contents `4242 test-holder`) until killed; the
/// lock is held when this returns.
pub fn hold_writer_lock(w: &World) -> std::process::Child {
    std::fs::create_dir_all(w.pm()).unwrap();
    let mut holder = StdCommand::new("python3")
        .args([
            "-c",
            "import fcntl,sys,time\nf=open(sys.argv[1],'a+')\nfcntl.flock(f,fcntl.LOCK_EX)\nf.truncate(0);f.write('4242 test-holder');f.flush()\nprint('held',flush=True)\ntime.sleep(60)",
        ])
        .arg(w.pm().join("lock"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "held");
    holder
}
