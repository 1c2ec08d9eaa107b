//! Hostile packages: every bad input gets a located error; nothing panics, hangs, or is read
//! from outside the package root.

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::Value;

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Validates `dir` with a generous hang guard; returns (exit code, the only package).
fn validate_one(dir: &Path) -> (i32, Value) {
    let out = bin()
        .args(["validate", "--format", "json"])
        .arg(dir)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    let code = out
        .status
        .code()
        .expect("exited by itself (no hang, no signal)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    (code, only_package(&report).clone())
}

fn first_message(package: &Value) -> String {
    manifest_finding(package)["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn huge_binary_and_deep_manifests_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge");
    let mut text = b"name: huge\ndescription: ".to_vec();
    text.extend(std::iter::repeat_n(b'x', 3 * 1024 * 1024));
    write(&huge.join("plugin.yaml"), &text);
    let (code, p) = validate_one(&huge);
    assert_eq!(code, 1);
    assert_eq!(manifest_finding(&p)["check"], "manifest");
    assert!(first_message(&p).contains("limit"), "{p:#}");

    let binary = dir.path().join("binary");
    write(
        &binary.join("plugin.yaml"),
        &[0x7f, b'E', b'L', b'F', 0, 0, 0xff, 0xfe, 1, 2, 3],
    );
    let (code, p) = validate_one(&binary);
    assert_eq!(code, 1);
    assert_eq!(manifest_finding(&p)["check"], "manifest");

    let nul = dir.path().join("nul");
    write(&nul.join("plugin.yaml"), b"name: nul\x00byte\n");
    let (code, p) = validate_one(&nul);
    assert_eq!(code, 1);
    assert_eq!(manifest_finding(&p)["check"], "manifest");

    let deep = dir.path().join("deep");
    let nested = format!(
        "name: deep\nx: {}{}\n",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    write(&deep.join("plugin.yaml"), nested.as_bytes());
    let (code, p) = validate_one(&deep);
    assert_eq!(code, 1);
    assert_eq!(manifest_finding(&p)["line"], 2);

    let deep_block = dir.path().join("deep-block");
    let mut block = String::from("name: deep\nx:\n");
    for i in 0..500 {
        block.push_str(&format!("{}k:\n", " ".repeat(i + 1)));
    }
    write(&deep_block.join("plugin.yaml"), block.as_bytes());
    let (code, p) = validate_one(&deep_block);
    assert_eq!(code, 1);
    assert!(first_message(&p).contains("nesting"), "{p:#}");
}

#[test]
fn symlinked_and_special_manifests_are_refused_without_reading_outside() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.yaml");
    write(
        &outside,
        b"name: stolen\nversion: 1.0.0\ndescription: read from outside\n",
    );

    let escape = dir.path().join("escape");
    std::fs::create_dir_all(&escape).unwrap();
    symlink(&outside, escape.join("plugin.yaml")).unwrap();
    write(&escape.join("__init__.py"), b"def register(ctx): pass\n");
    let (code, p) = validate_one(&escape);
    assert_eq!(code, 1);
    assert_ne!(
        p["name"], "stolen",
        "the manifest outside the root was not read"
    );
    assert!(
        first_message(&p).contains("outside the package root"),
        "{p:#}"
    );

    let looped = dir.path().join("loop");
    std::fs::create_dir_all(&looped).unwrap();
    symlink("plugin.yml", looped.join("plugin.yaml")).unwrap();
    symlink("plugin.yaml", looped.join("plugin.yml")).unwrap();
    let (code, p) = validate_one(&looped);
    assert_eq!(code, 1);
    assert!(
        p["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["message"].as_str().unwrap().contains("loop")),
        "{p:#}"
    );

    let fifo = dir.path().join("fifo");
    std::fs::create_dir_all(&fifo).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(fifo.join("plugin.yaml"))
        .status()
        .unwrap();
    assert!(status.success());
    let (code, p) = validate_one(&fifo);
    assert_eq!(code, 1);
    assert!(first_message(&p).contains("FIFO"), "{p:#}");
}

#[test]
fn hostile_portable_parts_are_confined_to_their_component() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("kit");
    write(
        &pkg.join("plugin.json"),
        br#"{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "kit"}"#,
    );
    let secret = dir.path().join("SECRET.md");
    write(&secret, b"---\nname: leak\ndescription: outside\n---\n");
    std::fs::create_dir_all(pkg.join("skills/leak")).unwrap();
    symlink(&secret, pkg.join("skills/leak/SKILL.md")).unwrap();
    write(
        &pkg.join("skills/fine/SKILL.md"),
        b"---\nname: fine\ndescription: ok\n---\n",
    );
    let deep_json = format!(
        "{{\"$schema\": \"https://agent-plugins.org/schemas/1.0.0/mcp.schema.json\", \"mcpServers\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    write(&pkg.join("mcp.json"), deep_json.as_bytes());
    // A directory symlink loop inside the package must not hang the walk.
    std::fs::create_dir_all(pkg.join("data/a")).unwrap();
    symlink("..", pkg.join("data/a/up")).unwrap();

    let (code, p) = validate_one(&pkg);
    assert_eq!(code, 1);
    assert_eq!(p["accepted"], true);
    let skills: Vec<&str> = p["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["fine"]);
    let comps: Vec<(&str, &str)> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap(),
                f["component"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(comps.contains(&("mcp", "mcp")), "{comps:?}");
    assert!(comps.contains(&("skills", "skill:leak")), "{comps:?}");
    assert!(comps.contains(&("paths", "")), "{comps:?}");
}

#[test]
fn invalid_utf8_json_is_located() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("kit");
    write(
        &pkg.join("plugin.json"),
        b"{\n  \"$schema\": \"x\",\n  \"name\": \"k\xff\"\n}\n",
    );
    let (code, p) = validate_one(&pkg);
    assert_eq!(code, 1);
    assert_eq!(p["accepted"], false);
    let f = &p["findings"][0];
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(3), Some(13))
    );
}

/// The first finding of check `manifest` (other checks, such as the security scan's size
/// limits, may also report on the same file).
fn manifest_finding(package: &Value) -> Value {
    package["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "manifest")
        .cloned()
        .unwrap_or_else(|| package["findings"][0].clone())
}
