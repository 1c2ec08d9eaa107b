//! The project's JSON Schemas (catalog-schema/) against real outputs and the official
//! Agent Plugins 1.0.0 schemas.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use hermes_plugins::located::{Limits, yaml};
use serde_json::{Value, json};

fn schema(name: &str) -> PathBuf {
    repo().join("catalog-schema").join(name)
}

fn official(name: &str) -> PathBuf {
    fixture("reference/agent-plugins-1.0.0").join(name)
}

#[test]
fn json_report_validates_against_its_schema() {
    let v = validator(&schema("validate-report.schema.json"));
    let (_, report) = validate_json(
        &[
            &fixture("plugins"),
            &fixture("bad-native"),
            &fixture("portable"),
        ],
        &[],
    );
    assert!(report["packages"].as_array().unwrap().len() > 50);
    let errors = violations(&v, &report);
    assert!(
        errors.is_empty(),
        "report violates its schema:\n{}",
        errors.join("\n")
    );
    // The schema is not vacuous: a broken report fails it.
    let mut broken = report.clone();
    broken["packages"][0]["findings"] = json!([{ "check": "manifest", "severity": "fatal" }]);
    assert!(!v.is_valid(&broken));
    let mut broken = report;
    broken["packages"][0]["format"] = json!("native-v3");
    assert!(!v.is_valid(&broken));
}

/// Every plugin.json / mcp.json under the portable fixtures (and the good portable plugin)
/// that is JSON at all.
fn portable_documents(file: &str) -> Vec<(PathBuf, Value)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixture("portable"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.push(fixture("plugins/summarize-kit"));
    dirs.sort();
    dirs.into_iter()
        .filter_map(|d| {
            let path = d.join(file);
            let text = std::fs::read_to_string(&path).ok()?;
            serde_json::from_str(&text).ok().map(|v| (path, v))
        })
        .collect()
}

fn assert_agreement(ours: &Path, theirs: &Path, docs: &[(PathBuf, Value)], synthetic: &[Value]) {
    let ours = validator(ours);
    let theirs = validator(theirs);
    let mut verdicts = (0, 0);
    for (label, doc) in docs
        .iter()
        .map(|(p, v)| (p.display().to_string(), v))
        .chain(synthetic.iter().map(|v| (v.to_string(), v)))
    {
        let (a, b) = (ours.is_valid(doc), theirs.is_valid(doc));
        assert_eq!(
            a,
            b,
            "schemas disagree on {label}: ours {a}, official {b}\nours: {:?}\nofficial: {:?}",
            violations(&ours, doc),
            violations(&theirs, doc)
        );
        if a { verdicts.0 += 1 } else { verdicts.1 += 1 }
    }
    assert!(
        verdicts.0 > 0 && verdicts.1 > 0,
        "the comparison covers valid and invalid documents: {verdicts:?}"
    );
}

#[test]
fn plugin_json_schema_agrees_with_the_official_one() {
    let s = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";
    let synthetic = [
        json!({"$schema": s, "name": "a"}),
        json!({"$schema": s, "name": "a..b"}),
        json!({"$schema": s, "name": "a--b"}),
        json!({"$schema": s, "name": "-a"}),
        json!({"$schema": s, "name": "x".repeat(65)}),
        json!({"$schema": s, "name": "ok", "author": {"name": "n", "twitter": "t"}}),
        json!({"$schema": s, "name": "ok", "keywords": ["a", 1]}),
        json!({"$schema": s, "name": "ok", "extensions": {"com.x": 1}}),
        json!({"$schema": s, "name": "ok", "extensions": {"com.x": {}}, "version": "not-semver"}),
        json!({"name": "ok"}),
    ];
    assert_agreement(
        &schema("plugin.schema.json"),
        &official("plugin.schema.json"),
        &portable_documents("plugin.json"),
        &synthetic,
    );
}

