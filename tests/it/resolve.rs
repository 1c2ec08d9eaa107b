//! `hermes-plugins resolve` against the loopback test index: the quarantine, conflicts in
//! plugin terms, exclusions, the lock and its determinism.

use crate::common;

use std::path::{Path, PathBuf};

use common::index::{TestIndex, Wheel};
use common::*;
use serde_json::Value;

const NOW: &str = "2026-12-01T00:00:00Z";

/// The test index: core's packages (httpx, pyyaml) and plugin-only ones.
fn index() -> TestIndex {
    TestIndex::start(&[
        Wheel::new("httpx", "0.28.1", "2026-01-10T00:00:00Z").requires("idna>=3"),
        Wheel::new("httpx", "0.29.0", "2026-11-25T12:00:00Z").requires("idna>=3"),
        Wheel::new("idna", "3.10", "2025-09-01T00:00:00Z"),
        Wheel::new("pyyaml", "6.0.2", "2025-08-01T00:00:00Z"),
        Wheel::new("weatherlib", "1.0.0", "2026-11-30T00:00:00Z").requires("httpx>=0.28"),
        Wheel::new("colorlib", "1.0.0", "2025-01-01T00:00:00Z"),
        Wheel::new("colorlib", "2.0.0", "2025-06-01T00:00:00Z"),
        Wheel::new("oldpy", "1.0.0", "2025-01-01T00:00:00Z"),
    ])
}

/// A Hermes core checkout with the given dependencies and `[tool.uv]` table.
fn make_core(dir: &Path, dependencies: &[&str], tool_uv: &str) -> PathBuf {
    let core = dir.join("core");
    std::fs::create_dir_all(&core).unwrap();
    let deps = dependencies
        .iter()
        .map(|d| format!("  \"{d}\",\n"))
        .collect::<String>();
    std::fs::write(
        core.join("pyproject.toml"),
        format!("[project]\nname = \"hermes-agent\"\nversion = \"0.19.0\"\ndependencies = [\n{deps}]\n\n[project.optional-dependencies]\nyaml = [\"pyyaml>=6,<7\"]\n\n[tool.uv]\nexclude-newer = \"14 days\"\n{tool_uv}\n"),
    )
    .unwrap();
    std::fs::write(
        core.join("uv.lock"),
        "version = 1\nrevision = 2\nrequires-python = \">=3.10\"\n\n[[package]]\nname = \"hermes-agent\"\nversion = \"0.19.0\"\nsource = { editable = \".\" }\n\n[[package]]\nname = \"httpx\"\nversion = \"0.28.1\"\nsource = { registry = \"https://pypi.org/simple\" }\n\n[[package]]\nname = \"idna\"\nversion = \"3.10\"\nsource = { registry = \"https://pypi.org/simple\" }\n\n[[package]]\nname = \"pyyaml\"\nversion = \"6.0.2\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
    )
    .unwrap();
    core
}

/// A native plugin declaring `deps` as python_dependencies.
fn plugin(dir: &Path, name: &str, deps: &[&str]) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(&p).unwrap();
    let list = deps
        .iter()
        .map(|d| format!("  - \"{d}\"\n"))
        .collect::<String>();
    std::fs::write(
        p.join("plugin.yaml"),
        format!("name: {name}\nversion: 1.0.0\ndescription: test plugin\nmanifest_version: 2\npython_dependencies:\n{list}"),
    )
    .unwrap();
    std::fs::write(p.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
    p
}

struct Resolve {
    code: i32,
    json: Value,
    stderr: String,
}

fn resolve(home: &Path, index: &TestIndex, args: &[&str]) -> Resolve {
    let out = bin()
        .env("HERMES_PLUGINS_NOW", NOW)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("UV_INDEX_URL")
        .env_remove("HERMES_PLUGINS_INDEX_URL")
        .args(["resolve", "--json", "--home"])
        .arg(home)
        .args(["--index-url", &index.url()])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("JSON on stdout ({e}):\n{stdout}\nstderr:\n{stderr}"));
    Resolve {
        code: out.status.code().unwrap(),
        json,
        stderr,
    }
}

