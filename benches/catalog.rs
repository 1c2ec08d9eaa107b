//! Benchmark: `catalog resolve-all` of 30 synthetic entries (each alone, then together)
//! against running `uv pip compile` 0.12.5 once per entry, on the same loopback index, warm
//! caches, the same interpreter. Target: ≥ 5× faster.
//!
//! `cargo bench --bench catalog -- [ITERATIONS]` (default 5). uv comes from
//! `HERMES_PLUGINS_UV`, else `uv` on PATH.
//!
//! `cargo bench --bench catalog -- --scale [N]`: a generated catalog of N entries (default
//! 2 000, a ~16 MiB feed) through `catalog check`, `search` and the feed-file cache, then end
//! to end through the binary: `catalog update` of the feed from a loopback server (fetched,
//! then revalidated), `search` over its copy, and the pull-request job
//! (`scripts/catalog-action.sh`) on a git catalog where one entry changed.

#[path = "../tests/common/feed.rs"]
#[allow(dead_code)]
mod feed;
#[path = "../tests/common/index.rs"]
mod index;

#[path = "support/mod.rs"]
mod support;
use support::python;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use index::{TestIndex, Wheel};

const HOST: &str = "https://git.example.org/";
const ENTRIES: usize = 30;

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

/// `--scale [N]`: a generated catalog of N entries (default 2 000) whose feed is about 16 MiB,
/// upstream's feed cap: `catalog check` of the directory, `search` over it, unpacking the feed
/// file into the catalog cache (what `--catalog feed.json` and `catalog update` do), and one
/// changed entry checked alone (what a pull request's review reads first). Median of 3.
fn scale(entries: usize) {
    use hermes_plugins::catalog;
    use hermes_plugins::source::remote_catalog::{self, Location};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("plugin-catalog");
    std::fs::create_dir(&dir).unwrap();
    // ~8 KiB per entry: a long description and known issues, as real entries grow.
    let filler =
        "A sentence a reviewer reads about what the plugin does and does not do. ".repeat(55);
    let mut feed_entries = Vec::new();
    for i in 0..entries {
        let name = format!("plugin-{i:05}");
        let sha = format!("{:040x}", i as u128 * 7919 + 1);
        let text = format!(
            "name: {name}\nrepo: https://github.com/example-{}/{name}\nsha: \"{sha}\"\ndescription: \"{filler}\"\nmaintainer: example\ncategory: tools\nversion: \"1.{i}\"\ntags: [bench, t{}]\ncapabilities:\n  provides_tools: [{name}_run, {name}_stop]\n  requires_env: [KEY_{i}]\n",
            i % 97,
            i % 13
        );
        std::fs::write(dir.join(format!("{name}.yaml")), &text).unwrap();
        feed_entries.push(serde_json::json!({
            "name": name, "repo": format!("https://github.com/example-{}/{name}", i % 97),
            "sha": sha, "description": filler, "maintainer": "example", "category": "tools",
            "version": format!("1.{i}"), "tags": ["bench"],
            "capabilities": {"provides_tools": [format!("{name}_run")], "requires_env": [format!("KEY_{i}")]},
        }));
    }
    std::fs::write(dir.join("removed.yaml"), "removed: []\n").unwrap();
    let feed = tmp.path().join("plugin-catalog.json");
    let body = serde_json::json!({"entries": feed_entries, "removed": []}).to_string();
    std::fs::write(&feed, &body).unwrap();
    println!(
        "catalog of {entries} entries; feed {:.1} MiB",
        body.len() as f64 / (1024.0 * 1024.0)
    );
    let median = |f: &mut dyn FnMut()| {
        let mut times: Vec<Duration> = (0..3)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect();
        times.sort();
        times[1]
    };
    let mut loaded = Vec::new();
    let check = median(&mut || {
        let outcome = catalog::check(std::slice::from_ref(&dir));
        assert!(!outcome.fails(false));
        loaded = outcome.loaded().cloned().collect();
    });
    let search = median(&mut || {
        std::hint::black_box(catalog::search(&loaded, "plugin-01999_run"));
    });
    let cache = tmp.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let unpack = median(&mut || {
        let _ = std::fs::remove_dir_all(&cache);
        std::fs::create_dir(&cache).unwrap();
        remote_catalog::materialize(
            &Location::FeedFile(feed.clone()),
            &cache,
            remote_catalog::DEFAULT_TTL,
            true,
        )
        .unwrap();
    });
    let unchanged = median(&mut || {
        remote_catalog::materialize(
            &Location::FeedFile(feed.clone()),
            &cache,
            remote_catalog::DEFAULT_TTL,
            false,
        )
        .unwrap();
    });
    let one = dir.join("plugin-01000.yaml");
    let changed = median(&mut || {
        std::hint::black_box(catalog::check(std::slice::from_ref(&one)));
    });
    for (what, t) in [
        ("catalog check (all entries)", check),
        ("search (over loaded entries)", search),
        ("feed file unpacked (changed)", unpack),
        ("feed file, unchanged (stamp)", unchanged),
        ("one changed entry checked", changed),
    ] {
        println!("{what:<32} {:>9.1} ms", t.as_secs_f64() * 1000.0);
    }
    end_to_end(tmp.path(), &body, &median);
}

