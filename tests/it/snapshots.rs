//! Whole outputs, human and JSON, of every command on one home, as snapshots
//! (`tests/it/snapshots/*.snap`, insta): what a user sees, all of it, so that a change to any
//! line shows up in review. Paths, ports, digests, commits, times and durations are replaced
//! by placeholders (`[TMP]`, `[INDEX]`, `[SHA256]`, …) so the snapshots hold on any machine.
//!
//! A change to an output is accepted with `cargo insta review` (or `INSTA_UPDATE=always cargo
//! test --test it snapshots::`, then read the diff); CI never writes snapshots.

use crate::common;

use common::world::*;

/// One run as a user reads it: the command line, the exit status, stdout and stderr.
fn transcript(w: &World, args: &[&str]) -> String {
    let (code, out, err) = w.run(args);
    let code = code.map_or_else(|| "signal".to_string(), |c| c.to_string());
    format!(
        "$ hermes-plugins {}\nexit: {code}\n--- stdout\n{out}--- stderr\n{err}",
        args.join(" ")
    )
}

/// Placeholders for what differs between machines and runs.
fn filters(w: &World) -> Vec<(String, &'static str)> {
    let escape = |p: &std::path::Path| regex_escape(&p.display().to_string());
    let python = common::synthetic::python_executable();
    vec![
        (escape(w.tmp.path()), "[TMP]"),
        (escape(&common::user_cache()), "[CACHE]"),
        (escape(&common::repo()), "[REPO]"),
        (escape(std::path::Path::new(&python)), "[PYTHON]"),
        (r"python3\.\d+".to_string(), "python3.X"),
        (r"127\.0\.0\.1:\d+".to_string(), "[INDEX]"),
        // The agent package's directory, named by the digest of its files.
        (r"runtime/[0-9a-f]{16}".to_string(), "runtime/[AGENT]"),
        (
            format!(
                "\"version\": \"{}\"",
                regex_escape(env!("CARGO_PKG_VERSION"))
            ),
            "\"version\": \"[TOOL-VERSION]\"",
        ),
        (r"sha256-[A-Za-z0-9+/]{43}=".to_string(), "[SRI]"),
        (r"urn:uuid:[0-9a-f-]{36}".to_string(), "urn:uuid:[UUID]"),
        (r"\b[0-9a-f]{64}\b".to_string(), "[SHA256]"),
        (r"\b[0-9a-f]{40}\b".to_string(), "[COMMIT]"),
        // Abbreviated commits (12 digits), as the human outputs show them.
        (r"\b[0-9a-f]{12}\b".to_string(), "[REV]"),
        (
            r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})".to_string(),
            "[TIME]",
        ),
        (r"\b\d+(\.\d+)?(ms|µs|s)\b".to_string(), "[DURATION]"),
        (r"\b3\.\d+\.\d+\b".to_string(), "[PYVERSION]"),
        (
            r"hermes-plugins-[a-z-]*[A-Za-z0-9]{6}\b".to_string(),
            "[SCRATCH]",
        ),
    ]
}

fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Asserts the transcript of `args` against the snapshot `name`.
macro_rules! snap {
    ($w:expr, $name:expr, $args:expr) => {{
        let text = transcript($w, $args);
        let filters = filters($w);
        let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), *b)).collect();
        insta::with_settings!({ filters => filters, prepend_module_to_snapshot => false, omit_expression => true }, {
            insta::assert_snapshot!($name, text);
        });
    }};
}