fn version_of(lock: &Value, name: &str) -> Option<String> {
    versions(lock)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn a_too_new_core_package_is_held_back_with_dates() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let core = make_core(tmp.path(), &["httpx>=0.28,<1", "pyyaml>=6,<7"], "");
    let newer = plugin(tmp.path(), "newhttp", &["httpx>=0.29,<1"]);
    let r = resolve(
        tmp.path(),
        &index,
        &["--core", &s(&core), "--plugin", &s(&newer)],
    );
    assert_eq!(r.code, 1, "{:#} {}", r.json, r.stderr);
    let sentences: Vec<&str> = r.json["error"]["details"]["conflict"]["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        sentences.iter().any(|s| s.contains("plugin `newhttp` requires `httpx>=0.29,<1`")
            && s.contains("httpx 0.29.0 was uploaded 2026-11-25; the core quarantine admits it from 2026-12-09")),
        "{sentences:#?}"
    );
    let httpx = r.json["error"]["details"]["conflict"]["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "httpx")
        .unwrap();
    assert_eq!(httpx["held_back"][0]["version"], "0.29.0");
    assert_eq!(httpx["held_back"][0]["eligible_from"], "2026-12-09");
    assert_eq!(
        r.json["error"]["details"]["conflict"]["plugins"],
        serde_json::json!(["newhttp"])
    );
}

#[test]
fn plugin_only_packages_are_not_quarantined_and_core_pins_stay() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let core = make_core(tmp.path(), &["httpx>=0.28,<1", "pyyaml>=6,<7"], "");
    let weather = plugin(tmp.path(), "weather", &["weatherlib>=1,<2"]);
    let r = resolve(
        tmp.path(),
        &index,
        &["--core", &s(&core), "--plugin", &s(&weather)],
    );
    assert_eq!(r.code, 0, "{:#} {}", r.json, r.stderr);
    let lock = &r.json["lock"];
    assert_eq!(
        version_of(lock, "weatherlib").as_deref(),
        Some("1.0.0"),
        "uploaded yesterday, but only a plugin uses it"
    );
    assert_eq!(
        version_of(lock, "httpx").as_deref(),
        Some("0.28.1"),
        "core's pin holds"
    );
    let httpx = lock["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "httpx")
        .unwrap();
    assert_eq!(
        httpx["required_by"],
        serde_json::json!(["core", "plugin:weather"])
    );
    assert_eq!(httpx["sha256"].as_str().unwrap().len(), 64);
    assert!(httpx["url"].as_str().unwrap().starts_with(&index.base));
    assert_eq!(lock["core"]["name"], "hermes-agent");
}

#[test]
fn core_exemptions_are_honoured() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let core = make_core(
        tmp.path(),
        &["httpx>=0.28,<1", "pyyaml>=6,<7"],
        "exclude-newer-package = { httpx = false }",
    );
    let newer = plugin(tmp.path(), "newhttp", &["httpx>=0.29,<1"]);
    let r = resolve(
        tmp.path(),
        &index,
        &["--core", &s(&core), "--plugin", &s(&newer)],
    );
    assert_eq!(r.code, 0, "{:#} {}", r.json, r.stderr);
    assert_eq!(
        version_of(&r.json["lock"], "httpx").as_deref(),
        Some("0.29.0")
    );
    assert_eq!(r.json["quarantine"]["exempt"], serde_json::json!(["httpx"]));

    // A dated exemption after the upload admits it too.
    let tmp = tempfile::tempdir().unwrap();
    let core = make_core(
        tmp.path(),
        &["httpx>=0.28,<1"],
        "exclude-newer-package = { httpx = \"2026-11-28T00:00:00Z\" }",
    );
    let newer = plugin(tmp.path(), "newhttp", &["httpx>=0.29,<1"]);
    let r = resolve(
        tmp.path(),
        &index,
        &["--core", &s(&core), "--plugin", &s(&newer)],
    );
    assert_eq!(r.code, 0, "{:#} {}", r.json, r.stderr);
    assert_eq!(
        version_of(&r.json["lock"], "httpx").as_deref(),
        Some("0.29.0")
    );
}

