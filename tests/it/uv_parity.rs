//! Parity with uv 0.12.5: on generated indexes (versions, upload times around the quarantine
//! cutoff, backtracking ranges, markers), `hermes-plugins resolve` must pick exactly what
//! `uv pip compile` picks with the same requirements, the same per-package
//! `--exclude-newer-package` cutoffs and core's pins as preferences — or both must fail.
//!
//! uv comes from `HERMES_PLUGINS_UV` (a path) or `uv` on PATH and must be 0.12.5. Without it
//! the test says so and passes, unless `HERMES_PLUGINS_REQUIRE_UV=1` (CI sets it, after
//! installing uv 0.12.5 from PyPI), in which case a missing uv fails the run.
//!
//! Debugging: `PARITY_SEED=N` runs one world, `PARITY_DEBUG=1` prints timings and both
//! failures and keeps uv's `-v` log in `/tmp/uv-debug.log`; `INDEX_DEBUG=1` logs requests.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::index::TestIndex;
use common::synthetic::{self, World};
use common::*;

const UV_VERSION: &str = "uv 0.12.5";

fn find_uv() -> Option<PathBuf> {
    let candidate = std::env::var_os("HERMES_PLUGINS_UV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("uv"));
    let out = Command::new(&candidate).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout);
    if version.starts_with(UV_VERSION) {
        Some(candidate)
    } else {
        eprintln!("{} is {version}, not {UV_VERSION}", candidate.display());
        None
    }
}

/// `name==version` pairs from a `uv pip compile` output file.
fn parse_pins(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let l = l.split(';').next().unwrap().trim();
            let (n, v) = l.split_once("==")?;
            Some((n.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// What uv picks (or `Err` with its message).
fn uv_compile(
    uv: &Path,
    world: &World,
    index: &TestIndex,
    dir: &Path,
    py: &Path,
) -> Result<BTreeMap<String, String>, String> {
    let input = dir.join("requirements.in");
    let output = dir.join("requirements.txt");
    std::fs::write(&input, world.requirements_in()).unwrap();
    // An existing output file is read as preferences: core's pins.
    std::fs::write(&output, world.pins_txt()).unwrap();
    let cutoff = World::cutoff(14);
    let mut cmd = Command::new(uv);
    cmd.current_dir(dir)
        .args(["pip", "compile", "--no-config", "--no-header"])
        .args(["--no-annotate", "--index-url", &index.url()])
        .arg("--python")
        .arg(py)
        .arg("--cache-dir")
        .arg(dir.join("uv-cache"))
        .arg("-o")
        .arg(&output)
        .arg(&input)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("UV_INDEX_URL")
        .env_remove("UV_EXTRA_INDEX_URL")
        .env_remove("UV_EXCLUDE_NEWER")
        .env_remove("UV_FIND_LINKS");
    for (name, _) in &world.core_pins {
        cmd.arg("--exclude-newer-package")
            .arg(format!("{name}={cutoff}"));
    }
    if std::env::var_os("PARITY_DEBUG").is_some() {
        cmd.arg("-v");
    }
    let out = cmd.output().expect("uv runs");
    if std::env::var_os("PARITY_DEBUG").is_some() {
        std::fs::write("/tmp/uv-debug.log", &out.stderr).unwrap();
    }
    if out.status.success() {
        Ok(parse_pins(&std::fs::read_to_string(&output).unwrap()))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// What we pick (or `Err` with the conflict sentences).
fn ours(
    world: &World,
    index: &TestIndex,
    dir: &Path,
    py: &Path,
) -> Result<BTreeMap<String, String>, String> {
    let core = world.write_core(dir);
    let plugins = world.write_plugins(dir);
    let mut cmd = bin();
    cmd.env("HERMES_PLUGINS_NOW", synthetic::NOW)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("UV_INDEX_URL")
        .env_remove("HERMES_PLUGINS_INDEX_URL")
        .args(["resolve", "--json", "--home"])
        .arg(dir.join("home"))
        .args(["--index-url", &index.url()])
        .arg("--python")
        .arg(py)
        .arg("--core")
        .arg(&core);
    for p in &plugins {
        cmd.arg("--plugin").arg(p);
    }
    let out = cmd.output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "JSON on stdout ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    match out.status.code() {
        Some(0) => Ok(versions(&json["lock"]).into_iter().collect()),
        Some(1) => Err(json["error"]["details"]["conflict"]["sentences"].to_string()),
        other => panic!("resolve exited {other:?}: {json:#}"),
    }
}

#[test]
fn resolve_picks_what_uv_pip_compile_picks() {
    let Some(uv) = find_uv() else {
        if std::env::var("HERMES_PLUGINS_REQUIRE_UV").as_deref() == Ok("1") {
            panic!("{UV_VERSION} is required (HERMES_PLUGINS_REQUIRE_UV=1): set HERMES_PLUGINS_UV");
        }
        eprintln!("skipping: {UV_VERSION} not found (set HERMES_PLUGINS_UV)");
        return;
    };
    let py = synthetic::python_executable();
    let (mut agreed_ok, mut agreed_fail) = (0, 0);
    for seed in 1..=12u64 {
        if std::env::var("PARITY_SEED").is_ok_and(|s| s != seed.to_string()) {
            continue;
        }
        let world = synthetic::world(seed, 18, 8, 5);
        let index = TestIndex::start(&world.wheels);
        let tmp = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        let theirs = uv_compile(&uv, &world, &index, tmp.path(), &py);
        let uv_time = started.elapsed();
        let mine = ours(&world, &index, tmp.path(), &py);
        if std::env::var_os("PARITY_DEBUG").is_some() {
            eprintln!(
                "seed {seed}: uv {uv_time:?}, ours {:?}",
                started.elapsed() - uv_time
            );
        }
        match (&mine, &theirs) {
            (Ok(a), Ok(b)) => {
                assert_eq!(
                    a,
                    b,
                    "seed {seed}: different picks\nrequirements:\n{}",
                    world.requirements_in()
                );
                agreed_ok += 1;
            }
            (Err(a), Err(b)) => {
                if std::env::var_os("PARITY_DEBUG").is_some() {
                    eprintln!("seed {seed}: ours {a}\nuv {b}");
                }
                agreed_fail += 1
            }
            _ => panic!(
                "seed {seed}: one side failed\nours: {mine:?}\nuv: {theirs:?}\nrequirements:\n{}",
                world.requirements_in()
            ),
        }
    }
    eprintln!("{agreed_ok} worlds resolved identically, {agreed_fail} failed on both sides");
    assert!(
        agreed_ok >= 4,
        "too few solvable worlds to mean anything: {agreed_ok}"
    );
}
