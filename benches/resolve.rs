//! Benchmark: `hermes-plugins resolve` against `uv pip compile` (uv 0.12.5) on the same inputs
//! and the same loopback index, both with a warm cache.
//!
//! The world is generated (see `tests/common/synthetic.rs`): a Hermes core of 32 packages
//! (every one pinned in its `uv.lock`, so every one quarantined), 12 plugin-only packages and
//! 10 plugins. Both tools get core's pins as preferences and the same per-package
//! exclude-newer cutoffs. Both are run as processes, as Hermes runs them.
//!
//! `cargo bench --bench resolve -- [ITERATIONS]` (default 15). uv comes from
//! `HERMES_PLUGINS_UV`, else `uv` on PATH.

#[path = "../tests/common/index.rs"]
mod index;
#[path = "../tests/common/synthetic.rs"]
mod synthetic;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use synthetic::World;

fn ours(world_dir: &Path, plugins: &[PathBuf], index: &str, py: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hermes-plugins"));
    cmd.env("HERMES_PLUGINS_NOW", synthetic::NOW)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("HERMES_PLUGINS_CATALOG", "none")
        .args(["resolve", "--json", "--home"])
        .arg(world_dir.join("home"))
        .args(["--index-url", index])
        .arg("--python")
        .arg(py)
        .arg("--core")
        .arg(world_dir.join("core"));
    for p in plugins {
        cmd.arg("--plugin").arg(p);
    }
    cmd
}

fn theirs(uv: &Path, world: &World, world_dir: &Path, index: &str, py: &Path) -> Command {
    let input = world_dir.join("requirements.in");
    std::fs::write(&input, world.requirements_in()).unwrap();
    let mut cmd = Command::new(uv);
    cmd.current_dir(world_dir)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .args(["pip", "compile", "--no-config", "--no-header"])
        .args(["--index-url", index])
        .arg("--python")
        .arg(py)
        .arg("--cache-dir")
        .arg(world_dir.join("uv-cache"))
        .arg("-o")
        .arg(world_dir.join("requirements.txt"))
        .arg(&input);
    let cutoff = World::cutoff(14);
    for (name, _) in &world.core_pins {
        cmd.arg("--exclude-newer-package")
            .arg(format!("{name}={cutoff}"));
    }
    cmd
}

fn run(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().expect("runs");
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

/// Both commands `iterations` times, interleaved (so both see the same machine); each
/// side's times sorted.
fn time(
    mut a: impl FnMut() -> Command,
    mut b: impl FnMut() -> Command,
    iterations: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let (mut x, mut y): (Vec<Duration>, Vec<Duration>) = (0..iterations)
        .map(|_| (run(&mut a()), run(&mut b())))
        .unzip();
    x.sort();
    y.sort();
    (x, y)
}

fn main() {
    let iterations: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(15);
    let uv = std::env::var_os("HERMES_PLUGINS_UV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("uv"));
    let py = synthetic::python_executable();
    // The first seed whose world both tools can resolve.
    let (seed, world, server, dir, plugins) = (1..100u64)
        .find_map(|seed| {
            let world = synthetic::world(seed, 32, 12, 10);
            let server = index::TestIndex::start(&world.wheels);
            let dir = tempfile::tempdir().unwrap();
            world.write_core(dir.path());
            let plugins = world.write_plugins(dir.path());
            // Core's pins as uv's preferences (an existing output file).
            std::fs::write(dir.path().join("requirements.txt"), world.pins_txt()).unwrap();
            let ok = ours(dir.path(), &plugins, &server.url(), &py)
                .output()
                .unwrap()
                .status
                .success()
                && theirs(&uv, &world, dir.path(), &server.url(), &py)
                    .output()
                    .unwrap()
                    .status
                    .success();
            ok.then_some((seed, world, server, dir, plugins))
        })
        .expect("a solvable world");
    let locked = std::fs::read_to_string(dir.path().join("requirements.txt")).unwrap();
    println!(
        "resolve: world seed {seed}: {} core packages, {} plugins, {} wheels, {} packages resolved; {iterations} iterations, warm cache",
        world.core_pins.len(),
        world.plugins.len(),
        world.wheels.len(),
        locked.lines().filter(|l| l.contains("==")).count()
    );
    let url = server.url();
    if let Ok(filter) = std::env::var("BENCH_TRACE") {
        // One traced run of ours, e.g. BENCH_TRACE=uv_resolver=debug,hermes_plugins=debug.
        let out = ours(dir.path(), &plugins, &url, &py)
            .env("HERMES_PLUGINS_LOG", filter)
            .output()
            .unwrap();
        std::fs::write("/tmp/resolve-trace.log", &out.stderr).unwrap();
        let out = theirs(&uv, &world, dir.path(), &url, &py)
            .arg("-v")
            .output()
            .unwrap();
        std::fs::write("/tmp/uv-trace.log", &out.stderr).unwrap();
        println!("traces written to /tmp/resolve-trace.log and /tmp/uv-trace.log");
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = |t: &[Duration]| t[t.len() / 2];
    let report = |scenario: &str, a: &[Duration], b: &[Duration]| {
        println!("{scenario}:");
        for (name, t) in [("hermes-plugins resolve", a), ("uv pip compile 0.12.5", b)] {
            println!(
                "  {name:24} min {:7.1} ms  median {:7.1} ms  max {:7.1} ms",
                ms(t[0]),
                ms(median(t)),
                ms(t[t.len() - 1])
            );
        }
        println!(
            "  ratio (median, ours / uv): {:.2}",
            median(a).as_secs_f64() / median(b).as_secs_f64()
        );
    };
    let pins = dir.path().join("requirements.txt");
    // 1. First resolution: core's pins are the only preferences on both sides.
    let (a, b) = time(
        || ours(dir.path(), &plugins, &url, &py),
        || {
            std::fs::write(&pins, world.pins_txt()).unwrap();
            theirs(&uv, &world, dir.path(), &url, &py)
        },
        iterations,
    );
    report("first resolution (preferences: core's pins)", &a, &b);
    // 2. Re-resolution: the previous result is the preference set on both sides (our
    //    `--lock`, uv's existing output file), as when Hermes re-resolves after a change.
    let lock = dir.path().join("previous.lock.json");
    let mut write_lock = ours(dir.path(), &plugins, &url, &py);
    assert!(
        write_lock
            .arg("--lock")
            .arg(&lock)
            .status()
            .unwrap()
            .success()
    );
    let (a, b) = time(
        || {
            let mut cmd = ours(dir.path(), &plugins, &url, &py);
            cmd.arg("--lock").arg(&lock).arg("--dry-run");
            cmd
        },
        || theirs(&uv, &world, dir.path(), &url, &py),
        iterations,
    );
    report("re-resolution (preferences: the previous result)", &a, &b);
}
