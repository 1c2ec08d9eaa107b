//! Hostile packages: every bad input gets a located error; nothing panics, hangs, or is read
//! from outside the package root. (Unix: the hostile trees are made of symlinks, FIFOs and
//! modes.)
#![cfg(unix)]

#[path = "../common/mod.rs"]
mod common;
mod corpus;
mod services;

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

/// What a directory tree holds: path → (kind, contents or link target).
fn snapshot(root: &Path) -> std::collections::BTreeMap<String, (String, Vec<u8>)> {
    let mut out = std::collections::BTreeMap::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false) {
        let entry = entry.unwrap();
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap()
            .display()
            .to_string();
        let ft = entry.file_type();
        let value = if ft.is_symlink() {
            (
                "link".to_string(),
                std::fs::read_link(entry.path())
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
            )
        } else if ft.is_file() {
            ("file".to_string(), std::fs::read(entry.path()).unwrap())
        } else {
            ("dir".to_string(), Vec::new())
        };
        out.insert(rel, value);
    }
    out
}

/// Runs one corpus case in a fresh root; returns what went wrong, if anything.
fn run_case(case: &corpus::Case) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    case.write(root);
    let before = snapshot(&root.join("outside"));
    let binary = std::env::var_os("HERMES_PLUGINS_HOSTILE_BIN").map_or_else(
        || env!("CARGO_BIN_EXE_hermes-plugins").into(),
        std::path::PathBuf::from,
    );
    let mut cmd = std::process::Command::new(binary);
    cmd.current_dir(root)
        .args(case.args(root))
        .env("HERMES_HOME", root.join("home"))
        .env("HOME", root.join("user"))
        .env("NO_COLOR", "1")
        .env("HERMES_PLUGINS_NOW", world::NOW)
        .env("HERMES_PLUGINS_INDEX_URL", "http://127.0.0.1:9/simple")
        .env("HERMES_PLUGINS_LOCK_TIMEOUT", "10")
        .env("HERMES_PLUGINS_NO_CORE", "1")
        .env_remove("HERMES_PLUGINS_CORE")
        .env("HERMES_PLUGINS_CATALOG", "none")
        .env_remove("HERMES_PLUGINS_DEBUG")
        .env_remove("HERMES_PLUGINS_FAULT")
        .stdin(std::process::Stdio::null());
    for (name, value) in &case.env {
        cmd.env(name, value);
    }
    // Bounded memory: a case that allocates without limit dies here instead of passing.
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 8 << 30,
                rlim_max: 8 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    let started = std::time::Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_with_deadline(&mut child, Duration::from_secs(180))?;
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let both = format!("{stdout}\n{stderr}");
    let mut problems = Vec::new();
    match out.status.code() {
        Some(code) if case.codes.contains(&code) => {}
        Some(code) => problems.push(format!("exit {code}, expected one of {:?}", case.codes)),
        None => problems.push(format!("killed by a signal: {:?}", out.status)),
    }
    if stderr.contains("panicked") {
        problems.push("panicked".into());
    }
    if both.contains('\u{1b}') || stderr.contains('\r') {
        problems.push("a raw control character reached the terminal".into());
    }
    for text in &case.says {
        if !both.contains(text) {
            problems.push(format!("does not say {text:?}"));
        }
    }
    for text in &case.never_says {
        if both.contains(text) {
            problems.push(format!("says {text:?}"));
        }
    }
    if snapshot(&root.join("outside")) != before {
        problems.push("changed something outside the home".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}/{} ({elapsed:?}): {}\nstdout: {}\nstderr: {}",
            case.class,
            case.name,
            problems.join("; "),
            crate::text_tail(&stdout),
            crate::text_tail(&stderr)
        ))
    }
}

/// The last 2000 characters of a text (reports stay readable).
fn text_tail(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(2000)..].iter().collect()
}

/// Waits for a child, killing it (and failing) after `limit`.
fn wait_with_deadline(
    child: &mut std::process::Child,
    limit: Duration,
) -> Result<std::process::Output, String> {
    use std::io::Read;
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Ok(std::process::Output {
                status,
                stdout: out_reader.join().unwrap(),
                stderr: err_reader.join().unwrap(),
            });
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {limit:?}: a hang"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The whole hostile corpus through the binary: every case exits with an allowed code, by
/// itself, within bounded time and memory, says what it must, leaks nothing, and leaves
/// `outside/` byte-identical. `HERMES_PLUGINS_HOSTILE_OUT=DIR` also writes the corpus there;
/// `HERMES_PLUGINS_HOSTILE_BIN=PATH` runs it against another build (CI: the release binary).
#[test]
fn the_hostile_corpus_is_contained() {
    let cases = corpus::cases();
    let mut names = std::collections::BTreeSet::new();
    for case in &cases {
        assert!(names.insert(case.name), "duplicate case {}", case.name);
    }
    if let Some(out) = std::env::var_os("HERMES_PLUGINS_HOSTILE_OUT") {
        let out = std::path::PathBuf::from(out);
        for case in &cases {
            let dir = out.join(case.class).join(case.name);
            std::fs::create_dir_all(&dir).unwrap();
            case.write(&dir);
            std::fs::write(
                dir.join("case.json"),
                serde_json::to_string_pretty(&serde_json::json!({
                    "class": case.class,
                    "args": case.args,
                    "env": case.env,
                    "codes": case.codes,
                    "says": case.says,
                    "never_says": case.never_says,
                }))
                .unwrap(),
            )
            .unwrap();
        }
    }
    // Two at a time: the machine has two cores and each case is one process.
    let failures: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<&[corpus::Case]> = cases.chunks(cases.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|c| run_case(c).err())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    eprintln!(
        "hostile corpus: {} cases, {} contained",
        cases.len(),
        cases.len() - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