#[test]
fn mcp_json_schema_agrees_with_the_official_one() {
    let s = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";
    let synthetic = [
        json!({"$schema": s, "mcpServers": {}}),
        json!({"$schema": s, "mcpServers": {"a": {"type": "stdio", "command": ""}}}),
        json!({"$schema": s, "mcpServers": {"a": {"type": "stdio", "command": "x", "url": "https://a"}}}),
        json!({"$schema": s, "mcpServers": {"a": {"type": "stdio", "command": "x", "cwd": "/abs"}}}),
        json!({"$schema": s, "mcpServers": {"a": {"type": "stdio", "command": "x", "cwd": "${PLUGIN_DATA}"}}}),
        json!({"$schema": s, "mcpServers": {"a": {"type": "stdio", "command": "x", "env": {"PLUGIN_DATA": "x"}}}}),
        json!({"$schema": s, "mcpServers": {"a": {"type": "sse", "url": "https://a", "headers": {"h": 1}}}}),
        json!({"$schema": s, "mcpServers": {"a": {"type": "websocket", "url": "wss://a"}}}),
        json!({"$schema": s, "mcpServers": {}, "extra": true}),
    ];
    assert_agreement(
        &schema("mcp.schema.json"),
        &official("mcp.schema.json"),
        &portable_documents("mcp.json"),
        &synthetic,
    );
}

#[test]
fn hermes_extension_schema_matches_the_loader() {
    let v = validator(&schema("hermes-extension.schema.json"));
    for (path, doc) in portable_documents("plugin.json") {
        let Some(ext) = doc.pointer("/extensions/com.nousresearch.hermes") else {
            continue;
        };
        let bogus = path.to_string_lossy().contains("trust-bogus");
        assert_eq!(v.is_valid(ext), !bogus, "{}", path.display());
    }
}

fn yaml_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    yaml::parse(&text, Limits::default())
        .unwrap()
        .root
        .to_json()
}

#[test]
fn plugin_yaml_schemas_accept_the_good_manifests_and_catch_typos() {
    let v1 = validator(&schema("plugin-yaml-v1.schema.json"));
    let v2 = validator(&schema("plugin-yaml-v2.schema.json"));
    for name in ["calculator", "hermes-lang-pl"] {
        let doc = yaml_json(&fixture(&format!("plugins/{name}/plugin.yaml")));
        assert!(
            violations(&v1, &doc).is_empty(),
            "{name}: {:?}",
            violations(&v1, &doc)
        );
    }
    let doc = yaml_json(&fixture("plugins/release-notes/plugin.yaml"));
    assert!(
        violations(&v2, &doc).is_empty(),
        "{:?}",
        violations(&v2, &doc)
    );
    for bad in [
        "unknown-field-typo",
        "requires-env-lowercase-name",
        "version-is-a-number",
        "config-schema-defaults-mismatch",
        "kind-unknown",
    ] {
        let doc = yaml_json(&fixture(&format!("bad-native/{bad}/plugin.yaml")));
        assert!(!v2.is_valid(&doc), "{bad} should violate the v2 schema");
    }
}

#[test]
fn sarif_has_one_rule_per_check_and_located_results() {
    let out = run(&[
        "validate",
        "--format",
        "sarif",
        "fixtures/bad-native",
        "fixtures/portable",
    ]);
    assert_eq!(out.code, 1);
    let log: Value = serde_json::from_str(&out.stdout).expect("SARIF is JSON");
    assert_eq!(log["version"], "2.1.0");
    let run0 = &log["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    for check in hermes_plugins::diag::CheckId::ALL {
        assert!(ids.contains(&check.as_str()), "rule for {check}");
    }
    let results = run0["results"].as_array().unwrap();
    assert!(results.len() > 40);
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
        let loc = &r["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().unwrap();
        assert!(uri.starts_with("fixtures/"), "{uri}");
        assert!(!uri.contains(' '));
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(loc["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
}

#[test]
fn github_annotations_are_one_line_each() {
    let out = run(&[
        "validate",
        "--format",
        "github",
        "fixtures/bad-native/requires-env-lowercase-name",
    ]);
    assert_eq!(out.code, 1);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines[0].starts_with(
        "::error file=fixtures/bad-native/requires-env-lowercase-name/plugin.yaml,line=5,col=5,title=hermes-plugins requires-env::"
    ), "{}", lines[0]);
    assert!(lines[2].starts_with("hermes-plugins validate: 1 package(s)"));
}
