//! Benchmark: the generation commands, release build, warm caches, loopback index.
//!
//! 1. `enable` of a plugin with 10 dependencies (resolve + venv + install + publish) against
//!    `uv venv --relocatable` + `uv pip install --require-hashes` of the same lock (uv 0.12.5
//!    from `HERMES_PLUGINS_UV`, else `uv` on PATH). Target ≤ 1.3×.
//! 2. A no-op `sync` (nothing changed). Target < 100 ms. Then a grant-only change (target
//!    ≤ 3 × the no-op sync, and published with the index unreachable).
//! 3. `generations rollback` between two generations, with a small (1 package) and a large
//!    (40 packages) environment. Target < 20 ms and flat in environment size.
//! 4. `exec -- true` and `exec -- python3 -c pass` against the same commands run directly.
//! 5. `install` of a plugin of 99 000 files.
//! 6. `install pypi:NAME --enable` of a plugin distribution with 10 dependencies (resolve,
//!    fetch and validate the wheel, venv, install, publish) against `uv venv` + `uv pip install
//!    NAME` (resolving too) from the same index. Target ≤ 1.1×. Each timed run starts after a
//!    `sync`; the ratio is given of the medians and as the median of each run against the uv
//!    run right after it (this machine's speed drifts from minute to minute).
//!
//! `cargo bench --bench generations -- [ITERATIONS]` (default 11; `BENCH_ONLY=pypi` runs 6
//! alone). Every run is a process, as Hermes runs them.

#[path = "../tests/common/index.rs"]
mod index;

#[path = "support/mod.rs"]
mod support;
use support::python;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use index::{TestIndex, Wheel};

const NOW: &str = "2026-12-01T00:00:00Z";

fn hp(home: &Path, url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hermes-plugins"));
    cmd.env("HERMES_HOME", home)
        .env("HERMES_PLUGINS_CATALOG", "none")
        .env("HERMES_PLUGINS_PYTHON", python())
        .env("HERMES_PLUGINS_NOW", NOW)
        .env("HERMES_PLUGINS_INDEX_URL", url)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("HERMES_PLUGINS_CORE")
        .env("HERMES_PLUGINS_NO_CORE", "1")
        // The user's cache (interpreter facts every home shares), beside the home.
        .env(
            "HERMES_PLUGINS_CACHE_DIR",
            home.with_file_name("user-cache"),
        )
        .args(args);
    cmd
}

