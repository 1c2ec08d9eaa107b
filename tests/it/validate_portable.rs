//! `validate` on the portable fixtures: each Agent Plugins rule skips or rejects exactly the
//! right component and nothing more; what would load is reported.

use crate::common;

use common::*;
use serde_json::Value;

struct Expect {
    name: &'static str,
    accepted: bool,
    skills: &'static [&'static str],
    servers: &'static [&'static str],
    /// (check, severity, component)
    findings: &'static [(&'static str, &'static str, &'static str)],
}

const GOOD: &[&str] = &["good"];

const PORTABLE: &[Expect] = &[
    Expect {
        name: "args-unknown-placeholder-kept",
        accepted: true,
        skills: &[],
        servers: &["tool"],
        findings: &[("mcp", "info", "mcp:tool")],
    },
    Expect {
        name: "cwd-escapes",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[
            ("mcp", "error", "mcp:data-dotdot"),
            ("mcp", "error", "mcp:dotdot"),
            ("mcp", "error", "mcp:symlinked"),
            ("paths", "error", ""),
            ("security-scan", "error", ""),
        ],
    },
    Expect {
        name: "env-defines-plugin-root",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[("mcp", "error", "mcp:rooted")],
    },
    Expect {
        name: "headers-differ-only-in-case",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[("mcp", "error", "mcp:dupe-headers")],
    },
    Expect {
        name: "hermes-extension-orphan-server",
        accepted: false,
        skills: &[],
        servers: &[],
        findings: &[("hermes-extension", "error", "mcp:gooood")],
    },
    Expect {
        name: "mcp-json-invalid",
        accepted: true,
        skills: &["still-loads"],
        servers: &[],
        findings: &[("mcp", "error", "mcp")],
    },
    Expect {
        name: "nested-skill-not-discovered",
        accepted: true,
        skills: &["ok"],
        servers: &[],
        findings: &[("skills", "info", "skill:a")],
    },
    Expect {
        name: "plugin-json-invalid-name",
        accepted: false,
        skills: &[],
        servers: &[],
        findings: &[("portable-manifest", "error", "")],
    },
    Expect {
        name: "skill-frontmatter-unterminated",
        accepted: true,
        skills: &["ok"],
        servers: &[],
        findings: &[("skills", "error", "skill:open")],
    },
    Expect {
        name: "skill-name-mismatch",
        accepted: true,
        skills: &["ok"],
        servers: &[],
        findings: &[("skills", "error", "skill:foo")],
    },
    Expect {
        name: "sse-entry-skipped",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[("mcp", "warning", "mcp:legacy")],
    },
    Expect {
        name: "stdio-command-shell-string",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[("mcp", "error", "mcp:shell")],
    },
    Expect {
        name: "stdio-command-with-slash",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[("mcp", "error", "mcp:slashed")],
    },
    Expect {
        name: "trust-bogus-rejected",
        accepted: false,
        skills: &[],
        servers: &[],
        findings: &[("hermes-extension", "error", "mcp:payments")],
    },
    Expect {
        name: "trust-untrusted-accepted",
        accepted: true,
        skills: &[],
        servers: &["payments"],
        findings: &[],
    },
    Expect {
        name: "unknown-top-level-field",
        accepted: true,
        skills: &["ok"],
        servers: GOOD,
        findings: &[("portable-manifest", "warning", "")],
    },
    Expect {
        name: "url-ipv6-loopback-http",
        accepted: true,
        skills: &[],
        servers: &["loopback"],
        findings: &[],
    },
    Expect {
        name: "url-plain-http-remote",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[("mcp", "error", "mcp:plain")],
    },
    Expect {
        name: "url-with-fragment",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[("mcp", "error", "mcp:fragment")],
    },
    Expect {
        name: "url-with-userinfo",
        accepted: true,
        skills: &[],
        servers: GOOD,
        findings: &[("mcp", "error", "mcp:creds")],
    },
    Expect {
        name: "wrong-schema",
        accepted: false,
        skills: &[],
        servers: &[],
        findings: &[("portable-manifest", "error", "")],
    },
];

fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .unwrap_or(&vec![])
        .iter()
        .map(|v| v[field].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn each_portable_rule_affects_exactly_its_component() {
    let dir = fixture("portable");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let listed: Vec<&str> = PORTABLE.iter().map(|e| e.name).collect();
    assert_eq!(on_disk, listed, "every portable fixture has an expectation");
    for e in PORTABLE {
        let (exit, report) = validate_json(&[&dir.join(e.name)], &[]);
        let p = only_package(&report);
        assert_eq!(p["format"], "portable", "{}", e.name);
        assert_eq!(p["accepted"], e.accepted, "{}: {p:#}", e.name);
        assert_eq!(names(&p["skills"], "name"), e.skills, "{}: skills", e.name);
        assert_eq!(
            names(&p["mcp_servers"], "name"),
            e.servers,
            "{}: servers",
            e.name
        );
        let mut got: Vec<(String, String, String)> = p["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["check"].as_str().unwrap().to_string(),
                    f["severity"].as_str().unwrap().to_string(),
                    f["component"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        got.sort();
        let want: Vec<(String, String, String)> = e
            .findings
            .iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect();
        assert_eq!(got, want, "{}: {p:#}", e.name);
        let has_error = e.findings.iter().any(|f| f.1 == "error");
        assert_eq!(exit, i32::from(has_error || !e.accepted), "{} exit", e.name);
    }
}

#[test]
fn trust_transport_and_namespace_are_reported() {
    let (_, report) = validate_json(&[&fixture("plugins/summarize-kit")], &[]);
    let p = only_package(&report);
    let servers = p["mcp_servers"].as_array().unwrap();
    let summary: Vec<(&str, &str, &str)> = servers
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["transport"].as_str().unwrap(),
                s["trust"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("index", "stdio", "full"),
            ("orders", "streamable-http", "untrusted"),
            ("local", "streamable-http", "full")
        ]
    );
    assert_eq!(servers[0]["command"], "./bin/index-server");
    assert_eq!(servers[0]["args"][1], "${PLUGIN_ROOT}/data");
    // Namespace: agent-plugin-<slug>-<first 8 hex of sha256(key)>.
    assert_eq!(p["skill_namespace"], "agent-plugin-summarize-kit-11c1b30f");
    assert_eq!(
        p["skills"][0]["qualified_name"],
        "agent-plugin-summarize-kit-11c1b30f:summarize"
    );
}

#[test]
fn portable_in_a_category_is_keyed_by_directory() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("tools/My Kit");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("plugin.json"),
        r#"{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "kit"}"#,
    )
    .unwrap();
    // A foreign harness's plugin.json next to it is skipped, not rejected.
    let other = dir.path().join("tools/claude");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("plugin.json"),
        r#"{"name": "x", "commands": []}"#,
    )
    .unwrap();
    let (exit, report) = validate_json(&[dir.path()], &[]);
    assert_eq!(exit, 0, "{report:#}");
    let p = only_package(&report);
    assert_eq!(p["key"], "tools/My Kit");
    assert_eq!(p["name"], "kit");
    assert_eq!(p["skill_namespace"], "agent-plugin-tools-my-kit-bf06eda0");
}

#[test]
fn userinfo_passwords_never_reach_the_report() {
    let out = run(&[
        "validate",
        "fixtures/portable/url-with-userinfo",
        "--format",
        "json",
    ]);
    assert!(!out.stdout.contains("secret@"), "{}", out.stdout);
    assert!(out.stdout.contains("user:***@"));
}