#[test]
fn two_plugins_in_conflict_are_both_named() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let a = plugin(tmp.path(), "painter", &["colorlib<2"]);
    let b = plugin(tmp.path(), "printer", &["colorlib>=2,<3"]);
    let r = resolve(
        tmp.path(),
        &index,
        &["--plugin", &s(&a), "--plugin", &s(&b)],
    );
    assert_eq!(r.code, 1, "{:#}", r.json);
    let sentences = r.json["error"]["details"]["conflict"]["sentences"].to_string();
    assert!(
        sentences.contains(
            "plugin `painter` requires `colorlib<2`, but plugin `printer` requires `colorlib>=2,<3`"
        ),
        "{sentences}"
    );
    assert_eq!(
        r.json["error"]["details"]["conflict"]["plugins"],
        serde_json::json!(["painter", "printer"])
    );
}

#[test]
fn a_plugin_against_core_names_core() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let core = make_core(
        tmp.path(),
        &["httpx==0.28.1"],
        "exclude-newer-package = { httpx = false }",
    );
    let weather = plugin(tmp.path(), "weather", &["httpx>=0.29,<1"]);
    let r = resolve(
        tmp.path(),
        &index,
        &["--core", &s(&core), "--plugin", &s(&weather)],
    );
    assert_eq!(r.code, 1, "{:#}", r.json);
    let sentences = r.json["error"]["details"]["conflict"]["sentences"].to_string();
    assert!(
        sentences.contains(
            "plugin `weather` requires `httpx>=0.29,<1`, but Hermes core pins `httpx==0.28.1`"
        ),
        "{sentences}"
    );
}

#[test]
fn markers_self_dependencies_and_direct_urls_are_left_out() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let p = plugin(
        tmp.path(),
        "mixed",
        &[
            "oldpy>=1,<2 ; python_version < '3.8'",
            "hermes-agent>=0.19",
            "mylib @ https://example.com/mylib-1.0-py3-none-any.whl",
            "colorlib>=2,<3",
        ],
    );
    let r = resolve(tmp.path(), &index, &["--plugin", &s(&p)]);
    assert_eq!(r.code, 0, "{:#} {}", r.json, r.stderr);
    assert_eq!(
        versions(&r.json["lock"]),
        [("colorlib".to_string(), "2.0.0".to_string())]
    );
    let excluded: Vec<(&str, &str)> = r.json["lock"]["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["requirement"].as_str().unwrap(),
                e["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        excluded.contains(&("hermes-agent>=0.19", "hermes-agent")),
        "{excluded:?}"
    );
    assert!(
        excluded.contains(&(
            "mylib @ https://example.com/mylib-1.0-py3-none-any.whl",
            "direct-url"
        )),
        "{excluded:?}"
    );
    assert!(
        r.json["warnings"].to_string().contains("direct-url"),
        "the direct URL is warned about"
    );
}

#[test]
fn the_lock_is_deterministic_and_diffs_against_the_previous_one() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let core = make_core(tmp.path(), &["httpx>=0.28,<1", "pyyaml>=6,<7"], "");
    let weather = plugin(tmp.path(), "weather", &["weatherlib>=1,<2"]);
    let lock1 = tmp.path().join("one.lock.json");
    let lock2 = tmp.path().join("two.lock.json");
    for path in [&lock1, &lock2] {
        let r = resolve(
            tmp.path(),
            &index,
            &[
                "--core",
                &s(&core),
                "--plugin",
                &s(&weather),
                "--lock",
                &s(path),
            ],
        );
        assert_eq!(r.code, 0, "{:#} {}", r.json, r.stderr);
    }
    let (a, b) = (
        std::fs::read(&lock1).unwrap(),
        std::fs::read(&lock2).unwrap(),
    );
    assert_eq!(a, b, "same inputs, byte-identical lock");
    let schema = validator(&repo().join("catalog-schema/lock.schema.json"));
    let lock: Value = serde_json::from_slice(&a).unwrap();
    assert!(
        violations(&schema, &lock).is_empty(),
        "{:?}",
        violations(&schema, &lock)
    );

    // Adding a plugin: --dry-run shows the change and writes nothing.
    let painter = plugin(tmp.path(), "painter", &["colorlib<2"]);
    let r = resolve(
        tmp.path(),
        &index,
        &[
            "--core",
            &s(&core),
            "--plugin",
            &s(&weather),
            "--plugin",
            &s(&painter),
            "--lock",
            &s(&lock1),
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 0);
    assert_eq!(
        r.json["diff"]["added"],
        serde_json::json!([["colorlib", "1.0.0"]])
    );
    assert_eq!(
        std::fs::read(&lock1).unwrap(),
        a,
        "--dry-run writes nothing"
    );
}

