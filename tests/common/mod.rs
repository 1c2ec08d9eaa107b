//! Helpers shared by the integration tests: run the binary, read its JSON report; the test
//! package index lives in [`index`].

#![allow(dead_code)]

pub mod feed;
pub mod git_http;
pub mod index;
pub mod sshd;
pub mod synthetic;
pub mod world;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture path.
pub fn fixture(rel: &str) -> PathBuf {
    repo().join("fixtures").join(rel)
}

/// The binary under test, run from the repository root.
pub fn bin() -> Command {
    Command::from_std(std_bin())
}

/// [`bin`] as a `std::process::Command` (for where its output goes, or spawning).
pub fn std_bin() -> std::process::Command {
    #[allow(deprecated)]
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("hermes-plugins"));
    cmd.current_dir(repo());
    cmd.env_remove("HERMES_PLUGINS_CORE");
    cmd.env("HERMES_PLUGINS_NO_CORE", "1");
    cmd.env_remove("HERMES_PLUGINS_DEBUG");
    cmd.env("NO_COLOR", "1");
    // No catalog unless a test names one: the official feed is not reachable from CI.
    cmd.env("HERMES_PLUGINS_CATALOG", "none");
    // The tests' indexes are on 127.0.0.1: never through a proxy from the environment.
    cmd.env("NO_PROXY", "127.0.0.1,localhost");
    cmd.env("HERMES_PLUGINS_CACHE_DIR", user_cache());
    cmd
}

/// The user's cache directory of every test run (interpreter facts, validation reports):
/// shared by the tests as by a user's homes, and never the real one.
pub fn user_cache() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("user-cache")
}

/// How many interpreters uv has facts about in the uv cache at `dir` (files of its
/// `interpreter-*` buckets; 0 when there is no such cache).
pub fn interpreter_facts(dir: &std::path::Path) -> usize {
    let Ok(buckets) = std::fs::read_dir(dir) else {
        return 0;
    };
    buckets
        .filter_map(Result::ok)
        .filter(|b| b.file_name().to_string_lossy().starts_with("interpreter-"))
        .flat_map(|b| {
            walkdir::WalkDir::new(b.path())
                .into_iter()
                .filter_map(Result::ok)
        })
        .filter(|e| e.file_type().is_file())
        .count()
}

/// Output of one run.
pub struct Run {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs the binary with `args`.
pub fn run(args: &[&str]) -> Run {
    let out = bin().args(args).output().expect("runs");
    Run {
        code: out.status.code().expect("exited normally"),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// Runs `validate --format json` on `paths` (plus extra args) and parses the report.
pub fn validate_json(paths: &[&Path], extra: &[&str]) -> (i32, Value) {
    let mut args: Vec<String> = vec!["validate".into(), "--format".into(), "json".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&refs);
    let report: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is one JSON document ({e}):\n{}\nstderr:\n{}",
            out.stdout, out.stderr
        )
    });
    (out.code, report)
}

/// The single package of a report.
pub fn only_package(report: &Value) -> &Value {
    let packages = report["packages"].as_array().expect("packages array");
    assert_eq!(packages.len(), 1, "expected one package: {report:#}");
    &packages[0]
}

/// `(check, severity)` of every finding of a package, sorted.
pub fn findings(package: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = package["findings"]
        .as_array()
        .expect("findings array")
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Loads a JSON file.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("valid JSON")
}

/// A JSON Schema validator for the schema file at `path`.
pub fn validator(path: &Path) -> jsonschema::Validator {
    let schema = read_json(path);
    jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("{} is a valid schema: {e}", path.display()))
}

/// Every schema violation of `instance`, as text.
pub fn violations(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// `(name, version)` of every package in a lock, in lock order.
pub fn versions(lock: &Value) -> Vec<(String, String)> {
    lock["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["version"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Asserts a finished process succeeded (showing its stderr otherwise); returns its stdout.
pub fn succeeded(out: std::process::Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Asserts `doc` is a `--json` document that names its schema (`"$schema"`, the `$id` of a
/// file in `catalog-schema/`) and follows it; an error document's `exit_code` must be
/// `exit` (when given). Returns the schema file name.
pub fn follows_its_schema(doc: &Value, exit: Option<i32>) -> String {
    let id = doc["$schema"]
        .as_str()
        .unwrap_or_else(|| panic!("no \"$schema\" in {doc:#}"));
    let file = id
        .strip_prefix("urn:hermes-plugins:catalog-schema:")
        .unwrap_or_else(|| panic!("\"$schema\" {id} is not one of catalog-schema/"));
    let v = validator(&repo().join("catalog-schema").join(file));
    let problems = violations(&v, doc);
    assert!(problems.is_empty(), "{file}: {problems:#?}\n{doc:#}");
    if let (Some(code), "error.schema.json") = (exit, file) {
        assert_eq!(doc["error"]["exit_code"], code, "{doc:#}");
    }
    file.to_string()
}

/// The Hermes release `python` runs (its `hermes-agent` distribution's version: the releases
/// the tests run, 0.19.0 from PyPI and 0.22.2 from `../shared/hermes/make-hermes-venv.sh`,
/// both name it so).
pub fn hermes_release(python: &std::path::Path) -> String {
    let out = std::process::Command::new(python)
        .args([
            "-I",
            "-c",
            "from importlib.metadata import version; print(version('hermes-agent'))",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Whether `python`'s Hermes ships `module` in its environment (0.19.0's requirements bring
/// PyYAML; 0.22.2's do not).
pub fn hermes_has_module(python: &std::path::Path, module: &str) -> bool {
    std::process::Command::new(python)
        .args([
            "-I",
            "-c",
            &format!(
                "import importlib.util, sys; sys.exit(importlib.util.find_spec({module:?}) is None)"
            ),
        ])
        .status()
        .unwrap()
        .success()
}

/// The interpreter of a venv with `hermes-agent==0.19.0` (and so python-dotenv, both from
/// PyPI) or another release (CI runs the agent tests again with 0.22.2):
/// `HERMES_PLUGINS_HERMES_PYTHON`; `None` skips what needs it, unless
/// `HERMES_PLUGINS_REQUIRE_HERMES=1` (CI), which makes its absence a failure.
pub fn hermes_python() -> Option<PathBuf> {
    match std::env::var_os("HERMES_PLUGINS_HERMES_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            assert!(
                std::env::var("HERMES_PLUGINS_REQUIRE_HERMES").as_deref() != Ok("1"),
                "HERMES_PLUGINS_REQUIRE_HERMES=1 but HERMES_PLUGINS_HERMES_PYTHON is not set"
            );
            None
        }
    }
}
