//! Benchmark: validate a directory of plugins in one process (discovery, loading, every check,
//! JSON report), as `hermes-plugins validate --format json DIR` does.
//!
//! `cargo bench --bench validate -- [DIR] [ITERATIONS]` (default: the Hermes 0.19.0 corpus next
//! to the checkout, else fixtures/; 50 iterations). Prints min / median / max wall time. Peak
//! RSS of the real binary is measured separately with `/usr/bin/time -v` (see docs/benchmarks.md).
//!
//! `cargo bench --bench validate -- --parsers` instead measures the YAML and JSON readers and a
//! whole manifest load on documents of 10k, 40k and 160k items (lists and mappings): time per
//! item must stay flat (linear readers; hostile manifests cannot make them quadratic).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hermes_plugins::check;
use hermes_plugins::package::{self, Mode};

fn default_dir() -> PathBuf {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = repo.join("../shared/corpus/hermes-0.19.0-bundled");
    if corpus.is_dir() {
        corpus
    } else {
        repo.join("fixtures")
    }
}

fn validate_once(dir: &std::path::Path) -> usize {
    let tree = package::load_path(dir, Mode::Validate).expect("readable directory");
    let cx = check::Context::default();
    let findings: usize = check::run_all(&tree.packages, &cx)
        .into_iter()
        .map(|o| o.expect("no probe in the benchmark").findings.len())
        .sum();
    std::hint::black_box(tree.packages.len()) + findings
}