#[test]
fn enabled_plugins_of_every_profile_are_resolved_by_default() {
    let index = index();
    let home = tempfile::tempdir().unwrap();
    let plugins = home.path().join("plugins");
    plugin(&plugins, "weather", &["weatherlib>=1,<2"]);
    plugin(&plugins, "painter", &["colorlib<2"]);
    plugin(&plugins, "idle", &["oldpy>=1,<2"]);
    std::fs::write(
        home.path().join("config.yaml"),
        "plugins:\n  enabled: [weather]\n",
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join("profiles/art")).unwrap();
    std::fs::write(
        home.path().join("profiles/art/config.yaml"),
        "plugins:\n  enabled: [painter, ghost]\n",
    )
    .unwrap();
    let r = resolve(home.path(), &index, &[]);
    assert_eq!(r.code, 0, "{:#} {}", r.json, r.stderr);
    let names: Vec<String> = versions(&r.json["lock"])
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(
        names.contains(&"weatherlib".to_string()) && names.contains(&"colorlib".to_string()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"oldpy".to_string()),
        "not enabled anywhere"
    );
    assert!(
        r.json["warnings"]
            .to_string()
            .contains("`ghost` is enabled"),
        "{:#}",
        r.json["warnings"]
    );

    std::fs::write(home.path().join("config.yaml"), "plugins: [broken\n").unwrap();
    let out = bin()
        .args(["resolve", "--home"])
        .arg(home.path())
        .args(["--index-url", &index.url()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "an unreadable primary config is an error"
    );
}

#[test]
fn an_unreachable_index_is_an_environment_error_naming_the_url() {
    let tmp = tempfile::tempdir().unwrap();
    let weather = plugin(tmp.path(), "weather", &["weatherlib>=1,<2"]);
    let out = bin()
        .env("HERMES_PLUGINS_NOW", NOW)
        .args(["resolve", "--home"])
        .arg(tmp.path())
        .args(["--index-url", "http://127.0.0.1:9/simple", "--plugin"])
        .arg(&weather)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("http://127.0.0.1:9/simple"), "{stderr}");
    // The causes are kept, one per line, down to the operating system's words.
    let caused = stderr
        .split_once("\nCaused by:\n")
        .map(|(_, c)| c)
        .unwrap_or_default();
    assert!(caused.lines().count() >= 2, "{stderr}");
    assert!(caused.contains("Connection refused"), "{stderr}");
    let out = bin()
        .env("HERMES_PLUGINS_NOW", NOW)
        .args(["--json", "resolve", "--home"])
        .arg(tmp.path())
        .args(["--index-url", "http://127.0.0.1:9/simple", "--plugin"])
        .arg(&weather)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "network", "{doc:#}");
    let causes = doc["error"]["causes"].as_array().unwrap();
    assert!(
        causes
            .iter()
            .any(|c| c.as_str().unwrap().contains("Connection refused")),
        "{doc:#}"
    );
    crate::common::follows_its_schema(&doc, Some(3));
}