fn must(mut cmd: Command) -> std::process::Output {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn plugin(dir: &Path, name: &str, deps: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(&p).unwrap();
    let list: String = deps.iter().map(|d| format!("  - \"{d}\"\n")).collect();
    std::fs::write(
        p.join("plugin.yaml"),
        format!("name: {name}\nversion: 1.0.0\ndescription: bench\nmanifest_version: 2\npython_dependencies:\n{list}"),
    )
    .unwrap();
    std::fs::write(p.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
    p
}

/// What [`enable_against_uv`] works on.
struct Bench<'a> {
    home: &'a Path,
    url: &'a str,
    uv: &'a Path,
    scratch: &'a Path,
    plugin: &'a str,
    /// Another installed plugin, toggled to move the measured plugin's generation out of
    /// reach of `generations gc` between runs.
    other: &'a str,
    iterations: usize,
}

/// `enable PLUGIN` as a fresh publication (resolve, venv, install, publish; warm caches)
/// against `uv venv` + `uv pip install` of the same lock, interleaved so both see the same
/// machine. An earlier generation with the same lock would be reused (hard links, ~10 ms),
/// so after each run the measured generation is collected: disable, toggle `other`, `gc`
/// (which keeps only the current generation and its parent). Then the reuse itself.
fn enable_against_uv(b: &Bench<'_>) {
    let (home, url, plugin) = (b.home, b.url, b.plugin);
    let collect = || {
        must(hp(home, url, &["disable", plugin]));
        must(hp(home, url, &["enable", b.other, "--yes-deps"]));
        must(hp(home, url, &["disable", b.other]));
        must(hp(home, url, &["generations", "gc"]));
    };
    must(hp(home, url, &["enable", plugin, "--yes-deps"])); // warms our caches
    let generation: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.join("pm/current/generation.json")).unwrap(),
    )
    .unwrap();
    collect();
    let mut requirements = String::new();
    for p in generation["lock"]["packages"].as_array().unwrap() {
        requirements.push_str(&format!(
            "{}=={} --hash=sha256:{}\n",
            p["name"].as_str().unwrap(),
            p["version"].as_str().unwrap(),
            p["sha256"].as_str().unwrap()
        ));
    }
    let req = b.scratch.join(format!("{plugin}.lock.txt"));
    std::fs::write(&req, requirements).unwrap();
    let uv_cache = b.scratch.join("uv-cache");
    let venv = b.scratch.join("uv-venv");
    let uv_run = || {
        let _ = std::fs::remove_dir_all(&venv);
        settle();
        let start = Instant::now();
        uv_venv(b.uv, &uv_cache, &venv);
        let mut c = Command::new(b.uv);
        c.env("NO_PROXY", "127.0.0.1,localhost")
            .args([
                "pip",
                "install",
                "--no-config",
                "-q",
                "--require-hashes",
                "--no-deps",
            ])
            .args(["--index-url", url])
            .arg("--cache-dir")
            .arg(&uv_cache)
            .arg("--python")
            .arg(venv.join("bin/python"))
            .arg("-r")
            .arg(&req);
        must(c);
        start.elapsed()
    };
    uv_run(); // warms uv's cache
    let (mut enable, mut theirs, mut reuse) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..b.iterations {
        let mut cmd = hp(home, url, &["enable", plugin, "--yes-deps"]);
        // One module's debug line says whether a venv was carried over.
        cmd.env(
            "HERMES_PLUGINS_LOG",
            "hermes_plugins::generation::build=debug",
        );
        let start = Instant::now();
        let out = must(cmd);
        enable.push(start.elapsed());
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            !log.contains("carried over"),
            "a fresh publication was asked for"
        );
        assert!(
            log.contains("built ahead is this generation's"),
            "the environment was not built ahead: {log}"
        );
        theirs.push(uv_run());
        must(hp(home, url, &["disable", plugin]));
        let start = Instant::now();
        must(hp(home, url, &["enable", plugin, "--yes-deps"]));
        reuse.push(start.elapsed());
        collect();
    }
    for t in [&mut enable, &mut theirs, &mut reuse] {
        t.sort();
    }
    let deps = generation["lock"]["packages"].as_array().unwrap().len();
    println!("enable of a plugin with {deps} dependencies:");
    line("hermes-plugins enable (resolve+venv+install)", &enable);
    line("uv venv + uv pip install (same lock)", &theirs);
    line("enable after disable (earlier venv reused)", &reuse);
    println!(
        "  ratio (median, ours / uv): {:.2}",
        ms(enable[enable.len() / 2]) / ms(theirs[theirs.len() / 2])
    );
}

/// `uv venv --relocatable` at `venv` for the bench's interpreter: the first half of uv's side
/// of every comparison with it.
fn uv_venv(uv: &Path, cache: &Path, venv: &Path) {
    let mut c = Command::new(uv);
    c.args(["venv", "--relocatable", "--no-config", "-q"])
        .arg("--python")
        .arg(python())
        .arg("--cache-dir")
        .arg(cache)
        .arg(venv);
    must(c);
}

