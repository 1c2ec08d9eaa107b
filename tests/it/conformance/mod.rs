//! Conformance with the real loader (VAL-21/22): every fixture plugin and every plugin of the
//! Hermes 0.19.0 corpus is loaded through the real `PluginManager` of an unmodified
//! `hermes-agent` (`src/check/hermes_load.py`, also behind `validate --probe-hermes`: linked under `$HERMES_HOME/plugins/<key>`, enabled in
//! `config.yaml`, `discover_plugins()`), and compared with `validate --format json`:
//!
//! (a) a package `validate` accepts for that Hermes's release (accepted, no error,
//!     `compatibility.loads[<release>]`) is loaded by Hermes without error (or routed to its
//!     memory or model-provider discovery, which the general loader leaves alone);
//! (b) a package Hermes fails to load is one `validate` says does not load on that release —
//!     an error naming what Hermes names, or `loads[<release>]` false;
//! (c) where Hermes loaded it, the tools and hooks it registered equal the static
//!     registrations, unless those are undetermined.
//!
//! The interpreter comes from `HERMES_PLUGINS_HERMES_PYTHON` (a venv with `hermes-agent==0.19.0`,
//! or 0.22.2: `.ci/run` runs the test with each). Without it the test says so and passes, unless
//! `HERMES_PLUGINS_REQUIRE_HERMES=1`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::common::*;

mod agent;

/// Packages deliberately not run through the real Hermes, and why. Everything else must agree.
const NOT_LOADED: &[(&str, &str)] = &[
    // Probe fixtures misbehave on import on purpose (hang, os._exit, network).
    ("probe-hang", "hangs on purpose"),
    ("probe-os-exit", "calls os._exit on purpose"),
    ("probe-network", "opens a socket on purpose"),
    ("import-writes-file", "writes a file at import on purpose"),
    // Security fixtures are refused by `validate`/`install`; running them would run the attack.
    ("security-reverse-shell", "hostile code"),
    ("security-decode-and-exec", "hostile code"),
    ("security-dynamic-eval", "hostile code"),
    ("security-curl-pipe-sh", "hostile code"),
    ("security-native-binary", "hostile code"),
    ("security-restricted-eval", "hostile code"),
    ("credential-access", "reads credential files"),
];

/// Disagreements that are understood and accepted: (key, criterion, why).
const ACCEPTED: &[(&str, &str, &str)] = &[];

/// A directory holding a pip plugin project as an installed distribution: its top-level
/// modules and a `*.dist-info` with METADATA and `entry_points.txt` from `pyproject.toml` —
/// what `pip install` leaves in site-packages, for Hermes's entry-point scan.
pub fn installed_site(project: &Path) -> tempfile::TempDir {
    let text = std::fs::read_to_string(project.join("pyproject.toml")).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let p = doc["project"].as_table().unwrap();
    let name = p["name"].as_str().unwrap().replace('-', "_");
    let version = p.get("version").and_then(|v| v.as_str()).unwrap_or("0");
    let site = tempfile::tempdir().unwrap();
    let module_root = if project.join("src").is_dir() {
        project.join("src")
    } else {
        project.to_path_buf()
    };
    for entry in std::fs::read_dir(&module_root).unwrap().flatten() {
        let path = entry.path();
        if path.join("__init__.py").is_file() {
            let target = site.path().join(entry.file_name());
            for file in walkdir::WalkDir::new(&path).into_iter().flatten() {
                let rel = file.path().strip_prefix(&path).unwrap();
                if file.file_type().is_dir() {
                    std::fs::create_dir_all(target.join(rel)).unwrap();
                } else {
                    std::fs::copy(file.path(), target.join(rel)).unwrap();
                }
            }
        }
    }
    let info = site.path().join(format!("{name}-{version}.dist-info"));
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(
        info.join("METADATA"),
        format!(
            "Metadata-Version: 2.1\nName: {}\nVersion: {version}\n",
            p["name"].as_str().unwrap()
        ),
    )
    .unwrap();
    let mut entry_points = String::new();
    if let Some(groups) = p.get("entry-points").and_then(|e| e.as_table()) {
        for (group, entries) in groups {
            entry_points.push_str(&format!("[{group}]\n"));
            for (k, v) in entries.as_table().unwrap() {
                entry_points.push_str(&format!("{k} = {}\n", v.as_str().unwrap()));
            }
            entry_points.push('\n');
        }
    }
    std::fs::write(info.join("entry_points.txt"), entry_points).unwrap();
    site
}