#[test]
fn every_command_human_and_json() {
    let w = World::new();
    let repo = w.tmp.path().join("weather");
    git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib>=1"]);
    let url = file_url(&repo);
    let calculator = common::fixture("plugins/calculator");
    let calculator = calculator.to_str().unwrap();
    let catalog = common::fixture("catalog/good");
    let catalog = catalog.to_str().unwrap();

    // Validation.
    snap!(&w, "validate", &["validate", calculator]);
    snap!(
        &w,
        "validate-json",
        &["validate", "--format", "json", calculator]
    );
    snap!(
        &w,
        "validate-bad",
        &[
            "validate",
            &common::fixture("bad-native/manifest-empty")
                .display()
                .to_string()
        ]
    );

    // Installing, enabling, reading.
    snap!(&w, "install", &["install", &url, "--yes-deps"]);
    snap!(&w, "list", &["list"]);
    snap!(&w, "list-json", &["--json", "list"]);
    snap!(&w, "enable", &["enable", "weather", "--yes-deps"]);
    snap!(&w, "show", &["show", "weather"]);
    snap!(&w, "show-json", &["--json", "show", "weather"]);
    snap!(&w, "env", &["env"]);
    snap!(&w, "env-json", &["--json", "env"]);
    snap!(&w, "verify", &["verify"]);
    snap!(&w, "verify-json", &["--json", "verify"]);
    snap!(&w, "sbom", &["sbom"]);
    snap!(&w, "capabilities", &["capabilities", "weather"]);
    snap!(
        &w,
        "capabilities-json",
        &["--json", "capabilities", "weather"]
    );
    snap!(&w, "outdated", &["outdated"]);
    snap!(&w, "outdated-json", &["--json", "outdated"]);
    snap!(&w, "sync", &["sync"]);
    snap!(&w, "sync-json", &["--json", "sync"]);
    snap!(&w, "disable-json", &["--json", "disable", "weather"]);
    snap!(
        &w,
        "enable-dry-run-json",
        &["--json", "enable", "weather", "--dry-run"]
    );
    snap!(
        &w,
        "enable-json",
        &["--json", "enable", "weather", "--yes-deps"]
    );

    // A new commit: update, then back.
    commit(
        &repo,
        &plugin_files("weather", "1.1.0", &["weatherlib>=1"]),
        "weather 1.1.0",
    );
    snap!(&w, "update-dry-run", &["update", "weather", "--dry-run"]);
    snap!(&w, "update", &["update", "weather", "--yes"]);
    snap!(&w, "update-json", &["--json", "update", "--all", "--yes"]);
    snap!(&w, "generations", &["generations", "list"]);
    snap!(&w, "generations-json", &["--json", "generations", "list"]);
    snap!(&w, "rollback", &["generations", "rollback"]);
    snap!(&w, "rollback-json", &["--json", "generations", "rollback"]);
    snap!(&w, "gc", &["generations", "gc"]);
    snap!(&w, "gc-json", &["--json", "generations", "gc"]);
    snap!(&w, "rollback-collected", &["generations", "rollback", "4"]);

    // Resolution, configuration, packs, Nix.
    let weather_dir = w.tmp.path().join("weather-dir");
    for (path, text) in plugin_files("weather", "1.0.0", &["weatherlib>=1"]) {
        std::fs::create_dir_all(&weather_dir).unwrap();
        std::fs::write(weather_dir.join(path), text).unwrap();
    }
    let weather_dir = weather_dir.to_str().unwrap();
    snap!(&w, "resolve", &["resolve", "--plugin", weather_dir]);
    snap!(
        &w,
        "resolve-json",
        &["--json", "resolve", "--plugin", weather_dir]
    );
    snap!(&w, "config-get", &["config", "get"]);
    snap!(&w, "config-get-json", &["--json", "config", "get"]);
    snap!(&w, "pack-export", &["pack", "export"]);
    snap!(&w, "pack-export-json", &["--json", "pack", "export"]);
    snap!(
        &w,
        "config-set",
        &["config", "set", "keep-generations", "10"]
    );
    snap!(
        &w,
        "config-set-json",
        &["--json", "config", "set", "keep-generations", "12"]
    );
    let pack = w.tmp.path().join("hermes-pack.yaml");
    std::fs::write(&pack, w.ok(&["pack", "export"])).unwrap();
    let pack = pack.to_str().unwrap();
    snap!(&w, "pack-show", &["pack", "show", pack]);
    snap!(&w, "pack-show-json", &["--json", "pack", "show", pack]);
    snap!(&w, "nix-lock-json", &["--json", "nix", "lock"]);
    // What `exec` gives the command it runs (an unmodified Hermes reads the generation
    // through these; a plain interpreter is not changed).
    snap!(
        &w,
        "exec",
        &[
            "exec",
            "--",
            "python3",
            "-c",
            "import os\nfor k in ['HERMES_HOME', 'HERMES_PLUGINS_AGENT_HOME', 'HERMES_PLUGINS_ENV_FILE', 'HERMES_PLUGINS_GENERATION', 'HERMES_PLUGINS_LEASE_FD', 'HERMES_PLUGINS_PROFILE', 'PYTHONPATH']: print(k, os.environ.get(k))",
        ]
    );
    snap!(&w, "nix-hash", &["nix", "hash", calculator]);
    snap!(&w, "nix-hash-json", &["--json", "nix", "hash", calculator]);

    // The catalog.
    snap!(&w, "catalog-check", &["catalog", "check", catalog]);
    snap!(
        &w,
        "catalog-check-json",
        &["--json", "catalog", "check", catalog]
    );
    snap!(&w, "search", &["search", "weather", "--catalog", catalog]);
    snap!(
        &w,
        "search-json",
        &["--json", "search", "weather", "--catalog", catalog]
    );

    // Mistakes: what the user is told.
    snap!(&w, "show-unknown", &["show", "nosuch"]);
    snap!(&w, "show-unknown-json", &["--json", "show", "nosuch"]);
    snap!(&w, "enable-unknown", &["enable", "nosuch"]);
    snap!(&w, "usage-error", &["install"]);
    snap!(&w, "option-of-another-command", &["list", "--audit"]);

    // Removing.
    snap!(&w, "remove", &["remove", "weather"]);
    snap!(&w, "list-empty", &["list"]);
    snap!(&w, "remove-json", &["--json", "remove", "weather"]);
}