#[test]
fn python_is_found_as_uv_finds_it() {
    let idx = index();
    let tmp = tempfile::tempdir().unwrap();
    let p = plugin(tmp.path(), "colors", &["colorlib>=1,<3"]);
    let version = std::process::Command::new("python3")
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    for request in ["python3", version.as_str()] {
        let r = resolve(tmp.path(), &idx, &["--plugin", &s(&p), "--python", request]);
        assert_eq!(r.code, 0, "--python {request}: {}", r.stderr);
        assert_eq!(
            r.json["lock"]["python"]["version"]
                .as_str()
                .unwrap_or_default()
                .rsplit_once('.')
                .map(|(mm, _)| mm),
            Some(version.as_str()),
            "{:#}",
            r.json
        );
    }
    // What uv learnt about the interpreter is kept in the user's cache, for every home.
    let shared = tempfile::tempdir().unwrap();
    let out = bin()
        .env("HERMES_PLUGINS_CACHE_DIR", shared.path())
        .env("HERMES_PLUGINS_NOW", NOW)
        .args(["resolve", "--json", "--home"])
        .arg(tmp.path())
        .args([
            "--index-url",
            &idx.url(),
            "--plugin",
            &s(&p),
            "--python",
            &version,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        crate::common::interpreter_facts(&shared.path().join("uv")) >= 1,
        "nothing kept in {}",
        shared.path().display()
    );
    let r = resolve(tmp.path(), &idx, &["--plugin", &s(&p), "--python", "3.99"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(r.json["error"]["exit_code"], 3);
    assert!(
        r.stderr.contains("No interpreter found for Python 3.99"),
        "{}",
        r.stderr
    );
}

/// `--find-links` adds a location, as uv's does: a package only in the directory and one only
/// on the index resolve together, each locked with its own file's hash (the local one hashed
/// from disk). `--no-index` leaves only the directory, and the package only the index has is
/// then not found.
#[test]
fn find_links_adds_a_location_and_no_index_leaves_only_it() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let links = tmp.path().join("links");
    std::fs::create_dir_all(&links).unwrap();
    let local = Wheel::new("locallib", "1.0.0", "2025-01-01T00:00:00Z");
    let bytes = local.build();
    std::fs::write(links.join(local.filename()), &bytes).unwrap();
    let p = plugin(tmp.path(), "mixed", &["locallib==1.0.0", "colorlib==2.0.0"]);
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    let r = resolve(
        &home,
        &index,
        &["--plugin", &s(&p), "--no-core", "--find-links", &s(&links)],
    );
    assert_eq!(r.code, 0, "{:#}\n{}", r.json, r.stderr);
    let packages = r.json["lock"]["packages"].as_array().unwrap();
    let find = |name: &str| {
        packages
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} not locked: {packages:#?}"))
    };
    assert_eq!(
        find("locallib")["sha256"].as_str(),
        Some(hermes_plugins::hash::sha256_hex(&bytes).as_str())
    );
    assert!(
        find("locallib")["url"]
            .as_str()
            .unwrap()
            .starts_with("file://"),
        "{packages:#?}"
    );
    assert!(
        find("colorlib")["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1"),
        "{packages:#?}"
    );

    let r = resolve(
        &home,
        &index,
        &[
            "--plugin",
            &s(&p),
            "--no-core",
            "--no-index",
            "--find-links",
            &s(&links),
        ],
    );
    assert_eq!(r.code, 1, "{:#}", r.json);
    assert!(r.json.to_string().contains("colorlib"), "{:#}", r.json);
}

/// A conflict over a package only a `--find-links` location offers is explained from what is
/// offered (docs/resolve.md): its versions there, not "no index has it".
#[test]
fn a_conflict_over_a_find_links_package_names_what_is_offered() {
    let index = index();
    let tmp = tempfile::tempdir().unwrap();
    let links = tmp.path().join("links");
    std::fs::create_dir_all(&links).unwrap();
    let local = Wheel::new("hermes-demo-forecast", "1.0.0", "2025-01-01T00:00:00Z");
    std::fs::write(links.join(local.filename()), local.build()).unwrap();
    let p = plugin(tmp.path(), "pa", &["hermes-demo-forecast<1"]);
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let r = resolve(
        &home,
        &index,
        &["--plugin", &s(&p), "--no-core", "--find-links", &s(&links)],
    );
    assert_eq!(r.code, 1, "{:#}\n{}", r.json, r.stderr);
    let message = r.json["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let all = r.json.to_string();
    assert!(
        all.contains("hermes-demo-forecast is offered only at 1.0.0"),
        "{message}\n{:#}",
        r.json
    );
    assert!(
        !all.contains("no index or --find-links location offers"),
        "{:#}",
        r.json
    );
}