/// What the real Hermes did with each key of one root.
fn load_with_hermes(
    python: &Path,
    packages: &[(String, PathBuf, String)],
) -> BTreeMap<String, Value> {
    let mut cmd = std::process::Command::new(python);
    cmd.arg(repo().join("src/check/hermes_load.py"));
    for (key, dir, grants) in packages {
        cmd.arg(format!("{key}={}#{grants}", dir.display()));
    }
    let out = cmd.output().expect("the Hermes interpreter runs");
    assert!(
        out.status.success(),
        "load_with_hermes.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

fn names(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("name").and_then(Value::as_str).or_else(|| e.as_str()))
        .map(str::to_string)
        .collect()
}

/// The identifiers Hermes's error quotes (`'toolset'`, `'register_widget'`).
fn quoted(error: &str) -> Vec<String> {
    error
        .split('\'')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .map(str::to_string)
        .collect()
}

/// The README's demo plugin loads in the real Hermes and its tool runs (with its dependency
/// importable, as a generation provides it).
#[test]
fn the_demo_plugin_loads_in_hermes_and_its_tool_runs() {
    let Some(python) = hermes_python() else {
        eprintln!("HERMES_PLUGINS_HERMES_PYTHON not set: skipping the demo under Hermes");
        return;
    };
    let wheel = std::fs::read_dir(fixture("demo/wheels"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("the demo's wheel");
    let out = std::process::Command::new(python)
        .arg(repo().join("src/check/hermes_load.py"))
        .arg(format!(
            "weather-demo={}",
            fixture("demo/weather-demo").display()
        ))
        .env("HERMES_CONFORMANCE_PATH", &wheel)
        .env(
            "HERMES_CONFORMANCE_DISPATCH",
            r#"{"tool": "forecast", "args": {"city": "Oslo"}}"#,
        )
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let demo = &report["weather-demo"];
    assert_eq!(demo["error"], Value::Null, "{demo}");
    assert_eq!(demo["tools"], serde_json::json!(["forecast"]), "{demo}");
    let result = demo["dispatch"].as_str().unwrap_or_default();
    assert!(result.contains("Oslo"), "the tool answered {result:?}");
}

#[test]
fn validate_agrees_with_the_real_hermes_loader() {
    let Some(python) = hermes_python() else {
        eprintln!("HERMES_PLUGINS_HERMES_PYTHON not set: skipping the comparison with Hermes");
        return;
    };
    // The verdict compared is validate's for the release that interpreter runs.
    let release = hermes_release(&python);
    // `.ci/run` names the corpus it found (HERMES_PLUGINS_CORPUS), which must then exist;
    // otherwise the one next to the checkout is used when present.
    let corpus = match std::env::var_os("HERMES_PLUGINS_CORPUS") {
        Some(path) => {
            let path = std::path::PathBuf::from(path);
            assert!(
                path.is_dir(),
                "HERMES_PLUGINS_CORPUS {} is not a directory",
                path.display()
            );
            path
        }
        None => repo().join("../shared/corpus/hermes-0.19.0-bundled"),
    };
    let mut roots = vec![
        fixture("plugins"),
        fixture("demo"),
        fixture("python"),
        fixture("ctx-calls"),
        fixture("bad-native"),
        fixture("pip"),
        fixture("releases"),
    ];
    let mut sites = Vec::new();
    if corpus.is_dir() {
        roots.push(corpus);
    }
    let mut compared = 0usize;
    let mut agreed = [0usize; 3];
    let mut checked = [0usize; 3];
    let mut problems = Vec::new();
    let accepted = |key: &str, criterion: &str| {
        ACCEPTED
            .iter()
            .any(|(k, c, _)| *k == key && *c == criterion)
    };
    for root in roots {
        let (_, report) = validate_json(&[&root], &[]);
        let packages: Vec<&Value> = report["packages"].as_array().unwrap().iter().collect();
        let run: Vec<(String, PathBuf, String)> = packages
            .iter()
            .filter(|p| {
                let key = p["key"].as_str().unwrap();
                !NOT_LOADED.iter().any(|(k, _)| *k == key)
            })
            .map(|p| {
                let path = PathBuf::from(p["path"].as_str().unwrap());
                let mut dir = if path.is_absolute() {
                    path
                } else {
                    repo().join(path)
                };
                if p["format"] == "pip" {
                    let site = installed_site(&dir);
                    dir = PathBuf::from(format!("site:{}", site.path().display()));
                    sites.push(site);
                }
                // Declared capabilities granted, as consent would (their legacy keys).
                let grants: Vec<&str> = p["capabilities"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| hermes_plugins::known::capability(c.as_str()?))
                    .map(|c| c.legacy_key)
                    .collect();
                (
                    p["key"].as_str().unwrap().to_string(),
                    dir,
                    grants.join(","),
                )
            })
            .collect();
        let hermes = load_with_hermes(&python, &run);
        for p in packages {
            let key = p["key"].as_str().unwrap();
            let Some(h) = hermes.get(key) else { continue };
            compared += 1;
            let errors: Vec<&str> = p["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["severity"] == "error")
                .map(|f| f["message"].as_str().unwrap())
                .collect();
            let on_latest = p["compatibility"]["loads"][release.as_str()] == true;
            let expects_load = p["accepted"] == true && errors.is_empty() && on_latest;
            let error = h["error"].as_str().unwrap_or_default();
            let routed = error.starts_with("exclusive plugin") || h["kind"] == "model-provider";
            let loaded = h["known"] == true && h["enabled"] == true && h["error"].is_null();
            let failed = h["known"] == true && !h["error"].is_null() && !routed;
            // (a)
            if expects_load {
                checked[0] += 1;
                if loaded || routed || accepted(key, "a") {
                    agreed[0] += 1;
                } else {
                    problems.push(format!(
                        "(a) {key}: validate accepts it for {release}, Hermes says {h}"
                    ));
                }
            }
            // (b)
            if failed {
                checked[1] += 1;
                let named = quoted(error);
                let says_so = !on_latest
                    || (!errors.is_empty()
                        && (named.is_empty()
                            || named
                                .iter()
                                .any(|n| errors.iter().any(|e| e.contains(n.as_str())))));
                if says_so || accepted(key, "b") {
                    agreed[1] += 1;
                } else {
                    problems.push(format!(
                        "(b) {key}: Hermes {release} fails with {error:?}; validate errors: {errors:?}, loads {}",
                        p["compatibility"]["loads"]
                    ));
                }
            }
            // (c)
            if loaded && !routed {
                let regs = &p["registrations"];
                let undetermined = regs["undetermined"]
                    .as_array()
                    .is_some_and(|u| !u.is_empty());
                if !undetermined && regs.is_object() {
                    checked[2] += 1;
                    // A tool the release rejects one by one (a built-in's name) is listed by
                    // 0.19's manager and not by 0.22's: compared without it.
                    let rejected: BTreeSet<String> = p["compatibility"]["rejected"]
                        [release.as_str()]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.as_str()?.split('`').nth(1).map(str::to_string))
                    .collect();
                    let tools = |list: &Value| -> BTreeSet<String> {
                        names(list).difference(&rejected).cloned().collect()
                    };
                    let same = tools(&regs["tools"]) == tools(&h["tools"])
                        && names(&regs["hooks"]) == names(&h["hooks"]);
                    if same || accepted(key, "c") {
                        agreed[2] += 1;
                    } else {
                        problems.push(format!(
                            "(c) {key}: static tools {:?} hooks {:?}; Hermes tools {:?} hooks {:?}",
                            names(&regs["tools"]),
                            names(&regs["hooks"]),
                            names(&h["tools"]),
                            names(&h["hooks"])
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "conformance with Hermes {release}: {compared} packages loaded by both; (a) accepted ⇒ loads: {}/{}; (b) Hermes error ⇒ validate says so: {}/{}; (c) registrations equal: {}/{}; {} excluded on purpose, {} accepted differences",
        agreed[0],
        checked[0],
        agreed[1],
        checked[1],
        agreed[2],
        checked[2],
        NOT_LOADED.len(),
        ACCEPTED.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `validate --probe-hermes` loads through the real PluginManager and reports its error.
#[test]
fn probe_hermes_reports_the_real_loader_error() {
    let Some(python) = hermes_python() else {
        eprintln!("HERMES_PLUGINS_HERMES_PYTHON not set: skipping --probe-hermes");
        return;
    };
    let python = python.display().to_string();
    let (_, report) = validate_json(
        &[&fixture("ctx-calls/missing-required-argument")],
        &["--probe-hermes", &python],
    );
    let package = only_package(&report);
    let error = package["probe"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("missing 1 required positional argument: 'toolset'"),
        "{package:#}"
    );
    let (code, report) = validate_json(
        &[&fixture("plugins/calculator")],
        &["--probe-hermes", &python],
    );
    let package = only_package(&report);
    assert_eq!(code, 0, "{package:#}");
    assert_eq!(package["probe"]["error"], Value::Null, "{package:#}");
}
