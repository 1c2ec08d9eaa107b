//! Benchmark: a home at the scale of real use (issue 32) — the real plugins of
//! `../shared/corpus` (52 from GitHub, then Hermes 0.19.0's bundled ones) installed one after
//! another into one home, each enabled when it declares no Python dependency (the rest stay
//! installed, disabled: their dependencies would need PyPI), for 10, 20, 40 and 80 plugins:
//!
//! - `install` (+ `enable`): per plugin, median over the home's plugins;
//! - a no-op `sync`, `generations rollback` (back and forth), `exec -- true`, `verify`:
//!   medians of ITERATIONS runs on the full home;
//! - what the home keeps: generations and `pm/` on disk (the policy keeps the newest 10).
//!
//! `cargo bench --bench home -- [ITERATIONS]` (default 11). Every run is a process, offline
//! (`--no-index`, `--no-core`), with the first `python3` on PATH. Plugins are taken in the
//! order `find` gives, sorted by path, so every size is a prefix of the next.
//!
//! `cargo bench --bench home -- [ITERATIONS] --pypi HERMES_PYTHON`: the home a user has. Every
//! plugin is enabled, its dependencies resolved from the real PyPI together with the Hermes
//! installed at `HERMES_PYTHON` (`core installed:HERMES_PYTHON`, its interpreter for the
//! environments); a plugin whose enable is refused (a conflict with what is already enabled,
//! a distribution that cannot be built) stays installed and disabled, as for a user. Each size
//! is a new home and downloads live in the home's own cache (`pm/cache/uv`), so every size
//! fetches its distributions from PyPI again: its `install` figures include the network.

#[path = "support/mod.rs"]
mod support;
use support::python;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Where dependencies come from.
enum Index {
    /// None: only plugins without Python dependencies are enabled, without Hermes core.
    Offline,
    /// The real PyPI, with the Hermes installed at this interpreter as core.
    PyPi(PathBuf),
}

fn hp(home: &Path, python: &Path, index: &Index, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hermes-plugins"));
    cmd.env("HERMES_HOME", home)
        .env("HERMES_PLUGINS_CATALOG", "none")
        .env_remove("HERMES_PLUGINS_CORE");
    for var in ["HERMES_PLUGINS_INDEX_URL", "UV_INDEX_URL", "PIP_INDEX_URL"] {
        cmd.env_remove(var);
    }
    match index {
        Index::Offline => {
            cmd.env("HERMES_PLUGINS_PYTHON", python)
                .env("HERMES_PLUGINS_NO_CORE", "1");
        }
        Index::PyPi(hermes) => {
            cmd.env("HERMES_PLUGINS_PYTHON", hermes)
                .env_remove("HERMES_PLUGINS_NO_CORE");
        }
    }
    cmd.args(args);
    cmd
}

/// Every plugin directory of the corpus (a `plugin.yaml` at most three levels down), sorted.
fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut found = Vec::new();
    for part in ["github-2026-12", "hermes-0.19.0-bundled"] {
        let mut here = Vec::new();
        walk(&root.join(part), 0, &mut here);
        here.sort();
        found.extend(here);
    }
    found
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if dir.join("plugin.yaml").is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    if depth == 4 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir())
            && !e.file_name().to_string_lossy().starts_with('.')
        {
            walk(&e.path(), depth + 1, out);
        }
    }
}

/// Whether the plugin declares Python dependencies (then it needs an index to be enabled).
fn declares_dependencies(dir: &Path) -> bool {
    let manifest = std::fs::read_to_string(dir.join("plugin.yaml")).unwrap_or_default();
    dir.join("requirements.txt").exists()
        || dir.join("pyproject.toml").exists()
        || manifest.contains("python_dependencies:")
            && !manifest.contains("python_dependencies: []")
        || manifest.contains("pip_dependencies:") && !manifest.contains("pip_dependencies: []")
}

fn timed(mut cmd: Command) -> (Duration, bool) {
    let start = Instant::now();
    let ok = cmd.output().map(|o| o.status.success()).unwrap_or(false);
    (start.elapsed(), ok)
}