/// Median time of `f` over a few runs.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// The reader benchmark (`--parsers`).
fn parsers() {
    use hermes_plugins::located::{Limits, json, yaml};
    let limits = Limits {
        max_nodes: 10_000_000,
        ..Limits::default()
    };
    println!("readers: median of 5 runs; per-item time must stay flat as documents grow");
    for items in [10_000usize, 40_000, 160_000] {
        let list: String = (0..items).map(|i| format!("  - tool_{i}\n")).collect();
        let yaml_list = format!("provides_tools:\n{list}");
        let yaml_map: String = (0..items)
            .map(|i| format!("k{i}: {{type: string}}\n"))
            .collect();
        let json_map = format!(
            "{{{}}}",
            (0..items)
                .map(|i| format!("\"k{i}\": {{\"a\": 1}}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let dir = tempfile::tempdir().unwrap();
        let manifest = format!("name: p\nversion: \"1\"\ndescription: d\nprovides_hooks:\n{list}");
        let deps_dir = tempfile::tempdir().unwrap();
        let deps: String = (0..items).map(|i| format!("  - pkg{i}>=1\n")).collect();
        std::fs::write(
            deps_dir.path().join("plugin.yaml"),
            format!("name: p\nversion: \"1\"\ndescription: d\npython_dependencies:\n{deps}"),
        )
        .unwrap();
        std::fs::write(
            deps_dir.path().join("__init__.py"),
            "def register(ctx):\n    pass\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("plugin.yaml"), &manifest).unwrap();
        std::fs::write(
            dir.path().join("__init__.py"),
            "def register(ctx):\n    pass\n",
        )
        .unwrap();
        let mut rows = vec![
            (
                "yaml list",
                median(5, || {
                    std::hint::black_box(yaml::parse(&yaml_list, limits).unwrap());
                }),
            ),
            (
                "yaml mapping",
                median(5, || {
                    std::hint::black_box(yaml::parse(&yaml_map, limits).unwrap());
                }),
            ),
            (
                "json object",
                median(5, || {
                    std::hint::black_box(json::parse(&json_map, limits).unwrap());
                }),
            ),
        ];
        // Manifests are limited to 1 MiB (and 100 000 values): only the sizes that load.
        if items <= 40_000 {
            rows.push((
                "manifest (provides_hooks)",
                median(5, || {
                    let candidate = package::Candidate {
                        dir: dir.path().to_path_buf(),
                        category: None,
                        manifest: package::ManifestKind::Native {
                            file: "plugin.yaml",
                            shadowed_yml: false,
                            shadowed_json: false,
                        },
                    };
                    std::hint::black_box(package::load(&candidate, Mode::Validate));
                }),
            ));
        }
        // The whole validation of a manifest listing that many dependencies (each parsed as
        // PEP 508 and checked): 68k took 14 s while duplicates were found by a linear search.
        if items <= 40_000 {
            rows.push((
                "validate (python_deps)",
                median(3, || {
                    std::hint::black_box(validate_once(deps_dir.path()));
                }),
            ));
        }
        for (what, t) in rows {
            println!(
                "{items:>7} items  {what:<24} {:>9.2} ms  {:>7.3} µs/item",
                t.as_secs_f64() * 1000.0,
                t.as_secs_f64() * 1e6 / items as f64
            );
        }
    }
}

fn main() {
    if std::env::args().any(|a| a == "--parsers") {
        parsers();
        return;
    }
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let dir = args.first().map(PathBuf::from).unwrap_or_else(default_dir);
    let iterations: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(50);
    let tree = package::load_path(&dir, Mode::Validate).expect("readable directory");
    println!(
        "validate {} ({} packages), {iterations} iterations",
        dir.display(),
        tree.packages.len()
    );
    validate_once(&dir); // warm the page cache
    let mut times: Vec<Duration> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            validate_once(&dir);
            start.elapsed()
        })
        .collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "wall time per run: min {:.2} ms, median {:.2} ms, max {:.2} ms",
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );
    processes(&dir, iterations.min(21));
}

/// The binary as a process, JSON report: every package analysed (`--no-cache`) against a
/// warm cache (nothing changed), interleaved; then one package changed (a copy of the tree
/// with one `.py` file touched up), which is what catalog CI sees on a pull request.
fn processes(dir: &std::path::Path, runs: usize) {
    use std::process::Command;
    let cache = tempfile::tempdir().unwrap();
    let run = |dir: &std::path::Path, extra: &[&str]| {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_hermes-plugins"))
            .args(["validate", "--format", "json"])
            .arg(dir)
            .args(extra)
            .env("HERMES_PLUGINS_CACHE_DIR", cache.path())
            .output()
            .expect("runs");
        assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
        (start.elapsed(), out.stdout)
    };
    let (_, fresh) = run(dir, &["--no-cache"]);
    let (_, cold) = run(dir, &[]);
    assert_eq!(fresh, cold, "the cache changed the report");
    let (mut full, mut warm) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        full.push(run(dir, &["--no-cache"]).0);
        let (t, out) = run(dir, &[]);
        assert_eq!(out, fresh, "a cached report differs");
        warm.push(t);
    }
    // One package changed: a copy of the tree (new paths, so all cold once), warmed, then one
    // file of its first package with Python edited before each run.
    let copy = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", dir.display()))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success());
    let tree = package::load_path(copy.path(), Mode::Validate).unwrap();
    let edited = tree
        .packages
        .iter()
        .filter_map(|p| p.root.as_ref())
        .flat_map(|r| {
            r.tree()
                .files_with_extension("py")
                .map(|e| e.path.clone())
                .collect::<Vec<_>>()
        })
        .next()
        .expect("a package with Python");
    run(copy.path(), &[]);
    let mut one = Vec::new();
    for i in 0..runs {
        let mut text = std::fs::read_to_string(&edited).unwrap();
        text.push_str(&format!("\n# edit {i}\n"));
        std::fs::write(&edited, text).unwrap();
        one.push(run(copy.path(), &[]).0);
    }
    for t in [&mut full, &mut warm, &mut one] {
        t.sort();
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = |t: &[Duration]| ms(t[t.len() / 2]);
    println!("as a process (JSON report), {runs} interleaved runs, medians:");
    println!(
        "  every package analysed (--no-cache)   {:8.1} ms",
        median(&full)
    );
    println!(
        "  warm cache, nothing changed           {:8.1} ms",
        median(&warm)
    );
    println!(
        "  warm cache, one package changed       {:8.1} ms",
        median(&one)
    );
    println!(
        "  ratio (no cache / warm): {:.1}",
        median(&full) / median(&warm)
    );
}
