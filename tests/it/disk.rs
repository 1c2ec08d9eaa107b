//! Disk faults (issue 17): the home on a small tmpfs (mounted by the test, as root) that fills
//! up while a plugin tree is stored and while a generation's venv is built, and then turns
//! read-only. Each writer fails with exit 3 naming the path and the reason; the previous
//! generation stays current and verifies; nothing half-written is left; with space again
//! the same command succeeds. Without the right to mount, the test says so and passes, unless
//! `HERMES_PLUGINS_REQUIRE_MOUNT=1` (set by CI).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::world::{World, file_url, git_plugin, plugin_files, repo_with};

/// A tmpfs mounted on a directory for the test's life.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .ok()?;
        status.success().then(|| Tmpfs(dir.to_path_buf()))
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(status.success(), "remount {options}");
    }

    /// Bytes in use.
    fn used(&self) -> u64 {
        let out = Command::new("df")
            .args(["--output=used", "-B1"])
            .arg(&self.0)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .unwrap()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Runs a writer expected to fail for lack of space or a read-only home; see
/// [`fails_cleanly_after`].
fn fails_cleanly(w: &World, args: &[&str], reason: &str, current: Option<u64>) {
    let (code, _, stderr) = w.run(args);
    fails_cleanly_after(w, args, code, &stderr, reason, current);
}

/// A writer's failure was clean: exit 3, the reason and a path under the home named;
/// `current` unchanged and verifying; nothing half-written left.
fn fails_cleanly_after(
    w: &World,
    args: &[&str],
    code: Option<i32>,
    stderr: &str,
    reason: &str,
    current: Option<u64>,
) {
    let context = format!("{args:?}: {stderr}");
    eprintln!(
        "{args:?}: {}",
        stderr
            .lines()
            .skip_while(|l| !l.starts_with("error:"))
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    assert_eq!(code, Some(3), "{context}");
    assert!(stderr.contains(reason), "{context}");
    assert!(
        stderr.contains(w.home.to_str().unwrap()),
        "names the path: {context}"
    );
    assert!(!stderr.contains("panicked"), "{context}");
    assert_eq!(w.current(), current, "{context}");
    w.ok(&["verify"]);
    assert_eq!(w.leftovers(), Vec::<String>::new(), "{context}");
}

#[test]
fn a_full_disk_and_a_read_only_home_fail_cleanly() {
    let w = World::new();
    let Some(fs) = Tmpfs::mount(&w.home, "256m") else {
        assert!(
            std::env::var("HERMES_PLUGINS_REQUIRE_MOUNT").as_deref() != Ok("1"),
            "mounting a tmpfs is required (HERMES_PLUGINS_REQUIRE_MOUNT=1) but failed"
        );
        eprintln!("cannot mount a tmpfs here (not root?): skipping the disk-fault test");
        return;
    };
    let news = w.tmp.path().join("news");
    git_plugin(&news, None, "news", "1.0.0", &["newslib>=1"]);
    let weather = w.tmp.path().join("weather");
    git_plugin(&weather, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    // A plugin with 1 MiB of data: more than the space left below.
    let mut files = plugin_files("big", "1.0.0", &[]);
    files.push(("data.bin".into(), "x".repeat(1024 * 1024)));
    let big = repo_with(&w, "big", &files);
    w.ok(&["install", &file_url(&news), "--enable", "--yes-deps"]);
    w.ok(&["install", &file_url(&weather)]);
    assert_eq!(w.current(), Some(1));

    // Leave 256 KiB: enough to start, not to store 1 MiB or build a second venv.
    fs.remount(&format!("size={}", fs.used() + 256 * 1024));
    let installed = std::fs::read(w.pm().join("installed.json")).unwrap();
    fails_cleanly(
        &w,
        &["install", &file_url(&big)],
        "No space left on device",
        Some(1),
    );
    assert_eq!(
        std::fs::read(w.pm().join("installed.json")).unwrap(),
        installed
    );
    // Growing room, 16 KiB at a time, until `enable` fits: each attempt that does not fails
    // cleanly wherever the disk ran out (uv's cache, the venv, unpacking, installing).
    let mut failures = Vec::new();
    let mut margin = 32 * 1024;
    loop {
        fs.remount(&format!("size={}", fs.used() + margin));
        let (code, _, stderr) = w.run(&["enable", "weather", "--yes-deps"]);
        if code == Some(0) {
            break;
        }
        fails_cleanly_after(
            &w,
            &["enable"],
            code,
            &stderr,
            "No space left on device",
            Some(1),
        );
        failures.push(
            stderr
                .lines()
                .find(|l| l.starts_with("error:"))
                .unwrap_or("")
                .to_string(),
        );
        margin += 16 * 1024;
        assert!(
            margin < 4 * 1024 * 1024,
            "enable never fitted: {failures:#?}"
        );
    }
    eprintln!(
        "enable fitted with {} KiB free after {} clean failures",
        margin / 1024,
        failures.len()
    );
    assert!(failures.len() >= 3, "{failures:#?}");
    assert_eq!(w.current(), Some(2));
    w.ok(&["verify"]);

    // A read-only home: writers refuse, readers read.
    fs.remount("ro");
    fails_cleanly(
        &w,
        &["disable", "weather"],
        "Read-only file system",
        Some(2),
    );
    w.ok(&["list"]);
    w.ok(&["env"]);

    // Space again: the same commands succeed.
    fs.remount("rw,size=256m");
    w.ok(&["disable", "weather"]);
    assert_eq!(w.current(), Some(3));
    w.ok(&["install", &file_url(&big)]);
    w.ok(&["verify"]);
    drop(fs);
}

/// The user's cache (where interpreter facts are kept for every home) on a disk that is full,
/// then read-only: `enable` still publishes, and the facts go to the home's own cache.
#[test]
fn a_full_or_read_only_user_cache_costs_only_the_shared_facts() {
    for (round, state) in ["full", "read-only"].into_iter().enumerate() {
        let w = World::new();
        let cache = w.tmp.path().join("user-cache");
        std::fs::create_dir_all(&cache).unwrap();
        let Some(fs) = Tmpfs::mount(&cache, "1m") else {
            assert!(
                std::env::var("HERMES_PLUGINS_REQUIRE_MOUNT").as_deref() != Ok("1"),
                "mounting a tmpfs is required (HERMES_PLUGINS_REQUIRE_MOUNT=1) but failed"
            );
            eprintln!("cannot mount a tmpfs here (not root?): skipping");
            return;
        };
        // uv's cache directory as `Cache::init` leaves it, then the disk filled (or frozen).
        let uv = cache.join("uv");
        std::fs::create_dir_all(&uv).unwrap();
        std::fs::write(
            uv.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .unwrap();
        std::fs::write(uv.join(".gitignore"), "*").unwrap();
        std::fs::write(uv.join(".lock"), "").unwrap();
        if round == 0 {
            let mut filler = std::fs::File::create(cache.join("filler")).unwrap();
            let block = vec![0u8; 4096];
            while std::io::Write::write_all(&mut filler, &block).is_ok() {}
        } else {
            fs.remount("ro");
        }
        w.enable_news_with_user_cache(&cache);
        assert!(
            common::interpreter_facts(&w.pm().join("cache/uv")) >= 1,
            "{state}: the home's cache keeps the facts"
        );
        w.ok(&["verify"]);
    }
}
