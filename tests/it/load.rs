//! Load (issue 17): 8 writers (enable, disable, update, install, a new upstream version)
//! on one home, 4 readers each running an agent that holds a lease on the current
//! generation, and `generations gc --keep 1` in a loop, for `HERMES_PLUGINS_LOAD_SECONDS`
//! (default 60). Every writer succeeds or fails cleanly (an exit status and an `error:` line,
//! never a signal or a panic); every reader finds its leased generation whole — plugins and
//! venv there — until it exits, so gc never collects a leased generation; at the end the
//! journal is empty, no staging is left, and every generation verifies.

use crate::common;
use common::synthetic::Rng;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::git_http::{GitFault, GitServer};
use common::world::{World, commit, file_url, git_plugin, plugin_files};

/// A reader: a command run under `exec` that checks its leased generation while holding it.
const READER: &str = r#"d="$HERMES_PLUGINS_GENERATION"
[ -n "$d" ] || exit 0
for i in 1 2 3 4; do
  [ -f "$d/generation.json" ] || { echo "generation.json gone from $d" >&2; exit 7; }
  [ -d "$d/venv" ] || { echo "venv gone from $d" >&2; exit 7; }
  for p in "$d"/plugins/*; do
    [ -e "$p" ] || [ "$p" = "$d/plugins/*" ] || { echo "plugin $p gone" >&2; exit 7; }
  done
  sleep 0.1
done"#;

#[test]
fn writers_readers_and_gc_together() {
    let seconds: u64 = std::env::var("HERMES_PLUGINS_LOAD_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let w = World::new();
    let news = w.tmp.path().join("news");
    git_plugin(&news, None, "news", "1.0.0", &["newslib>=1"]);
    let weather = w.tmp.path().join("weather");
    git_plugin(&weather, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let plain = w.tmp.path().join("plain");
    git_plugin(&plain, None, "plain", "1.0.0", &[]);
    w.ok(&["install", &file_url(&news), "--enable", "--yes-deps"]);
    w.ok(&["install", &file_url(&weather)]);
    let plain_url = file_url(&plain);

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let writes = AtomicUsize::new(0);
    let refusals = AtomicUsize::new(0);
    let reads = AtomicUsize::new(0);
    let collections = AtomicUsize::new(0);
    let news_version = AtomicUsize::new(1);
    // Each distinct refusal (its first line, digits masked) and how often it came.
    let why: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for writer in 0..8u64 {
            let (w, plain_url, news) = (&w, &plain_url, &news);
            let (writes, refusals, news_version, why) = (&writes, &refusals, &news_version, &why);
            scope.spawn(move || {
                let mut rng = Rng::new(0x10ad + writer);
                while Instant::now() < deadline {
                    let args: Vec<String> = match rng.below(7) {
                        0 => vec!["enable".into(), "weather".into(), "--yes-deps".into()],
                        1 => vec!["disable".into(), "weather".into()],
                        2 => vec!["enable".into(), "plain".into(), "--yes-deps".into()],
                        3 => vec!["disable".into(), "plain".into()],
                        4 => vec!["install".into(), plain_url.clone()],
                        5 => vec!["update".into(), "--all".into(), "--yes".into()],
                        _ if writer == 0 => {
                            // A new upstream version of `news` for `update` to find.
                            let v = news_version.fetch_add(1, Ordering::SeqCst) + 1;
                            commit(
                                news,
                                &plugin_files("news", &format!("1.0.{v}"), &["newslib>=1"]),
                                "bump",
                            );
                            continue;
                        }
                        _ => vec!["sync".into()],
                    };
                    let mut full = vec!["--lock-timeout", "300"];
                    full.extend(args.iter().map(String::as_str));
                    let out = w.cmd(&full).output().unwrap();
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    let context = format!("writer {writer}: {args:?}: {stderr}");
                    assert!(!stderr.contains("panicked"), "{context}");
                    match out.status.code() {
                        Some(0) => writes.fetch_add(1, Ordering::Relaxed),
                        // A refusal, a usage error (`plain` not installed yet), an
                        // environment error: clean if it says why.
                        Some(code @ 1..=3) => {
                            let line = stderr.lines().find(|l| l.starts_with("error:"));
                            let line = line.unwrap_or_else(|| panic!("no error line: {context}"));
                            let masked: String = line
                                .chars()
                                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                                .collect();
                            *why.lock()
                                .unwrap()
                                .entry(format!("exit {code}: {masked}"))
                                .or_default() += 1;
                            refusals.fetch_add(1, Ordering::Relaxed)
                        }
                        other => panic!("exit {other:?}: {context}"),
                    };
                }
            });
        }
        for reader in 0..4 {
            let (w, reads) = (&w, &reads);
            scope.spawn(move || {
                while Instant::now() < deadline {
                    let out = w.cmd(&["exec", "--", "sh", "-c", READER]).output().unwrap();
                    assert_eq!(
                        out.status.code(),
                        Some(0),
                        "reader {reader}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let (w, collections) = (&w, &collections);
        scope.spawn(move || {
            while Instant::now() < deadline {
                let out = w
                    .cmd(&["--lock-timeout", "300", "generations", "gc", "--keep", "1"])
                    .output()
                    .unwrap();
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "gc: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                collections.fetch_add(1, Ordering::Relaxed);
            }
        });
    });
    eprintln!(
        "load for {seconds} s: {} writes, {} clean refusals, {} leased reads, {} gc runs, news at 1.0.{}",
        writes.load(Ordering::Relaxed),
        refusals.load(Ordering::Relaxed),
        reads.load(Ordering::Relaxed),
        collections.load(Ordering::Relaxed),
        news_version.load(Ordering::Relaxed)
    );
    for (line, count) in why.lock().unwrap().iter() {
        eprintln!("  {count} × {line}");
    }
    assert!(writes.load(Ordering::Relaxed) > 0 && reads.load(Ordering::Relaxed) > 0);

    // Nothing half-done: no journal (no writer was killed, so none may be left), no staging,
    // and every generation still present verifies against the store.
    assert!(!w.pm().join("journal.json").exists(), "journal left");
    let store = hermes_plugins::store::Store::open(w.pm().join("store")).unwrap();
    for name in w.generation_dirs() {
        assert!(!name.starts_with('.'), "staging left: {name}");
        let dir = w.pm().join("generations").join(&name);
        let doc = hermes_plugins::generation::doc::GenerationDoc::read(&dir).unwrap();
        let problems = hermes_plugins::generation::verify::verify(&dir, &doc, &store);
        assert!(problems.is_empty(), "generation {name}: {problems:?}");
    }
    w.ok(&["verify"]);
}

/// `update` whose fetch is overtaken by another writer (the loopback git server holds its
/// pack request until a second `update` of the same plugin has finished): it notices the record
/// moved, says so, fetches again and ends cleanly — instead of refusing with "run the update
/// again".
#[test]
fn an_update_overtaken_while_fetching_fetches_again() {
    let w = World::new();
    let served = w.tmp.path().join("served");
    let repo = served.join("weather");
    git_plugin(&repo, None, "weather", "1.0.0", &[]);
    let server = GitServer::start(&served);
    let url = server.url("weather");
    w.ok(&["install", url.as_str(), "--enable", "--yes-deps"]);
    commit(
        &repo,
        &plugin_files("weather", "1.1.0", &[]),
        "weather 1.1.0",
    );
    server.set_fault(GitFault::HoldOnce);
    let slow = w
        .std_cmd(&["update", "weather", "--yes"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the slow update's pack request is being held, then overtake it.
    let held = Instant::now();
    while !server.holding() {
        assert!(held.elapsed() < Duration::from_secs(30), "no fetch started");
        std::thread::sleep(Duration::from_millis(20));
    }
    w.ok(&["update", "weather", "--yes"]);
    let overtaken_at = w.current();
    server.release();
    let out = slow.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("`weather` changed while it was being fetched")
            && stderr.contains("fetching again"),
        "{stderr}"
    );
    // The second fetch found what the overtaking update installed: nothing more to publish.
    assert_eq!(w.current(), overtaken_at, "{stderr}");
    assert_eq!(w.leftovers(), Vec::<String>::new());
    w.ok(&["verify"]);
}
