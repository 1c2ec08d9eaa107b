//! Crash safety (GEN-8): abort at every named fault point during `enable` and `update`, and
//! kill the process at random moments during `enable`, `update`, `generations rollback`,
//! `generations gc` and `remove`; `current` must always be a complete generation that
//! `verify` accepts, and the next writer must finish or undo the interrupted work.
//!
//! Random kills: 50 per operation from a fixed seed, both printed with every failure;
//! `HERMES_PLUGINS_KILL_TRIALS` and `HERMES_PLUGINS_KILL_SEED` change them (a replay uses the
//! printed pair).

use crate::common;
use common::synthetic::Rng;

use std::time::{Duration, Instant};

use common::world::{World, commit, file_url, git_plugin, plugin_files};

use hermes_plugins::generation::faults::POINTS;

/// A home with `news` enabled (generation 1) and `weather` installed but disabled.
fn prepared() -> (World, std::path::PathBuf) {
    let w = World::new();
    let news = w.tmp.path().join("news");
    git_plugin(&news, None, "news", "1.0.0", &["newslib>=1"]);
    let weather = w.tmp.path().join("weather");
    git_plugin(&weather, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    std::fs::write(
        w.home.join("config.yaml"),
        "# mine\nplugins:\n  enabled:\n    - news\n",
    )
    .unwrap();
    w.ok(&["install", &file_url(&news), "--enable", "--yes-deps"]);
    w.ok(&["install", &file_url(&weather)]);
    assert_eq!(w.current(), Some(1));
    (w, weather)
}

/// `current` is a complete generation that verifies, and it agrees with config.yaml.
fn assert_consistent(w: &World, context: &str) {
    let current = w
        .current()
        .unwrap_or_else(|| panic!("{context}: no current generation"));
    let (code, out, err) = w.run(&["verify"]);
    assert_eq!(
        code,
        Some(0),
        "{context}: verify of generation {current} failed:\n{out}\n{err}"
    );
}

/// After recovery (the next writer): no journal, no staging, config matches current.
fn assert_recovered(w: &World, context: &str) {
    w.ok(&["generations", "list"]);
    // A writer that changes nothing: runs recovery.
    let (code, _, err) = w.run(&["generations", "gc", "--keep", "100"]);
    assert_eq!(code, Some(0), "{context}: {err}");
    assert!(
        !w.pm().join("journal.json").exists(),
        "{context}: journal left"
    );
    for d in w.generation_dirs() {
        assert!(!d.starts_with('.'), "{context}: leftover {d}");
    }
    let env = w.json(&["env"]);
    let active: Vec<String> = env["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap().to_string())
        .collect();
    let config = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
    let selection =
        hermes_plugins::state::profiles::read_profile("default", &w.home.join("config.yaml"))
            .unwrap();
    let selected: Vec<String> = selection.selected().cloned().collect();
    assert_eq!(
        selected, active,
        "{context}: config.yaml and current disagree:\n{config}"
    );
    assert!(config.starts_with("# mine\n"), "{context}: {config}");
    assert_consistent(w, context);
}

#[test]
fn enable_aborted_at_every_point() {
    for point in POINTS {
        let (w, _) = prepared();
        let config_before = std::fs::read(w.home.join("config.yaml")).unwrap();
        let out = w
            .cmd(&["enable", "weather", "--yes-deps"])
            .env("HERMES_PLUGINS_FAULT", point)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), None, "{point}: the fault did not fire");
        assert_consistent(&w, point);
        assert_recovered(&w, point);
        if *point == "after-switch" {
            assert_eq!(w.current(), Some(2), "{point}");
        } else {
            assert_eq!(w.current(), Some(1), "{point}");
            assert_eq!(
                std::fs::read(w.home.join("config.yaml")).unwrap(),
                config_before,
                "{point}"
            );
        }
        // The operation can be repeated cleanly.
        w.ok(&["enable", "weather", "--yes-deps"]);
        assert_consistent(&w, point);
    }
}

#[test]
fn update_aborted_at_every_point() {
    for point in POINTS {
        let (w, weather) = prepared();
        w.ok(&["enable", "weather", "--yes-deps"]);
        commit(
            &weather,
            &plugin_files("weather", "2.0.0", &["weatherlib==2.0.0"]),
            "v2",
        );
        let installed_before = std::fs::read(w.pm().join("installed.json")).unwrap();
        let out = w
            .cmd(&["update", "--all", "--yes"])
            .env("HERMES_PLUGINS_FAULT", point)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), None, "{point}: the fault did not fire");
        assert_consistent(&w, point);
        assert_recovered(&w, point);
        let venv_version = w.venv_python("import weatherlib; print(weatherlib.__version__)");
        if *point == "after-switch" {
            assert_eq!(venv_version, "2.0.0", "{point}");
        } else {
            assert_eq!(venv_version, "1.0.0", "{point}");
            assert_eq!(
                std::fs::read(w.pm().join("installed.json")).unwrap(),
                installed_before,
                "{point}"
            );
        }
    }
}

/// The seed used unless `HERMES_PLUGINS_KILL_SEED` gives another: every run kills at the same
/// offsets, so a failure can be replayed.
const DEFAULT_SEED: u64 = 0x5eed_c0de_2026;