fn median(mut t: Vec<Duration>) -> f64 {
    t.sort();
    t.get(t.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn du(dir: &Path) -> u64 {
    let out = Command::new("du")
        .args(["-sk"])
        .arg(dir)
        .output()
        .expect("du runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .and_then(|k| k.parse::<u64>().ok())
        .unwrap_or(0)
        / 1024
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let iterations: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(11);
    let index = match args.iter().position(|a| a == "--pypi") {
        Some(at) => Index::PyPi(PathBuf::from(
            args.get(at + 1)
                .expect("--pypi needs the interpreter of an installed Hermes"),
        )),
        None => Index::Offline,
    };
    let python = python();
    let plugins = corpus();
    if plugins.is_empty() {
        println!("home: no corpus next to the checkout (../shared/corpus); nothing to measure");
        return;
    }
    println!(
        "home: {} corpus plugins, {iterations} iterations, release, {}",
        plugins.len(),
        match &index {
            Index::Offline => "offline".to_string(),
            Index::PyPi(hermes) => format!("PyPI, core installed:{}", hermes.display()),
        }
    );
    println!(
        "{:>4} {:>8} {:>14} {:>10} {:>12} {:>12} {:>10} {:>6} {:>8}",
        "N",
        "enabled",
        "install ms/pl",
        "sync ms",
        "rollback ms",
        "exec true ms",
        "verify ms",
        "gens",
        "pm MB"
    );
    for n in [10, 20, 40, 80] {
        let n = n.min(plugins.len());
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        if let Index::PyPi(hermes) = &index {
            let core = format!("installed:{}", hermes.display());
            let (_, ok) = timed(hp(
                &home,
                &python,
                &index,
                &["config", "set", "core", &core],
            ));
            assert!(ok, "config set core {core}");
        }
        let offline = matches!(index, Index::Offline);
        let mut install = Vec::new();
        let mut enabled = 0;
        for dir in &plugins[..n] {
            let path = dir.to_str().unwrap();
            let enable = !offline || !declares_dependencies(dir);
            let mut args = vec!["install", path, "--force"];
            if offline {
                args.push("--no-index");
            }
            if enable {
                args.extend(["--enable", "--yes-deps"]);
            }
            let (took, ok) = timed(hp(&home, &python, &index, &args));
            if ok {
                install.push(took);
                enabled += usize::from(enable);
            } else if !offline {
                // Refused as a whole (the enable is part of the install): install it disabled,
                // as a user would after reading the refusal.
                args.truncate(3);
                if timed(hp(&home, &python, &index, &args)).1 {
                    println!("  {path}: installed, enable refused");
                }
            }
        }
        let runs = |args: &[&str]| -> Vec<Duration> {
            (0..iterations)
                .map(|_| timed(hp(&home, &python, &index, args)).0)
                .collect()
        };
        let sync = runs(if offline {
            &["sync", "--no-index"]
        } else {
            &["sync"]
        });
        let rollback: Vec<Duration> = (0..iterations)
            .map(|i| {
                // Back to the parent, then forward again to the newest: each run is a switch.
                let args: Vec<String> = if i % 2 == 0 {
                    vec!["generations".into(), "rollback".into()]
                } else {
                    let newest = std::fs::read_dir(home.join("pm/generations"))
                        .unwrap()
                        .flatten()
                        .filter_map(|e| e.file_name().to_str()?.parse::<u64>().ok())
                        .max()
                        .unwrap_or(1);
                    vec!["generations".into(), "rollback".into(), newest.to_string()]
                };
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                timed(hp(&home, &python, &index, &args)).0
            })
            .collect();
        let exec = runs(&["exec", "--", "true"]);
        let verify = runs(&["verify"]);
        let generations = std::fs::read_dir(home.join("pm/generations"))
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().parse::<u64>().is_ok())
                    .count()
            })
            .unwrap_or(0);
        println!(
            "{n:>4} {enabled:>8} {:>14.1} {:>10.1} {:>12.1} {:>12.1} {:>10.1} {generations:>6} {:>8}",
            median(install),
            median(sync),
            median(rollback),
            median(exec),
            median(verify),
            du(&home.join("pm")),
        );
    }
}