/// The scale catalog through the binary, each a whole process: `catalog update` of the feed
/// served on loopback (a fresh home: fetched and unpacked; again with the copy expired: one
/// `304`), `search` over the copy, `catalog check` of the directory, and the pull-request
/// job on the catalog as a git repository in which one entry's pin moved.
fn end_to_end(root: &Path, body: &str, median: &dyn Fn(&mut dyn FnMut()) -> Duration) {
    let bin = env!("CARGO_BIN_EXE_hermes-plugins");
    let server = feed::FeedServer::start(body);
    let run = |args: &[&str], home: &Path, env: &[(&str, &str)]| {
        let mut c = Command::new(bin);
        c.args(["--home"])
            .arg(home)
            .args(args)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env_remove("HERMES_PLUGINS_CATALOG");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let mut n = 0;
    let fresh = median(&mut || {
        n += 1;
        let home = root.join(format!("home-{n}"));
        run(&["catalog", "update", "--catalog", &server.url], &home, &[]);
    });
    let home = root.join("home-1");
    let revalidated = median(&mut || {
        run(&["catalog", "update", "--catalog", &server.url], &home, &[]);
    });
    assert!(server.answers().contains(&304), "{:?}", server.answers());
    let search = median(&mut || {
        run(
            &["search", "plugin-01999_run", "--catalog", &server.url],
            &home,
            &[],
        );
    });
    let check = median(&mut || {
        let dir = root.join("plugin-catalog");
        run(&["catalog", "check", dir.to_str().unwrap()], &home, &[]);
    });

    // The pull request: the catalog committed on `main`, one entry re-pinned on a branch to a
    // real commit of a repository in a local mirror (through HERMES_PLUGINS_GIT_INSTEAD_OF).
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .current_dir(root)
            .args(["-c", "user.name=b", "-c", "user.email=b@example.org"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let name = "plugin-01000";
    let mirror = root.join("mirror");
    let repo = mirror.join(format!("example-{}", 1000 % 97)).join(name);
    let base_sha = commit_plugin(&repo, name, &[]);
    let entry = root.join("plugin-catalog").join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&entry).unwrap();
    let fake_sha = format!("{:040x}", 1000u128 * 7919 + 1);
    std::fs::write(&entry, text.replace(&fake_sha, &base_sha)).unwrap();
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "plugin-catalog"]);
    git(&["commit", "-q", "-m", "catalog"]);
    git(&["checkout", "-q", "-b", "pr"]);
    // The plugin's next commit, and the entry re-pinned to it.
    std::fs::write(
        repo.join("plugin.yaml"),
        format!("name: {name}\nversion: 1.1.0\ndescription: bench\nmanifest_version: 2\nrequires_env:\n  - KEY_1000\nprovides_tools:\n  - {name}_run\n  - {name}_stop\n"),
    )
    .unwrap();
    let tool = |t: &str| {
        format!(
            "    ctx.register_tool(name=\"{name}_{t}\", toolset=\"bench\", schema={{\"name\": \"{name}_{t}\", \"description\": \"{t}\", \"parameters\": {{\"type\": \"object\", \"properties\": {{}}}}}}, handler=_handle)\n"
        )
    };
    std::fs::write(
        repo.join("__init__.py"),
        format!(
            "def _handle(args, **kwargs):\n    return \"ok\"\n\n\ndef register(ctx):\n{}{}",
            tool("run"),
            tool("stop")
        ),
    )
    .unwrap();
    let in_repo = |args: &[&str]| {
        let out = Command::new("git")
            .current_dir(&repo)
            .args(["-c", "user.name=b", "-c", "user.email=b@example.org"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    in_repo(&["commit", "-q", "-am", "v2"]);
    let sha = in_repo(&["rev-parse", "HEAD"]);
    std::fs::write(&entry, text.replace(&fake_sha, &sha)).unwrap();
    git(&["commit", "-q", "-am", "re-pin one entry"]);
    let instead_of = format!("https://github.com/=file://{}/", mirror.display());
    let out_dir = root.join("review-out");
    let action = median(&mut || {
        let out = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/catalog-action.sh"))
            .current_dir(root)
            .env("CATALOG", "plugin-catalog")
            .env("BASE_REF", "main")
            .env("CORE", "")
            .env("OUT", &out_dir)
            .env("HERMES_PLUGINS_BIN", bin)
            .env("HERMES_HOME", root.join("home-action"))
            .env("HERMES_PLUGINS_GIT_INSTEAD_OF", &instead_of)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "catalog-action.sh: {}{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(out_dir.join("review.md")).unwrap_or_default()
        );
    });
    let review = std::fs::read_to_string(out_dir.join("review.md")).unwrap();
    assert!(review.contains(name), "{review}");
    println!("through the binary (whole processes):");
    for (what, t) in [
        ("catalog update (fetched, unpacked)", fresh),
        ("catalog update (expired, 304)", revalidated),
        ("search (the feed's copy)", search),
        ("catalog check (all entries)", check),
        ("pull-request job, 1 entry changed", action),
    ] {
        println!("{what:<36} {:>9.1} ms", t.as_secs_f64() * 1000.0);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    if let Some(first) = std::env::args().nth(1)
        && first == "--scale"
    {
        let n = args.nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
        scale(n);
        return;
    }
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