/// Trials per operation unless `HERMES_PLUGINS_KILL_TRIALS` says otherwise.
const DEFAULT_TRIALS: usize = 50;

/// The home an operation is killed in, made once: `prepared()` plus what the operation needs
/// (an enabled `weather` to update, roll back from or remove; several generations to collect),
/// and the operation's arguments.
fn state_for(operation: &str) -> (World, Vec<&'static str>) {
    let (w, weather) = prepared();
    let args = match operation {
        "enable" => vec!["enable", "weather", "--yes-deps"],
        "update" => {
            w.ok(&["enable", "weather", "--yes-deps"]);
            commit(
                &weather,
                &plugin_files("weather", "2.0.0", &["weatherlib==2.0.0"]),
                "v2",
            );
            vec!["update", "--all", "--yes"]
        }
        "rollback" => {
            w.ok(&["enable", "weather", "--yes-deps"]);
            vec!["generations", "rollback"]
        }
        "gc" => {
            w.ok(&["enable", "weather", "--yes-deps"]);
            w.ok(&["disable", "weather"]);
            w.ok(&["enable", "weather", "--yes-deps"]);
            vec!["generations", "gc", "--keep", "1"]
        }
        "remove" => {
            w.ok(&["enable", "weather", "--yes-deps"]);
            vec!["remove", "weather"]
        }
        other => panic!("no kill trials for `{other}`"),
    };
    (w, args)
}

/// Copies a directory tree (`cp -a`: links, modes and read-only store trees as they are).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

/// Kills `operation` at random moments (within one uninterrupted run's duration), each
/// trial from the same prepared home (restored from a copy at the same path, so the venvs'
/// absolute paths stay true): `current` must always verify and the next writer must recover.
fn kill_trials(operation: &str) {
    let trials: usize = std::env::var("HERMES_PLUGINS_KILL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_TRIALS);
    let seed = std::env::var("HERMES_PLUGINS_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let replay = format!("HERMES_PLUGINS_KILL_SEED={seed} HERMES_PLUGINS_KILL_TRIALS={trials}");
    eprintln!("{operation}: {trials} trials, {replay}");
    let mut rng = Rng::new(seed);
    let (w, args) = state_for(operation);
    let template = w.tmp.path().join("template-home");
    copy_tree(&w.home, &template);
    let restore = || {
        hermes_plugins::store::remove_tree(&w.home).unwrap();
        copy_tree(&template, &w.home);
    };
    // What the home looks like before and after an uninterrupted run, and how long one takes:
    // kills land anywhere inside it.
    let before = fingerprint(&w);
    let timed_run = || {
        let start = Instant::now();
        w.ok(&args);
        start.elapsed().as_millis() as u64 + 20
    };
    let mut full = timed_run();
    let after = fingerprint(&w);
    assert_ne!(before, after, "{operation} changes nothing");
    let mut outcomes = [0usize; 3];
    for trial in 0..trials {
        // A run's length follows the machine's load (the whole suite runs in parallel):
        // measured again every ten trials, so the kills keep spanning the run.
        if trial > 0 && trial % 10 == 0 {
            restore();
            full = timed_run();
        }
        restore();
        // Half the kills anywhere in the run, half in its last sixth, where the generation
        // is published and switched (most of a run is resolving and building before it).
        let delay = if trial % 2 == 0 {
            rng.below(full)
        } else {
            full - full / 6 + rng.below(full / 6)
        };
        let mut child = w
            .std_cmd(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        let context = format!(
            "{operation} trial {trial} killed after {delay} of ~{full} ms (replay: {replay})"
        );
        assert_consistent(&w, &context);
        assert_recovered(&w, &context);
        let now = fingerprint(&w);
        outcomes[if now == before {
            0
        } else if now == after {
            1
        } else {
            2
        }] += 1;
    }
    eprintln!(
        "{operation}: {} left as before, {} finished, {} otherwise recovered ({replay})",
        outcomes[0], outcomes[1], outcomes[2]
    );
    // The kills span the operation: some before it took effect, some after.
    assert!(
        outcomes[0] > 0 && outcomes[1] + outcomes[2] > 0,
        "{operation}: every kill landed on one side ({outcomes:?}; {replay})"
    );
}

/// See [`fingerprint`].
type Fingerprint = (Option<u64>, Vec<String>, Vec<(String, String)>, Vec<u8>);

/// What a finished, interrupted or undone operation leaves: the current generation, the
/// generation directories, the installed plugins (key and store tree; not when they were
/// installed) and the selection.
fn fingerprint(w: &World) -> Fingerprint {
    let mut dirs = w.generation_dirs();
    dirs.sort();
    let installed: serde_json::Value = std::fs::read(w.pm().join("installed.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let plugins = installed["plugins"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, p)| (k.clone(), p["tree"].as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    (
        w.current(),
        dirs,
        plugins,
        std::fs::read(w.home.join("config.yaml")).unwrap_or_default(),
    )
}

#[test]
fn enable_killed_at_random_moments() {
    kill_trials("enable");
}

#[test]
fn update_killed_at_random_moments() {
    kill_trials("update");
}

#[test]
fn rollback_killed_at_random_moments() {
    kill_trials("rollback");
}

#[test]
fn gc_killed_at_random_moments() {
    kill_trials("gc");
}

#[test]
fn remove_killed_at_random_moments() {
    kill_trials("remove");
}
