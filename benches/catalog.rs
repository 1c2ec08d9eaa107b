//! Benchmark: `catalog resolve-all` of 30 synthetic entries (each alone, then together)
//! against running `uv pip compile` 0.12.5 once per entry, on the same loopback index, warm
//! caches, the same interpreter. Target: ≥ 5× faster.
//!
//! `cargo bench --bench catalog -- [ITERATIONS]` (default 5). uv comes from
//! `HERMES_PLUGINS_UV`, else `uv` on PATH.

#[path = "../tests/common/index.rs"]
mod index;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use index::{TestIndex, Wheel};

const HOST: &str = "https://git.example.org/";
const ENTRIES: usize = 30;

fn python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn commit_plugin(dir: &Path, name: &str, deps: &[String]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let repo = git2::Repository::init(dir).unwrap();
    let list: String = deps.iter().map(|d| format!("  - \"{d}\"\n")).collect();
    std::fs::write(
        dir.join("plugin.yaml"),
        format!("name: {name}\nversion: 1.0.0\ndescription: bench\nmanifest_version: 2\npython_dependencies:\n{list}"),
    )
    .unwrap();
    std::fs::write(dir.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
    let mut idx = repo.index().unwrap();
    idx.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    idx.write().unwrap();
    let tree = repo.find_tree(idx.write_tree().unwrap()).unwrap();
    let sig =
        git2::Signature::new("b", "b@example.org", &git2::Time::new(1_700_000_000, 0)).unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "v1", &tree, &[])
        .unwrap()
        .to_string()
}

fn main() {
    let iterations: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let uv = std::env::var_os("HERMES_PLUGINS_UV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("uv"));
    let py = python();
    // 40 packages, 3 versions each, some depending on others.
    let mut wheels = Vec::new();
    for i in 0..40 {
        for (v, date) in [
            ("1.0.0", "2025-01-01"),
            ("1.1.0", "2025-03-01"),
            ("2.0.0", "2025-06-01"),
        ] {
            let mut w = Wheel::new(&format!("lib{i:02}"), v, &format!("{date}T00:00:00Z"));
            if i % 3 == 0 && i + 1 < 40 {
                w = w.requires(&format!("lib{:02}>=1", i + 1));
            }
            wheels.push(w);
        }
    }
    let server = TestIndex::start(&wheels);
    let url = server.url();
    let tmp = tempfile::tempdir().unwrap();
    let mirror = tmp.path().join("mirror");
    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    let mut requirement_files = Vec::new();
    for e in 0..ENTRIES {
        let name = format!("plugin{e:02}");
        let deps: Vec<String> = (0..3)
            .map(|k| format!("lib{:02}>=1", (e * 7 + k * 5) % 40))
            .collect();
        let sha = commit_plugin(&mirror.join("acme").join(&name), &name, &deps);
        std::fs::write(
            catalog.join(format!("{name}.yaml")),
            format!("name: {name}\nrepo: {HOST}acme/{name}\nsha: \"{sha}\"\nmaintainer: bench\n"),
        )
        .unwrap();
        let req = tmp.path().join(format!("{name}.in"));
        std::fs::write(&req, deps.join("\n") + "\n").unwrap();
        requirement_files.push(req);
    }
    let home = tmp.path().join("home");
    let ours = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hermes-plugins"));
        c.env(
            "HERMES_PLUGINS_GIT_INSTEAD_OF",
            format!("{HOST}=file://{}/", mirror.display()),
        )
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("HERMES_PLUGINS_NOW", "2026-12-01T00:00:00Z")
        .args(["--json", "--home"])
        .arg(&home)
        .args(["catalog", "resolve-all"])
        .arg(&catalog)
        .args(["--index-url", &url, "--python"])
        .arg(&py);
        let start = Instant::now();
        let out = c.output().unwrap();
        let t = start.elapsed();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        t
    };
    let uv_cache = tmp.path().join("uv-cache");
    let theirs = || {
        let start = Instant::now();
        for req in &requirement_files {
            let out = Command::new(&uv)
                .env("NO_PROXY", "127.0.0.1,localhost")
                .args([
                    "pip",
                    "compile",
                    "--no-config",
                    "--no-header",
                    "-q",
                    "--index-url",
                    &url,
                ])
                .arg("--python")
                .arg(&py)
                .arg("--cache-dir")
                .arg(&uv_cache)
                .arg(req)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        start.elapsed()
    };
    ours();
    theirs();
    if std::env::var_os("BENCH_TRACE").is_some() {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hermes-plugins"));
        let out = c
            .env(
                "HERMES_PLUGINS_GIT_INSTEAD_OF",
                format!("{HOST}=file://{}/", mirror.display()),
            )
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("HERMES_PLUGINS_LOG", "hermes_plugins=info")
            .arg("--home")
            .arg(&home)
            .args(["catalog", "resolve-all"])
            .arg(&catalog)
            .args(["--index-url", &url, "--python"])
            .arg(&py)
            .output()
            .unwrap();
        std::fs::write("/tmp/catalog-trace.log", &out.stderr).unwrap();
        println!("trace written to /tmp/catalog-trace.log");
    }
    let mut cold: Vec<Duration> = (0..iterations)
        .map(|_| {
            let _ = std::fs::remove_dir_all(home.join("pm/cache/git"));
            ours()
        })
        .collect();
    cold.sort();
    ours();
    // Interleaved, so both see the same machine.
    let (mut a, mut b): (Vec<Duration>, Vec<Duration>) =
        (0..iterations).map(|_| (ours(), theirs())).unzip();
    a.sort();
    b.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "catalog resolve-all: {ENTRIES} entries (40 packages × 3 versions), {iterations} iterations, warm caches"
    );
    println!(
        "  hermes-plugins catalog resolve-all ({ENTRIES} alone + joint, with git fetches)  median {:8.1} ms (min {:.1})",
        ms(a[a.len() / 2]),
        ms(a[0])
    );
    println!(
        "  the same with an empty git cache (30 clones)                            median {:8.1} ms (min {:.1})",
        ms(cold[cold.len() / 2]),
        ms(cold[0])
    );
    println!(
        "  uv pip compile × {ENTRIES}                                                   median {:8.1} ms (min {:.1})",
        ms(b[b.len() / 2]),
        ms(b[0])
    );
    println!(
        "  speed-up (median, uv / ours): {:.1}×",
        ms(b[b.len() / 2]) / ms(a[a.len() / 2])
    );
}
