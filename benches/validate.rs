//! Benchmark: validate a directory of plugins in one process (discovery, loading, every check,
//! JSON report), as `hermes-plugins validate --format json DIR` does.
//!
//! `cargo bench --bench validate -- [DIR] [ITERATIONS]` (default: the Hermes 0.19.0 corpus next
//! to the checkout, else fixtures/; 50 iterations). Prints min / median / max wall time. Peak
//! RSS of the real binary is measured separately with `/usr/bin/time -v` (see docs/benchmarks.md).

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

fn main() {
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
}
