//! Crash safety (GEN-8): abort at every named fault point, and kill the process at random
//! moments, during `enable` and `update`; `current` must always be a complete generation that
//! `verify` accepts, and the next writer must finish or undo the interrupted work.
//!
//! `HERMES_PLUGINS_KILL_TRIALS` sets the number of random kills per operation (default 8; the
//! issue's acceptance run uses 50).

use crate::common;

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
    assert_eq!(
        config.contains("weather"),
        active.contains(&"weather".to_string()),
        "{context}: config.yaml and current disagree:\n{config}\nactive: {active:?}"
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

/// A small deterministic generator (the seed is printed for reproduction).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound.max(1)
    }
}

fn kill_trials(operation: &str) {
    let trials: usize = std::env::var("HERMES_PLUGINS_KILL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let seed = std::env::var("HERMES_PLUGINS_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("{operation}: {trials} trials, HERMES_PLUGINS_KILL_SEED={seed}");
    let mut rng = Lcg(seed);
    // How long does one run take? Kill somewhere inside it.
    let (w, weather) = prepared();
    let args: Vec<&str> = if operation == "enable" {
        vec!["enable", "weather", "--yes-deps"]
    } else {
        w.ok(&["enable", "weather", "--yes-deps"]);
        commit(
            &weather,
            &plugin_files("weather", "2.0.0", &["weatherlib==2.0.0"]),
            "v2",
        );
        vec!["update", "--all", "--yes"]
    };
    let start = Instant::now();
    w.ok(&args);
    let full = start.elapsed().as_millis() as u64 + 20;
    for trial in 0..trials {
        let (w, weather) = prepared();
        if operation == "update" {
            w.ok(&["enable", "weather", "--yes-deps"]);
            commit(
                &weather,
                &plugin_files("weather", "2.0.0", &["weatherlib==2.0.0"]),
                "v2",
            );
        }
        let delay = rng.next(full);
        let mut child = w
            .std_cmd(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        let context = format!("{operation} trial {trial} killed after {delay} ms (seed {seed})");
        assert_consistent(&w, &context);
        assert_recovered(&w, &context);
    }
}

#[test]
fn enable_killed_at_random_moments() {
    kill_trials("enable");
}

#[test]
fn update_killed_at_random_moments() {
    kill_trials("update");
}
