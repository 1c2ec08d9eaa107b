//! The project's JSON Schemas (catalog-schema/) against real outputs and the official
//! Agent Plugins 1.0.0 schemas.

use crate::common;

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
    for check in hermes_plugins::diag::CheckId::of(hermes_plugins::diag::Family::Package) {
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

/// Runs `hermes-plugins --json ARGS` in `w`, expecting `exit`; stdout must be exactly one
/// JSON document naming its schema and following it, and a failure must carry `code`.
fn contract(w: &common::world::World, args: &[&str], exit: i32, code: Option<&str>) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = w.cmd(&all).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON document ({e}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(exit), "{args:?}: {doc:#}");
    let file = follows_its_schema(&doc, Some(exit));
    match code {
        Some(code) => {
            assert_eq!(file, "error.schema.json", "{args:?}");
            assert_eq!(doc["error"]["code"], code, "{args:?}: {doc:#}");
        }
        None => assert_ne!(file, "error.schema.json", "{args:?}: {doc:#}"),
    }
    doc
}

#[test]
fn every_command_prints_json_that_follows_its_schema() {
    use common::world::*;
    let w = World::new();
    let repo = w.tmp.path().join("weather-repo");
    git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let news = w.tmp.path().join("news-repo");
    git_plugin(&news, None, "news", "1.0.0", &["newslib>=1,<2"]);
    let clash = w.tmp.path().join("clash-repo");
    git_plugin(&clash, None, "clash", "1.0.0", &["weatherlib==2.0.0"]);
    let broken = w.tmp.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("plugin.yaml"), "name: broken\n").unwrap();
    let (url, news_url) = (file_url(&repo), file_url(&news));

    // Validation and resolution.
    contract(
        &w,
        &["validate", fixture("plugins").to_str().unwrap()],
        0,
        None,
    );
    contract(
        &w,
        &[
            "validate",
            fixture("bad-native/manifest-empty").to_str().unwrap(),
        ],
        1,
        None,
    );
    let dir = w.tmp.path().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("plugin.yaml"),
        "name: plain\nversion: 1.0.0\ndescription: d\npython_dependencies: [\"weatherlib==2.0.0\"]\n",
    )
    .unwrap();
    std::fs::write(dir.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
    let other = w.tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("plugin.yaml"),
        "name: other\nversion: 1.0.0\ndescription: d\npython_dependencies: [\"weatherlib==1.0.0\"]\n",
    )
    .unwrap();
    std::fs::write(other.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
    contract(&w, &["resolve", "--plugin", dir.to_str().unwrap()], 0, None);
    let conflict = contract(
        &w,
        &[
            "resolve",
            "--plugin",
            dir.to_str().unwrap(),
            "--plugin",
            other.to_str().unwrap(),
        ],
        1,
        Some("conflict"),
    );
    assert!(conflict["error"]["details"]["conflict"]["plugins"].is_array());
    contract(
        &w,
        &[
            "resolve",
            "--plugin",
            dir.to_str().unwrap(),
            "--python",
            "3.99",
        ],
        3,
        Some("interpreter"),
    );

    // Before anything is published.
    contract(&w, &["env"], 1, Some("no-generation"));
    contract(&w, &["verify"], 1, Some("no-generation"));
    contract(&w, &["list"], 0, None);
    contract(&w, &["generations", "list"], 0, None);

    // Changes.
    contract(&w, &["install", &url, "--enable", "--yes-deps"], 0, None);
    contract(
        &w,
        &["install", broken.to_str().unwrap()],
        1,
        Some("invalid"),
    );
    contract(
        &w,
        &["install", &news_url, "--enable"],
        1,
        Some("consent-required"),
    );
    contract(&w, &["install", &news_url], 0, None);
    contract(&w, &["enable", "news"], 1, Some("consent-required"));
    contract(&w, &["enable", "news", "--yes-deps"], 0, None);
    contract(
        &w,
        &["install", &file_url(&clash), "--enable", "--yes-deps"],
        1,
        Some("conflict"),
    );
    contract(&w, &["disable", "news"], 0, None);
    contract(&w, &["enable", "nothing-here"], 2, Some("not-found"));
    contract(&w, &["sync"], 0, None);
    contract(&w, &["update", "--all", "--yes"], 0, None);
    contract(&w, &["update", "weather", "--dry-run"], 0, None);
    contract(&w, &["capabilities", "weather"], 0, None);
    contract(
        &w,
        &["capabilities", "weather", "--grant", "tools.override"],
        0,
        None,
    );
    contract(
        &w,
        &["capabilities", "weather", "--grant", "no.such"],
        2,
        Some("usage"),
    );

    // Views.
    contract(&w, &["list"], 0, None);
    contract(&w, &["show", "weather"], 0, None);
    contract(&w, &["show", "nope"], 2, Some("not-found"));
    contract(&w, &["env"], 0, None);
    contract(&w, &["verify"], 0, None);
    contract(&w, &["generations", "list"], 0, None);
    contract(
        &w,
        &["generations", "rollback", "999"],
        2,
        Some("not-found"),
    );
    contract(&w, &["generations", "rollback"], 0, None);
    contract(&w, &["generations", "gc"], 0, None);
    contract(&w, &["remove", "news"], 0, None);
    contract(&w, &["nix", "hash", repo.to_str().unwrap()], 0, None);
    contract(
        &w,
        &[
            "catalog",
            "check",
            fixture("catalog/good").to_str().unwrap(),
        ],
        0,
        None,
    );
    contract(
        &w,
        &[
            "catalog",
            "check",
            fixture("catalog/defects").to_str().unwrap(),
        ],
        1,
        None,
    );

    // The recorded environment.
    contract(&w, &["config", "get"], 0, None);
    contract(&w, &["config", "get", "core"], 0, None);
    contract(&w, &["config", "set", "quarantine-days", "10"], 0, None);
    contract(&w, &["config", "unset", "quarantine-days"], 0, None);
    // Every key the settings hold is in the schema's list (the second walk found
    // `keep-generations` missing): set, shown in the whole document, read alone.
    contract(&w, &["config", "set", "keep-generations", "10"], 0, None);
    contract(&w, &["config", "get"], 0, None);
    contract(&w, &["config", "get", "keep-generations"], 0, None);
    contract(&w, &["config", "unset", "keep-generations"], 0, None);
    contract(&w, &["config", "set", "colour", "x"], 2, Some("usage"));

    // Usage errors, the lock, exec.
    contract(&w, &["--bogus"], 2, Some("usage"));
    contract(&w, &["install"], 2, Some("usage"));
    contract(&w, &["--profile", "../x", "list"], 2, Some("usage"));
    // A profile that does not exist is not-found for every command, never an empty answer.
    for args in [
        &["--profile", "work", "list"][..],
        &["--profile", "work", "env"][..],
        &["--profile", "work", "sync"][..],
    ] {
        contract(&w, args, 2, Some("not-found"));
    }
    let (code, _, err) = w.run(&["--profile", "work", "exec", "--", "true"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("there is no profile `work`"), "{err}");
    // `exec` runs a program: `--json` is refused (a usage error, as its document says).
    contract(&w, &["exec", "--", "/nonexistent/agent"], 2, Some("usage"));
    let (code, _, err) = w.run(&["exec", "--", "/nonexistent/agent"]);
    assert_eq!(code, Some(3), "{err}");
    let mut holder = hold_writer_lock(&w);
    contract(
        &w,
        &["--lock-timeout", "0", "disable", "weather"],
        3,
        Some("lock-busy"),
    );
    let _ = holder.kill();
    let _ = holder.wait();
}

#[test]
fn error_codes_are_the_same_in_code_schema_and_docs() {
    use hermes_plugins::exit::Code;
    let schema = read_json(&schema("error.schema.json"));
    let listed: Vec<String> = schema["properties"]["error"]["properties"]["code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    let ours: Vec<String> = Code::ALL.iter().map(|c| c.as_str().to_string()).collect();
    assert_eq!(listed, ours);
    let docs = std::fs::read_to_string(repo().join("docs/report-format.md")).unwrap();
    for code in Code::ALL {
        let row = format!("| `{}` | {} |", code.as_str(), code.status().code());
        assert!(docs.contains(&row), "docs/report-format.md lacks {row}");
    }
}