fn time(iterations: usize, mut run: impl FnMut() -> Duration) -> Vec<Duration> {
    let mut t: Vec<Duration> = (0..iterations).map(|_| run()).collect();
    t.sort();
    t
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn line(name: &str, t: &[Duration]) {
    println!(
        "  {name:44} min {:7.1} ms  median {:7.1} ms  max {:7.1} ms",
        ms(t[0]),
        ms(t[t.len() / 2]),
        ms(t[t.len() - 1])
    );
}

fn main() {
    let iterations: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(11);
    let uv = std::env::var_os("HERMES_PLUGINS_UV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("uv"));
    let mut wheels = Vec::new();
    for i in 0..40 {
        wheels.push(Wheel::new(
            &format!("dep{i:02}"),
            "1.0.0",
            "2025-01-01T00:00:00Z",
        ));
    }
    wheels.push(pypi_plugin_wheel());
    let server = TestIndex::start(&wheels);
    let url = server.url();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    if std::env::var("BENCH_ONLY").as_deref() == Ok("pypi") {
        pypi_install_against_uv(&home, &url, &uv, tmp.path(), iterations);
        return;
    }
    let ten: Vec<String> = (0..10).map(|i| format!("dep{i:02}>=1")).collect();
    let forty: Vec<String> = (0..40).map(|i| format!("dep{i:02}>=1")).collect();
    let ten_dir = plugin(tmp.path(), "ten", &ten);
    let three: Vec<String> = (0..3).map(|i| format!("dep{i:02}>=1")).collect();
    let three_dir = plugin(tmp.path(), "three", &three);
    let one_dir = plugin(tmp.path(), "one", &["dep00>=1".to_string()]);
    let forty_dir = plugin(tmp.path(), "forty", &forty);
    for dir in [&ten_dir, &three_dir, &one_dir, &forty_dir] {
        must(hp(&home, &url, &["install", dir.to_str().unwrap()]));
    }
    println!("generations: {iterations} iterations, release, warm caches, loopback index");
    if let Ok(filter) = std::env::var("BENCH_TRACE") {
        must(hp(&home, &url, &["enable", "ten", "--yes-deps"]));
        must(hp(&home, &url, &["disable", "ten"]));
        let out = must({
            let mut c = hp(&home, &url, &["enable", "ten", "--yes-deps"]);
            c.env("HERMES_PLUGINS_LOG", filter);
            c
        });
        std::fs::write("/tmp/enable-trace.log", &out.stderr).unwrap();
        must(hp(&home, &url, &["disable", "ten"]));
        println!("trace written to /tmp/enable-trace.log");
    }

    // 1. enable vs uv venv + uv pip install of the same lock, for a small plugin (3
    //    dependencies) and a larger one (10).
    for name in ["three", "ten"] {
        enable_against_uv(&Bench {
            home: &home,
            url: &url,
            uv: &uv,
            scratch: tmp.path(),
            plugin: name,
            other: "one",
            iterations,
        });
    }
    must(hp(&home, &url, &["enable", "ten", "--yes-deps"]));

    // 2. no-op sync.
    let sync = time(iterations, || {
        let start = Instant::now();
        let out = must(hp(&home, &url, &["--json", "sync"]));
        let t = start.elapsed();
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"published\": false"));
        t
    });
    println!("no-op sync:");
    line("hermes-plugins sync", &sync);

    // 2b. A grant-only change (the lock stays: no resolution, no install, the venv carried
    //     over by hard links) against the no-op sync; once more with the index unreachable.
    let capable = plugin(tmp.path(), "capable", &[]);
    std::fs::write(
        capable.join("plugin.yaml"),
        "name: capable\nversion: 1.0.0\ndescription: bench\nmanifest_version: 2\ncapabilities:\n  - tools.override\n",
    )
    .unwrap();
    must(hp(
        &home,
        &url,
        &["install", capable.to_str().unwrap(), "--enable"],
    ));
    let mut flip = ["--grant", "--revoke"].into_iter().cycle();
    let grant = time(iterations, || {
        let flag = flip.next().unwrap();
        let start = Instant::now();
        let out = must(hp(
            &home,
            &url,
            &["--json", "capabilities", "capable", flag, "tools.override"],
        ));
        let t = start.elapsed();
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"published\": true"));
        t
    });
    // The same index answering 500 to everything (a different URL would be another
    // environment, rightly resolved again).
    server.set_fault(index::Fault::Status(500));
    let offline = must(hp(
        &home,
        &url,
        &[
            "--json",
            "capabilities",
            "capable",
            flip.next().unwrap(),
            "tools.override",
        ],
    ));
    server.set_fault(index::Fault::None);
    assert!(String::from_utf8_lossy(&offline.stdout).contains("\"published\": true"));
    println!("grant-only change (a new generation, same lock):");
    line("hermes-plugins capabilities --grant/--revoke", &grant);
    println!(
        "  ratio (median, grant / no-op sync): {:.2}; with the index unreachable: published",
        ms(grant[grant.len() / 2]) / ms(sync[sync.len() / 2])
    );

    // 3. rollback between two generations: small and large environments.
    let rollback_pair = |plugin: &str| {
        must(hp(&home, &url, &["disable", "ten"]));
        must(hp(&home, &url, &["enable", plugin, "--yes-deps"]));
        let a = current(&home);
        must(hp(&home, &url, &["disable", plugin]));
        must(hp(&home, &url, &["enable", plugin, "--yes-deps"]));
        let b = current(&home);
        let mut flip = [a, b].into_iter().cycle();
        let t = time(iterations, || {
            let target = flip.next().unwrap().to_string();
            let start = Instant::now();
            must(hp(&home, &url, &["generations", "rollback", &target]));
            start.elapsed()
        });
        must(hp(&home, &url, &["disable", plugin]));
        t
    };
    let small = rollback_pair("one");
    let large = rollback_pair("forty");
    println!("rollback:");
    line("generations rollback (1 package)", &small);
    line("generations rollback (40 packages)", &large);

    // 4. `exec` overhead: lease, runtime check, exec — against running the command directly;
    //    and with Python, where the runtime's sitecustomize is imported too.
    let direct = |program: &Path, args: &[&str]| {
        time(iterations.max(21), || {
            let start = Instant::now();
            let status = Command::new(program).args(args).status().expect("runs");
            assert!(status.success());
            start.elapsed()
        })
    };
    let through_exec = |program: &Path, args: &[&str]| {
        let mut all = vec!["exec", "--", program.to_str().unwrap()];
        all.extend_from_slice(args);
        time(iterations.max(21), || {
            let start = Instant::now();
            must(hp(&home, &url, &all));
            start.elapsed()
        })
    };
    let truth = Path::new("/bin/true");
    let plain_true = direct(truth, &[]);
    let exec_true = through_exec(truth, &[]);
    let plain_python = direct(&python(), &["-c", "pass"]);
    let exec_python = through_exec(&python(), &["-c", "pass"]);
    println!("exec (a process per run):");
    line("true", &plain_true);
    line("hermes-plugins exec -- true", &exec_true);
    line("python3 -c pass", &plain_python);
    line("hermes-plugins exec -- python3 -c pass", &exec_python);

    // 5. install of a plugin with 99 000 files (just under the 100 000-entry walk limit: more is
    //    refused as unexamined): fetch, store copy, validation, NAR hash.
    let many = tmp.path().join("many");
    for i in 0..99_000 {
        let dir = many.join(format!("data/d{:03}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    std::fs::write(
        many.join("plugin.yaml"),
        "name: many\nversion: \"1\"\ndescription: a plugin of 99 000 files\n",
    )
    .unwrap();
    std::fs::write(many.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
    let installs = time(3.min(iterations), || {
        let start = Instant::now();
        must(hp(&home, &url, &["install", many.to_str().unwrap()]));
        let t = start.elapsed();
        must(hp(&home, &url, &["remove", "many"]));
        must(hp(&home, &url, &["generations", "gc", "--keep", "1"]));
        t
    });
    println!("install of a plugin with 99 000 files:");
    line("hermes-plugins install (copy, validate, store)", &installs);

    // 6. install pypi: against uv venv + uv pip install of the same distribution.
    pypi_install_against_uv(&home, &url, &uv, tmp.path(), iterations);
}

/// `hermes-bench-plugin` 1.0.0: the entry point `bench`, ten dependencies.
fn pypi_plugin_wheel() -> Wheel {
    let mut wheel = Wheel::new("hermes-bench-plugin", "1.0.0", "2025-01-01T00:00:00Z")
        .with_file(
            "hermes_bench_plugin/plugin.py",
            b"def register(ctx):\n    pass\n".to_vec(),
        )
        .with_file(
            "hermes_bench_plugin-1.0.0.dist-info/entry_points.txt",
            b"[hermes_agent.plugins]\nbench = hermes_bench_plugin.plugin\n".to_vec(),
        );
    for i in 0..10 {
        wheel = wheel.requires(&format!("dep{i:02}>=1"));
    }
    wheel
}

/// `install pypi:hermes-bench-plugin --enable` as a fresh publication (warm caches: the
/// generation holding it is collected after each run, so no earlier venv is reused) against
/// `uv venv` + `uv pip install hermes-bench-plugin` from the same index, interleaved.
fn pypi_install_against_uv(home: &Path, url: &str, uv: &Path, scratch: &Path, iterations: usize) {
    // Out of reach of the next run's reuse: gc keeps the current generation and its parent,
    // so two more publications (another plugin on and off) come first.
    let collect = || {
        must(hp(home, url, &["remove", "bench"]));
        must(hp(home, url, &["enable", "pypi-other"]));
        must(hp(home, url, &["disable", "pypi-other"]));
        must(hp(home, url, &["generations", "gc"]));
    };
    let install_cmd = || {
        hp(
            home,
            url,
            &[
                "install",
                "pypi:hermes-bench-plugin",
                "--enable",
                "--yes-deps",
            ],
        )
    };
    let install = || {
        let mut cmd = install_cmd();
        cmd.env(
            "HERMES_PLUGINS_LOG",
            "hermes_plugins::generation::build=debug",
        );
        settle();
        let start = Instant::now();
        let out = must(cmd);
        let t = start.elapsed();
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            !log.contains("carried over"),
            "a fresh publication was asked for"
        );
        assert!(
            log.contains("built ahead is this generation's"),
            "the environment was not built ahead: {log}"
        );
        collect();
        t
    };
    let other = plugin(scratch, "pypi-other", &[]);
    must(hp(home, url, &["install", other.to_str().unwrap()]));
    let uv_cache = scratch.join("uv-cache-pypi");
    let venv = scratch.join("uv-venv-pypi");
    let uv_run = || {
        let _ = std::fs::remove_dir_all(&venv);
        settle();
        let start = Instant::now();
        uv_venv(uv, &uv_cache, &venv);
        let mut c = Command::new(uv);
        c.env("NO_PROXY", "127.0.0.1,localhost")
            .args(["pip", "install", "--no-config", "-q"])
            .args(["--index-url", url])
            .arg("--cache-dir")
            .arg(&uv_cache)
            .arg("--python")
            .arg(venv.join("bin/python"))
            .arg("hermes-bench-plugin");
        must(c);
        start.elapsed()
    };
    install(); // warms our caches
    uv_run(); // and uv's
    if let Ok(filter) = std::env::var("BENCH_TRACE") {
        let mut cmd = install_cmd();
        cmd.env("HERMES_PLUGINS_LOG", filter);
        std::fs::write("/tmp/pypi-install-trace.log", must(cmd).stderr).unwrap();
        collect();
        println!("trace written to /tmp/pypi-install-trace.log");
    }
    let (mut ours, mut theirs, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..iterations {
        let (a, b) = (install(), uv_run());
        ours.push(a);
        theirs.push(b);
        pairs.push(ms(a) / ms(b));
    }
    ours.sort();
    theirs.sort();
    pairs.sort_by(f64::total_cmp);
    println!("install of a plugin distribution with 10 dependencies from the index:");
    line("hermes-plugins install pypi:NAME --enable", &ours);
    line("uv venv + uv pip install NAME", &theirs);
    println!(
        "  ratio (median, ours / uv): {:.2}",
        ms(ours[ours.len() / 2]) / ms(theirs[theirs.len() / 2])
    );
    // Each of our runs against the uv run right after it: on a machine whose speed drifts
    // (other tenants, the disk), neighbours in time compare like with like.
    println!(
        "  ratio (median of each run against the uv run after it): {:.2} (quartiles {:.2} – {:.2})",
        pairs[pairs.len() / 2],
        pairs[pairs.len() / 4],
        pairs[pairs.len() * 3 / 4]
    );
}

/// Writes out what the previous run (and its clean-up) left dirty, so that each timed run
/// starts on a quiet disk: on a file system mounted with `discard`, removing a venv queues
/// work that the next run's first fsync would otherwise wait for — whichever tool that is.
fn settle() {
    let _ = Command::new("sync").status();
}

fn current(home: &Path) -> u64 {
    std::fs::read_link(home.join("pm/current"))
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}
