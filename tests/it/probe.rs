//! `validate --probe`: register(ctx) run in a child interpreter with a recording context;
//! exits, hangs, network access and disagreements are contained and reported.

use crate::common;

use common::*;
use serde_json::Value;

fn probe(name: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["--probe"];
    args.extend_from_slice(extra);
    let (exit, report) = validate_json(&[&fixture(&format!("python/{name}"))], &args);
    (exit, only_package(&report).clone())
}

#[test]
fn probe_agrees_with_static_analysis_on_class_based_plugins() {
    let (exit, p) = probe("registration-class-based", &[]);
    assert_eq!(exit, 0, "{p:#}");
    let static_tools: Vec<&str> = p["registrations"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(static_tools, ["class_a", "class_b", "class_c"]);
    assert_eq!(p["probe"]["tools"], serde_json::json!(static_tools));
    assert_eq!(p["findings"], serde_json::json!([]));
}

#[test]
fn probe_agrees_with_static_analysis_on_known_patterns() {
    let (exit, p) = probe("registration-patterns", &[]);
    assert_eq!(exit, 0, "{p:#}");
    let probe = &p["probe"];
    assert_eq!(probe["ok"], true, "{probe:#}");
    let static_tools: Vec<&str> = p["registrations"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let probe_tools: Vec<&str> = probe["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(static_tools, probe_tools);
    assert_eq!(
        probe["hooks"],
        serde_json::json!(["post_tool_call", "on_session_end", "pre_llm_call"])
    );
    assert_eq!(probe["middleware"], serde_json::json!(["tool_request"]));
    assert_eq!(p["findings"], serde_json::json!([]), "no disagreement");
}

#[test]
fn probe_resolves_what_static_analysis_cannot_and_reports_the_disagreement() {
    let (exit, p) = probe("dynamic-tool-name", &[]);
    assert_eq!(exit, 0);
    assert_eq!(p["probe"]["tools"], serde_json::json!(["dyn_tool"]));
    let messages: Vec<&str> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("disagree") && messages[0].contains("dyn_tool"),
        "{messages:?}"
    );
}

#[test]
fn undeclared_registrations_found_by_the_probe_fail() {
    let (exit, p) = probe("undeclared-tool", &[]);
    assert_eq!(exit, 1);
    let f = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "declared-tools")
        .unwrap();
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("`beta` is registered by register(ctx) under --probe"),
        "{f:#}"
    );
}

#[test]
fn os_exit_in_register_is_contained() {
    let (_, p) = probe("probe-os-exit", &[]);
    assert_eq!(p["probe"]["ok"], false);
    assert_eq!(p["probe"]["phase"], "register");
    assert!(
        p["probe"]["error"].as_str().unwrap().contains("status 3"),
        "{p:#}"
    );
}

#[test]
fn hangs_time_out() {
    let (_, p) = probe("probe-hang", &["--probe-timeout", "1.5"]);
    assert_eq!(p["probe"]["phase"], "timeout");
    assert!(
        p["probe"]["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 1.5 s"),
        "{p:#}"
    );
    // Reported as a load problem, with what to do about a hang (not "install dependencies").
    let finding = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f.to_string().contains("could not run register"))
        .unwrap_or_else(|| panic!("{p:#}"));
    assert_eq!(finding["check"], "loadable", "{finding:#}");
    let text = finding.to_string();
    assert!(text.contains("--probe-timeout"), "{finding:#}");
    assert!(
        !text.contains("Install the plugin's dependencies"),
        "{finding:#}"
    );
}

#[test]
fn network_is_blocked_and_reported() {
    let (exit, p) = probe("probe-network", &[]);
    assert_eq!(exit, 0);
    assert_eq!(p["probe"]["ok"], true);
    assert_eq!(p["probe"]["tools"], serde_json::json!(["fetcher"]));
    let attempts = p["probe"]["network_attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{p:#}");
    assert!(
        attempts[0]
            .as_str()
            .unwrap()
            .starts_with("create_connection")
    );
}

#[test]
fn import_errors_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("broken");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("plugin.yaml"),
        "name: broken\nversion: 1.0.0\ndescription: d\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("__init__.py"),
        "import module_that_does_not_exist_anywhere\n\ndef register(ctx):\n    pass\n",
    )
    .unwrap();
    let (_, report) = validate_json(&[&pkg], &["--probe"]);
    let p = only_package(&report);
    assert!(
        p["probe"]["error"]
            .as_str()
            .unwrap()
            .contains("import failed: ModuleNotFoundError"),
        "{p:#}"
    );
}

#[test]
fn a_missing_interpreter_is_an_environment_error() {
    let out = run(&[
        "validate",
        "--probe=/nonexistent/python3",
        "fixtures/python/registration-patterns",
    ]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("/nonexistent/python3"));
}

/// The recording context has the real signatures: a call the real `PluginContext` rejects
/// raises in the probe too, and so does a method the release lacks.
#[test]
fn the_probe_context_rejects_what_hermes_rejects() {
    for (fixture_name, expected) in [
        (
            "missing-required-argument",
            "missing a required argument: 'toolset'",
        ),
        // inspect.Signature.bind names the missing parameter first; CPython the keyword.
        (
            "unknown-keyword",
            "PluginContext.register_hook() missing a required argument",
        ),
        ("no-such-method", "has no attribute 'register_widget'"),
    ] {
        let (_, report) = validate_json(
            &[&fixture(&format!("ctx-calls/{fixture_name}"))],
            &["--probe"],
        );
        let package = only_package(&report);
        let error = package["probe"]["error"].as_str().unwrap_or_default();
        assert!(error.contains(expected), "{fixture_name}: {error}");
    }
    let (_, report) = validate_json(&[&fixture("ctx-calls/guarded-getattr")], &["--probe"]);
    let package = only_package(&report);
    assert_eq!(package["probe"]["error"], Value::Null, "{package:#}");
}
