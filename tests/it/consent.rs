//! Consent (CAP-2…CAP-10) end to end: capabilities granted once and only by flag or prompt,
//! surface additions refused without `--yes`, only added capabilities asked on update,
//! `requires_auth` additions, `requires_env` values into `.env`, the audit log. Interactive
//! cases run the binary on a real pseudo-terminal (`tests/common/pty_drive.py`).

use crate::common;

use std::path::Path;
use std::process::Command as StdCommand;

use common::world::*;
use common::{read_json, repo};
use serde_json::Value;

/// A plugin's files: manifest fields given as YAML lines.
fn files(name: &str, version: &str, manifest_extra: &str, tools: &[&str]) -> Vec<(String, String)> {
    let registrations: String = tools
        .iter()
        .map(|t| {
            format!(
                "    ctx.register_tool(name=\"{t}\", toolset=\"t\", schema={{}}, handler=_tool)\n"
            )
        })
        .collect();
    let provides: String = tools.iter().map(|t| format!("  - {t}\n")).collect();
    vec![
        (
            "plugin.yaml".into(),
            format!(
                "name: {name}\nversion: {version}\ndescription: consent test\nmanifest_version: 2\nprovides_tools:\n{provides}{manifest_extra}"
            ),
        ),
        (
            "__init__.py".into(),
            format!(
                "def _tool(**kwargs):\n    return 1\n\ndef register(ctx):\n{registrations}    return None\n"
            ),
        ),
    ]
}

/// The keys `list` shows, in its order.
fn listed_keys(w: &World) -> Vec<String> {
    w.json(&["list"])["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap().to_string())
        .collect()
}

/// `files` placed under `image_gen/capup/`: a plugin in a category directory, keyed
/// `image_gen/capup` whatever its manifest name.
fn in_category_dir(files: Vec<(String, String)>) -> Vec<(String, String)> {
    files
        .into_iter()
        .map(|(path, text)| (format!("image_gen/capup/{path}"), text))
        .collect()
}

/// Generation `n`'s `weatherlib` is generation `earlier`'s installed file, hard-linked (the
/// same inode), not installed again.
fn assert_shares_installed_files(w: &World, n: u64, earlier: u64) {
    use std::os::unix::fs::MetadataExt;
    let module = w.venv_python("import weatherlib; print(weatherlib.__file__)");
    let module = Path::new(module.trim());
    let here = format!("/generations/{n}/");
    assert!(
        module.to_string_lossy().contains(&here),
        "{}",
        module.display()
    );
    let there = module
        .to_string_lossy()
        .replace(&here, &format!("/generations/{earlier}/"));
    assert_eq!(
        std::fs::metadata(module).unwrap().ino(),
        std::fs::metadata(&there).unwrap().ino(),
        "generation {n} shares generation {earlier}'s installed files"
    );
}

fn config(w: &World) -> String {
    std::fs::read_to_string(w.home.join("config.yaml")).unwrap_or_default()
}

fn audit(w: &World) -> Vec<Value> {
    std::fs::read_to_string(w.pm().join("audit.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A grant, and enabling a plugin without requirements, leave the lock as it is: the new
/// generation takes the current one's venv by hard links — no resolution, no install, no
/// index (it answers 500 meanwhile) — and what it holds verifies and imports. A change that
/// does need the index then fails, so the index really was unreachable.
#[test]
fn an_unchanged_lock_publishes_without_the_index() {
    let w = World::new();
    let weather = repo_with(
        &w,
        "weather",
        &files(
            "weather",
            "1.0.0",
            "capabilities:\n  - tools.override\npython_dependencies:\n  - \"weatherlib==1.0.0\"\n",
            &["forecast"],
        ),
    );
    w.ok(&["install", &file_url(&weather), "--enable", "--yes-deps"]);
    assert_eq!(w.current(), Some(1));
    w.index.set_fault(common::index::Fault::Status(500));

    let out = w.json(&["capabilities", "weather", "--grant", "tools.override"]);
    assert_eq!(out["generation"]["published"], true, "{out:#}");
    assert_eq!(w.current(), Some(2));
    assert_shares_installed_files(&w, 2, 1);
    let env = w.json(&["env"]);
    assert_eq!(
        env["plugins"][0]["granted_capabilities"],
        serde_json::json!(["tools.override"])
    );

    let radar = repo_with(&w, "radar", &files("radar", "1.0.0", "", &["radar_tool"]));
    w.ok(&["install", &file_url(&radar), "--enable", "--yes-deps"]);
    assert_eq!(w.current(), Some(3));
    let (code, out, err) = w.run(&["verify"]);
    assert_eq!(code, Some(0), "{out}{err}");

    let news = repo_with(
        &w,
        "news",
        &files(
            "news",
            "1.0.0",
            "python_dependencies:\n  - \"newslib==1.0.0\"\n",
            &["news_tool"],
        ),
    );
    let (code, _, err) = w.run(&["install", &file_url(&news), "--enable", "--yes-deps"]);
    assert_ne!(code, Some(0), "{err}");
    assert_eq!(w.current(), Some(3));
}

/// Runs the binary on a pseudo-terminal, answering prompts in order.
fn interactive(w: &World, args: &[&str], answers: &[(&str, &str)]) -> (i32, String) {
    let mut command = vec![env!("CARGO_BIN_EXE_hermes-plugins").to_string()];
    command.extend(args.iter().map(|a| a.to_string()));
    let answers: Vec<[&str; 2]> = answers.iter().map(|(a, b)| [*a, *b]).collect();
    let out = StdCommand::new("python3")
        .arg(repo().join("tests/common/pty_drive.py"))
        .arg(serde_json::to_string(&command).unwrap())
        .arg(serde_json::to_string(&answers).unwrap())
        .env("HERMES_HOME", &w.home)
        .env("HERMES_PLUGINS_NOW", NOW)
        .env("HERMES_PLUGINS_INDEX_URL", w.index.url())
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("NO_COLOR", "1")
        .env_remove("HERMES_PLUGINS_CORE")
        .env("HERMES_PLUGINS_NO_CORE", "1")
        .env("HERMES_PLUGINS_CATALOG", "none")
        .current_dir(repo())
        .output()
        .unwrap();
    let transcript = String::from_utf8_lossy(&out.stdout).into_owned();
    // Every expected prompt must have been asked: a prompt that never came is a failure.
    assert!(
        !transcript.contains("[pty_drive: unanswered prompts"),
        "{args:?}: {transcript}"
    );
    (out.status.code().unwrap_or(-1), transcript)
}

#[test]
fn capabilities_are_off_until_granted_by_flag() {
    let w = World::new();
    let dir = repo_with(
        &w,
        "weather",
        &files(
            "weather",
            "1.0.0",
            "capabilities:\n  - tools.override\n",
            &["forecast"],
        ),
    );
    // Non-interactive, no flags: enabled, capability off, the message names the flag.
    let (code, _, err) = w.run(&["install", &file_url(&dir), "--enable"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("--grant tools.override"), "{err}");
    let env = w.json(&["env"]);
    assert_eq!(
        env["plugins"][0]["granted_capabilities"],
        serde_json::json!([])
    );
    assert!(
        !config(&w).contains("allow_tool_override"),
        "{}",
        config(&w)
    );

    // Granted by flag: config (list, consent record, legacy key) and generation agree.
    let out = w.json(&["capabilities", "weather", "--grant", "tools.override"]);
    assert_eq!(out["generation"]["published"], true);
    let text = config(&w);
    assert!(
        text.contains("granted_capabilities:\n        - tools.override"),
        "{text}"
    );
    assert!(text.contains("allow_tool_override: true"), "{text}");
    assert!(text.contains("capabilities_consent:"), "{text}");
    let env = w.json(&["env"]);
    assert_eq!(
        env["plugins"][0]["granted_capabilities"],
        serde_json::json!(["tools.override"])
    );
    let shown = w.json(&["capabilities", "weather"]);
    assert_eq!(shown["capabilities"][0]["granted"], true);

    // Revoked: off again, legacy key gone; both decisions audited.
    w.ok(&["capabilities", "weather", "--revoke", "tools.override"]);
    assert!(
        !config(&w).contains("allow_tool_override"),
        "{}",
        config(&w)
    );
    let env = w.json(&["env"]);
    assert_eq!(
        env["plugins"][0]["granted_capabilities"],
        serde_json::json!([])
    );
    let actions: Vec<(String, String)> = audit(&w)
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().into(),
                e["by"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        actions.contains(&("grant".into(), "--grant".into())),
        "{actions:?}"
    );
    assert!(
        actions.contains(&("revoke".into(), "--revoke".into())),
        "{actions:?}"
    );
    let shown = w.json(&["show", "weather", "--audit"]);
    assert!(shown["audit"].as_array().unwrap().len() >= 2);

    // Unknown capability ids are a usage error.
    assert_eq!(
        w.run(&["capabilities", "weather", "--grant", "root.everything"])
            .0,
        Some(2)
    );
}

/// `update --yes-deps` (as integration.md maps `hermes plugins update`) consents to the
/// dependency changes alone: a new version that only adds a dependency updates without a
/// terminal; one that adds a tool is still refused, naming `--yes`.
#[test]
fn update_yes_deps_accepts_dependencies_only() {
    let w = World::new();
    let dir = repo_with(
        &w,
        "news",
        &files(
            "news",
            "1.0.0",
            "python_dependencies:\n  - \"newslib>=1\"\n",
            &["headlines"],
        ),
    );
    w.ok(&["install", &file_url(&dir), "--enable", "--yes-deps"]);
    let deps = "python_dependencies:\n  - \"newslib>=1\"\n  - \"colorlib>=1\"\n";
    commit(&dir, &files("news", "2.0.0", deps, &["headlines"]), "v2");
    let (code, out, err) = w.run(&["update", "news"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("colorlib"), "{err}");
    let updated = w.json(&["update", "news", "--yes-deps"]);
    assert_eq!(updated["plugins"][0]["status"], "updated", "{updated:#}");
    assert_eq!(w.venv_python("import colorlib; print('ok')"), "ok");

    commit(
        &dir,
        &files("news", "3.0.0", deps, &["headlines", "summaries"]),
        "v3",
    );
    let before = w.current();
    let (code, out, err) = w.run(&["update", "news", "--yes-deps"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains("+ tool summaries") && err.contains("--yes"),
        "{err}"
    );
    assert_eq!(w.current(), before);
}

#[test]
fn update_additions_need_yes() {
    let w = World::new();
    let dir = repo_with(
        &w,
        "news",
        &files(
            "news",
            "1.0.0",
            "python_dependencies:\n  - \"newslib>=1\"\n",
            &["headlines"],
        ),
    );
    w.ok(&["install", &file_url(&dir), "--enable", "--yes-deps"]);
    // v2 adds a tool, a hook and a dependency.
    let mut v2 = files(
        "news",
        "2.0.0",
        "provides_hooks:\n  - on_session_start\npython_dependencies:\n  - \"newslib>=1\"\n  - \"colorlib>=1\"\n",
        &["headlines", "summaries"],
    );
    v2[1]
        .1
        .push_str("\ndef _hook(**kwargs):\n    return None\n");
    commit(&dir, &v2, "v2");
    let config_before = config(&w);
    let current_before = w.current();

    let (code, out, err) = w.run(&["update", "news"]);
    assert_eq!(code, Some(1), "{out}{err}");
    for expected in [
        "+ tool summaries",
        "+ hook on_session_start",
        "+ dependency colorlib>=1",
        "--yes",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
    }
    assert_eq!(w.current(), current_before);
    assert_eq!(config(&w), config_before);

    // --dry-run shows the same diff, changes nothing (the content store included).
    let store_before: Vec<_> = std::fs::read_dir(w.pm().join("store"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let dry = w.json(&["update", "news", "--dry-run"]);
    assert_eq!(dry["plugins"][0]["status"], "would-update");
    let store_after: Vec<_> = std::fs::read_dir(w.pm().join("store"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(store_after.len(), store_before.len());
    let added: Vec<String> = dry["plugins"][0]["surface"]["added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["kind"].as_str().unwrap(),
                c["item"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        added,
        [
            "tool summaries",
            "hook on_session_start",
            "dependency colorlib>=1"
        ]
    );

    let applied = w.json(&["update", "news", "--yes"]);
    assert_eq!(applied["plugins"][0]["status"], "updated");
    assert_ne!(w.current(), current_before);
    let log = audit(&w);
    let update = log
        .iter()
        .find(|e| e["action"] == "update")
        .expect("audited");
    assert_eq!(update["by"], "--yes");
    assert!(
        update["items"]
            .as_array()
            .unwrap()
            .contains(&Value::from("tool summaries"))
    );
}

#[test]
fn repin_adding_requires_auth_asks_first() {
    let w = World::new();
    let dir = repo_with(&w, "codex", &files("codex", "1.0.0", "", &["ask"]));
    let c1 = git2::Repository::open(&dir)
        .unwrap()
        .head()
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id()
        .to_string();
    let catalog = w.tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    let entry = |sha: &str| {
        format!(
            "name: codex\nrepo: {}\nsha: {sha}\nmaintainer: x\n",
            file_url(&dir)
        )
    };
    std::fs::write(catalog.join("codex.yaml"), entry(&c1)).unwrap();
    let cat = catalog.to_str().unwrap();
    w.ok(&["install", "codex", "--catalog", cat, "--enable"]);
    let c2 = commit(
        &dir,
        &files(
            "codex",
            "1.1.0",
            "requires_auth:\n  - openai-codex\n",
            &["ask"],
        ),
        "auth",
    );
    std::fs::write(catalog.join("codex.yaml"), entry(&c2)).unwrap();
    let (code, _, err) = w.run(&["update", "codex", "--catalog", cat]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("+ requires_auth openai-codex"), "{err}");
    // Interactive: asked, answered yes, re-pinned.
    let (code, transcript) = interactive(
        &w,
        &["update", "codex", "--catalog", cat],
        &[("Accept these additions?", "y")],
    );
    assert_eq!(code, 0, "{transcript}");
    assert!(
        transcript.contains("requires_auth openai-codex"),
        "{transcript}"
    );
    assert_eq!(
        w.json(&["show", "codex"])["plugin"]["source"]["catalog"]["sha"],
        c2
    );
}

#[test]
fn interactive_update_asks_only_for_added_capabilities() {
    let w = World::new();
    let dir = repo_with(
        &w,
        "llm",
        &files(
            "llm",
            "1.0.0",
            "capabilities:\n  - tools.override\n",
            &["route"],
        ),
    );
    w.ok(&[
        "install",
        &file_url(&dir),
        "--enable",
        "--grant",
        "tools.override",
    ]);
    commit(
        &dir,
        &files(
            "llm",
            "2.0.0",
            "capabilities:\n  - tools.override\n  - llm.model_override\n",
            &["route"],
        ),
        "v2",
    );
    let (code, transcript) = interactive(
        &w,
        &["update", "llm"],
        &[
            ("Accept these additions?", "y"),
            ("Grant llm.model_override?", "y"),
        ],
    );
    assert_eq!(code, 0, "{transcript}");
    assert!(
        !transcript.contains("Grant tools.override?"),
        "{transcript}"
    );
    assert!(transcript.contains("not a sandbox"), "{transcript}");
    let env = w.json(&["env"]);
    assert_eq!(
        env["plugins"][0]["granted_capabilities"],
        serde_json::json!(["llm.model_override", "tools.override"])
    );
    let text = config(&w);
    assert!(text.contains("allow_model_override: true"), "{text}");
}

/// A repository of `weather` 1.0.0 that requires `WEATHER_TOKEN` (a secret, with a description
/// and where to get it).
fn weather_needing_a_token(w: &World) -> std::path::PathBuf {
    let extra = "requires_env:\n  - name: WEATHER_TOKEN\n    description: API token\n    url: https://example.org/token\n    secret: true\n";
    repo_with(
        w,
        "weather",
        &files("weather", "1.0.0", extra, &["forecast"]),
    )
}

/// A variable that changes what runs (`LD_PRELOAD`) is never advised into `.env`: the
/// held-back warning says where the plugin's own variable goes, and that this one goes nowhere.
#[test]
fn held_back_never_advises_a_denied_variable_into_env() {
    let w = World::new();
    let extra = "requires_env:\n  - LD_PRELOAD\n  - LDP_TOKEN\n";
    let dir = repo_with(&w, "ldp", &files("ldp", "1.0.0", extra, &["t"]));
    let (code, _, err) = w.run(&["install", &file_url(&dir), "--enable"]);
    assert_eq!(code, Some(0), "{err}");
    let warning = err
        .lines()
        .find(|l| l.contains("is held back"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        warning.contains("set LDP_TOKEN in the environment or in"),
        "{warning}"
    );
    assert!(!warning.contains("set LD_PRELOAD"), "{warning}");
    assert!(
        warning.contains("LD_PRELOAD changes what programs run"),
        "{warning}"
    );
}

#[test]
fn requires_env_prompted_hidden_or_listed() {
    let w = World::new();
    let dir = weather_needing_a_token(&w);
    // Non-interactive: enabled but reported disabled (missing: …).
    let (code, _, err) = w.run(&["install", &file_url(&dir), "--enable"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning: `weather` is held back") && err.contains("missing: WEATHER_TOKEN"),
        "{err}"
    );
    // Every operation document says so, per plugin.
    let synced = w.json(&["sync"]);
    assert_eq!(
        synced["generation"]["held_back"],
        serde_json::json!([{
            "plugin": "weather",
            "missing_env": ["WEATHER_TOKEN"],
            "reason": synced["generation"]["held_back"][0]["reason"],
        }]),
        "{synced:#}"
    );
    common::follows_its_schema(&synced, None);
    let listed = w.json(&["list"]);
    assert_eq!(
        listed["plugins"][0]["status"]["default"],
        "disabled (missing: WEATHER_TOKEN)"
    );
    let env = w.json(&["env"]);
    assert_eq!(env["plugins"][0]["load"], false);
    assert_eq!(
        env["plugins"][0]["missing_env"],
        serde_json::json!(["WEATHER_TOKEN"])
    );

    // Interactive enable (after a disable) asks with the description and URL, input hidden.
    w.ok(&["disable", "weather"]);
    std::fs::write(w.home.join(".env"), "# mine\nOTHER=1\n").unwrap();
    let (code, transcript) = interactive(
        &w,
        &["enable", "weather"],
        &[("WEATHER_TOKEN (hidden):", "s3cr3t-value")],
    );
    assert_eq!(code, 0, "{transcript}");
    assert!(transcript.contains("API token"), "{transcript}");
    assert!(
        transcript.contains("https://example.org/token"),
        "{transcript}"
    );
    assert!(
        !transcript.contains("s3cr3t-value"),
        "the secret was echoed:\n{transcript}"
    );
    let env_file = w.home.join(".env");
    assert_eq!(
        std::fs::read_to_string(&env_file).unwrap(),
        "# mine\nOTHER=1\nWEATHER_TOKEN=\"s3cr3t-value\"\n"
    );
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&env_file).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    let listed = w.json(&["list"]);
    assert_eq!(listed["plugins"][0]["status"]["default"], "enabled");
    // The audit names the variable, never the value.
    let log = std::fs::read_to_string(w.pm().join("audit.log")).unwrap();
    assert!(
        log.contains("WEATHER_TOKEN") && !log.contains("s3cr3t-value"),
        "{log}"
    );
}

#[test]
fn denylisted_env_names_are_never_written() {
    let w = World::new();
    let extra = "requires_env:\n  - LD_AUDIT\n  - name: PLAIN_TOKEN\n";
    let dir = repo_with(&w, "risky", &files("risky", "1.0.0", extra, &["go"]));
    // The validator calls the declaration an error, a catalog-admission rule: Hermes loads
    // the plugin, so install warns and goes on.
    let (code, _, err) = w.run(&["install", &file_url(&dir)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning: catalog admission") && err.contains("LD_AUDIT"),
        "{err}"
    );
    let (code, transcript) = interactive(&w, &["enable", "risky"], &[("PLAIN_TOKEN", "plain")]);
    assert_eq!(code, 0, "{transcript}");
    assert!(
        transcript.contains("LD_AUDIT is not written to .env"),
        "{transcript}"
    );
    assert_eq!(
        std::fs::read_to_string(w.home.join(".env")).unwrap(),
        "PLAIN_TOKEN=\"plain\"\n"
    );
}

#[test]
fn keys_sharing_a_hermes_module_are_refused() {
    let w = World::new();
    let first = repo_with(&w, "a-b", &files("a-b", "1.0.0", "", &["one"]));
    let second = repo_with(&w, "a_b", &files("a_b", "1.0.0", "", &["two"]));
    w.ok(&["install", &file_url(&first)]);
    let (code, _, err) = w.run(&["install", &file_url(&second)]);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("hermes_plugins.a_b"), "{err}");
    assert_eq!(listed_keys(&w), ["a-b"]);
}

#[test]
fn generation_records_the_consent_snapshot() {
    let w = World::new();
    let dir = repo_with(
        &w,
        "gw",
        &files(
            "gw",
            "1.0.0",
            "capabilities:\n  - gateway.platform_actions\n  - made.up\n",
            &["post"],
        ),
    );
    let (code, _, err) = w.run(&[
        "install",
        &file_url(&dir),
        "--enable",
        "--grant",
        "gateway.platform_actions",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("unknown capability `made.up`"), "{err}");
    let doc: Value = read_json(&w.pm().join("current/generation.json"));
    assert_eq!(
        doc["profiles"]["default"]["grants"]["gw"],
        serde_json::json!(["gateway.platform_actions"])
    );
    let _ = Path::new("");
}

#[test]
fn consent_plans_are_data_and_stale_plans_are_refused() {
    let w = World::new();
    let extra = "capabilities:\n  - llm.model_override\nrequires_env:\n  - name: PLAN_TOKEN\n    description: a token\npython_dependencies:\n  - \"weatherlib==1.0.0\"\n";
    let dir = repo_with(&w, "planned", &files("planned", "1.0.0", extra, &["go"]));
    let url = file_url(&dir);
    let dry = w.json(&["install", &url, "--enable", "--dry-run"]);
    common::follows_its_schema(&dry, None);
    assert_eq!(dry["dry_run"], true);
    let plan = &dry["plan"];
    let kinds: Vec<&str> = plan["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["capability", "env", "dependencies"], "{plan:#}");
    assert_eq!(
        plan["approve"],
        serde_json::json!(["--grant llm.model_override", "--yes-deps"])
    );
    assert_eq!(plan["required"], serde_json::json!(["--yes-deps"]));
    assert_eq!(
        plan["items"][2]["installs"],
        serde_json::json!(["colorlib 2.0.0", "weatherlib 1.0.0"])
    );
    // A dry run changes nothing, records nothing — the content store included.
    assert_eq!(w.current(), None);
    let stored = |w: &World| {
        std::fs::read_dir(w.pm().join("store"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    assert_eq!(stored(&w), 0);
    assert_eq!(w.json(&["list"])["plugins"], serde_json::json!([]));
    assert!(!w.pm().join("settings.json").exists());
    assert!(!w.home.join("config.yaml").exists());

    // Approved as shown: applied. The same dry run again gives the same hash.
    let hash = plan["hash"].as_str().unwrap().to_string();
    let again = w.json(&["install", &url, "--enable", "--dry-run"]);
    assert_eq!(again["plan"]["hash"], hash);
    let done = w.json(&[
        "install",
        &url,
        "--enable",
        "--yes-deps",
        "--grant",
        "llm.model_override",
        "--plan",
        &hash,
    ]);
    assert_eq!(done["generation"]["published"], true, "{done:#}");
    assert_eq!(
        w.json(&["env"])["plugins"][0]["granted_capabilities"],
        serde_json::json!(["llm.model_override"])
    );

    // Shown, then the plugin changed: the old plan is refused and nothing moves.
    let other = repo_with(&w, "later", &files("later", "1.0.0", "", &["x"]));
    w.ok(&["install", &file_url(&other)]);
    let shown = w.json(&["enable", "later", "--dry-run"]);
    let stale = shown["plan"]["hash"].as_str().unwrap().to_string();
    commit(
        &other,
        &files(
            "later",
            "1.1.0",
            "python_dependencies:\n  - \"newslib>=1\"\n",
            &["x"],
        ),
        "v1.1",
    );
    w.ok(&["update", "later"]);
    let before = w.current();
    let (code, out, _) = w.run(&["--json", "enable", "later", "--yes-deps", "--plan", &stale]);
    assert_eq!(code, Some(1), "{out}");
    let refusal: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(refusal["error"]["code"], "plan-changed");
    assert_eq!(w.current(), before);

    // A dry run shows the package diff against the current generation.
    let shown = w.json(&["enable", "later", "--dry-run"]);
    let changes = shown["generation"]["changes"].as_array().unwrap();
    assert!(
        changes
            .iter()
            .any(|c| c.as_str().unwrap().starts_with("+ newslib ")),
        "{shown:#}"
    );
    let (_, text, _) = w.run(&["enable", "later", "--dry-run"]);
    assert!(
        text.contains("Python packages against the current generation:\n  + newslib"),
        "{text}"
    );
    // And resolve, without --lock or --plugin, compares with the current generation.
    let resolved = w.json(&["resolve", "--dry-run"]);
    assert_eq!(
        resolved["diff_against"],
        format!("generation {}", before.unwrap()),
        "{resolved:#}"
    );
    assert_eq!(
        resolved["diff"]["added"],
        serde_json::json!([]),
        "{resolved:#}"
    );

    // update --dry-run shows what a new version adds, approved with --yes.
    commit(
        &dir,
        &files("planned", "2.0.0", extra, &["go", "more"]),
        "v2",
    );
    let update = w.json(&["update", "planned", "--dry-run"]);
    common::follows_its_schema(&update, None);
    let items = update["plan"]["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|i| i["kind"] == "surface" && i["added"].to_string().contains("tool more")),
        "{update:#}"
    );
    assert!(
        update["plan"]["required"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("--yes"))
    );
}

/// What python-dotenv (from PyPI, as Hermes loads `.env`: `load_dotenv(override=True)`, and
/// `dotenv_values`) reads from `path`, or `None` without the Hermes venv.
pub(crate) fn read_by_python_dotenv(path: &Path) -> Option<(Value, Value)> {
    let python = common::hermes_python()?;
    let script = r#"
import json, os, sys
from dotenv import dotenv_values, load_dotenv
values = dotenv_values(sys.argv[1])
before = set(os.environ)
load_dotenv(sys.argv[1], override=True)
loaded = {k: os.environ[k] for k in values if k in os.environ}
print(json.dumps([values, loaded]))
"#;
    let out = StdCommand::new(python)
        .arg("-c")
        .arg(script)
        .arg(path)
        .env("HOME", "/home/someone")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let both: Value = serde_json::from_slice(&out.stdout).unwrap();
    Some((both[0].clone(), both[1].clone()))
}

#[test]
fn env_values_read_back_verbatim_by_python_dotenv() {
    use hermes_plugins::consent::env_file;
    // 200 values from a fixed generator over what breaks dotenv files: `$` and `${…}`
    // (python-dotenv interpolates, single quotes included), quotes, backslashes (also last),
    // `#`, spaces, tabs, newlines, carriage returns, non-ASCII, line separators.
    const PIECES: &[&str] = &[
        "$",
        "${HOME}",
        "${",
        "}",
        "{",
        "$HOME",
        "${A:-b}",
        "${:-$}",
        "'",
        "\"",
        "\\",
        "\\n",
        "\\'",
        "\\\"",
        "#",
        " # c",
        " ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "é",
        "日本",
        "🙂",
        "a",
        "Z",
        "0",
        "=",
        "`",
        "export ",
        "\u{2028}",
        "\u{0b}",
        "\u{1b}[31m",
        "''",
        "\"\"",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut expected = serde_json::Map::new();
    let mut text =
        String::from("# written by hand\nexport KEEP='multi\nline'\nPLAIN=abc # note\nV000=old\n");
    for i in 0..200 {
        let len = next(9);
        let value: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
        let name = format!("V{i:03}");
        text = env_file::set(&text, &name, &value).unwrap();
        expected.insert(name, Value::String(value));
    }
    // Set again over values already written: replaced in place, not appended.
    for i in [0, 7, 199] {
        let name = format!("V{i:03}");
        let value = format!("again {i} ${{HOME}} \\");
        text = env_file::set(&text, &name, &value).unwrap();
        expected.insert(name, Value::String(value));
    }
    expected.insert("KEEP".into(), Value::String("multi\nline".into()));
    expected.insert("PLAIN".into(), Value::String("abc".into()));
    assert_eq!(
        text.lines().filter(|l| l.starts_with("V007=")).count(),
        1,
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".env");
    std::fs::write(&path, &text).unwrap();
    let Some((values, loaded)) = read_by_python_dotenv(&path) else {
        eprintln!("HERMES_PLUGINS_HERMES_PYTHON not set: skipping the python-dotenv round trip");
        return;
    };
    let expected = Value::Object(expected);
    for (name, want) in expected.as_object().unwrap() {
        assert_eq!(&values[name], want, "dotenv_values {name}:\n{text}");
        assert_eq!(&loaded[name], want, "load_dotenv {name}");
    }
    assert_eq!(values.as_object().unwrap().len(), 202, "{values:#}");
}

#[test]
fn a_secret_typed_at_the_prompt_arrives_intact() {
    let w = World::new();
    let extra = "requires_env:\n  - name: TRICKY_TOKEN\n    secret: true\n";
    let dir = repo_with(&w, "tricky", &files("tricky", "1.0.0", extra, &["go"]));
    w.ok(&["install", &file_url(&dir)]);
    let typed = r#"a$b ${HOME} "q" 'x' #h \n end\"#;
    let (code, transcript) = interactive(
        &w,
        &["enable", "tricky"],
        &[("TRICKY_TOKEN (hidden):", typed)],
    );
    assert_eq!(code, 0, "{transcript}");
    let env_file = w.home.join(".env");
    let Some((values, loaded)) = read_by_python_dotenv(&env_file) else {
        return;
    };
    assert_eq!(values["TRICKY_TOKEN"], typed);
    assert_eq!(loaded["TRICKY_TOKEN"], typed);
}

#[test]
fn remove_revokes_every_grant_and_a_new_source_is_asked_again() {
    let w = World::new();
    let manifest = "capabilities:\n  - tools.override\n";
    let dir = repo_with(&w, "guard", &files("guard", "1.0.0", manifest, &["shield"]));
    w.ok(&[
        "install",
        &file_url(&dir),
        "--enable",
        "--grant",
        "tools.override",
    ]);
    // A second profile where the user granted it by hand, as Hermes's legacy key.
    let work = w.home.join("profiles/work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("config.yaml"),
        "plugins:\n  entries:\n    guard:\n      allow_tool_override: true\n      api_base: https://example.org\n",
    )
    .unwrap();
    let text = config(&w);
    assert!(
        text.contains("allow_tool_override: true") && text.contains("source:"),
        "{text}"
    );

    w.ok(&["remove", "guard"]);
    for path in [w.home.join("config.yaml"), work.join("config.yaml")] {
        let text = std::fs::read_to_string(&path).unwrap();
        for gone in [
            "allow_tool_override",
            "granted_capabilities",
            "capabilities_consent",
            "tools.override",
        ] {
            assert!(
                !text.contains(gone),
                "{}: {gone} survived:\n{text}",
                path.display()
            );
        }
    }
    // The plugin's own settings stay.
    let work_text = std::fs::read_to_string(work.join("config.yaml")).unwrap();
    assert!(
        work_text.contains("api_base: https://example.org"),
        "{work_text}"
    );
    let revokes: Vec<Value> = audit(&w)
        .into_iter()
        .filter(|e| e["action"] == "revoke" && e["by"] == "remove")
        .collect();
    assert_eq!(revokes.len(), 2, "{revokes:#?}");

    // Installed again under the same name: asked again (non-interactive: off).
    let (code, _, err) = w.run(&["install", &file_url(&dir), "--enable"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("--grant tools.override"), "{err}");
    assert_eq!(
        w.json(&["env"])["plugins"][0]["granted_capabilities"],
        serde_json::json!([])
    );

    // Granted, then the same key from another repository replaces it: the grant does not
    // carry over, even with identical content.
    w.ok(&["capabilities", "guard", "--grant", "tools.override"]);
    let copy = repo_with(
        &w,
        "fork/guard",
        &files("guard", "1.0.0", manifest, &["shield"]),
    );
    let (code, _, err) = w.run(&["install", &file_url(&copy), "--enable"]);
    assert_eq!(
        code,
        Some(1),
        "another source is not a replacement unless asked: {err}"
    );
    assert!(err.contains("--replace"), "{err}");
    let (code, _, err) = w.run(&["install", &file_url(&copy), "--enable", "--replace"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("is asked again"), "{err}");
    assert_eq!(
        w.json(&["env"])["plugins"][0]["granted_capabilities"],
        serde_json::json!([])
    );
    assert!(
        !config(&w).contains("allow_tool_override"),
        "{}",
        config(&w)
    );
}

#[test]
fn a_refused_install_stays_installed_and_disabled() {
    let w = World::new();
    let dir = repo_with(
        &w,
        "needy",
        &files(
            "needy",
            "1.0.0",
            "python_dependencies:\n  - \"weatherlib==1.0.0\"\n",
            &["go"],
        ),
    );
    let (code, out, _) = w.run(&["--json", "install", &file_url(&dir), "--enable"]);
    assert_eq!(code, Some(1), "{out}");
    let refusal: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(refusal["error"]["code"], "consent-required");
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("installed but not enabled")
            && message.contains("hermes-plugins enable needy"),
        "{message}"
    );
    assert_eq!(w.current(), None);
    let listed = w.json(&["list"]);
    assert_eq!(listed["plugins"][0]["key"], "needy", "{listed:#}");
    assert_eq!(listed["plugins"][0]["status"]["default"], "disabled");
    // Enabled later, with consent.
    let enabled = w.json(&["enable", "needy", "--yes-deps"]);
    assert_eq!(enabled["generation"]["published"], true);
}

#[test]
fn rollback_rolls_back_the_grants_hermes_reads() {
    let w = World::new();
    let manifest = "capabilities:\n  - tools.override\n";
    let dir = repo_with(&w, "guard", &files("guard", "1.0.0", manifest, &["shield"]));
    w.ok(&["install", &file_url(&dir), "--enable"]);
    let before = w.current().unwrap();
    w.ok(&["capabilities", "guard", "--grant", "tools.override"]);
    let granted = w.current().unwrap();
    assert!(config(&w).contains("allow_tool_override: true"));

    w.ok(&["generations", "rollback"]);
    assert_eq!(w.current(), Some(before));
    let text = config(&w);
    assert!(
        !text.contains("allow_tool_override") && !text.contains("- tools.override"),
        "{text}"
    );
    assert!(text.contains("enabled:"), "{text}");
    // Nothing to re-apply: sync sees the rolled-back state as current.
    let synced = w.json(&["sync"]);
    assert_eq!(synced["generation"]["published"], false, "{synced:#}");
    assert_eq!(w.current(), Some(before));
    assert!(
        audit(&w)
            .iter()
            .any(|e| e["action"] == "revoke" && e["by"].as_str().unwrap().starts_with("rollback")),
        "{:#?}",
        audit(&w)
    );

    // And forward again: the grant comes back with the generation that had it.
    w.ok(&["generations", "rollback", &granted.to_string()]);
    assert!(
        config(&w).contains("allow_tool_override: true"),
        "{}",
        config(&w)
    );
    assert_eq!(
        w.json(&["env"])["plugins"][0]["granted_capabilities"],
        serde_json::json!(["tools.override"])
    );
    let synced = w.json(&["sync"]);
    assert_eq!(synced["generation"]["published"], false, "{synced:#}");
}

/// Load rules and admission rules (seed 003): install refuses what Hermes would not load and
/// a dangerous verdict; catalog-admission errors (undeclared tools) are warnings there and
/// stay errors in `validate`; code patching Hermes internals is asked like a capability
/// (`--allow-core-patch`), once per target; a plugin held back for an unset `requires_env`
/// says so in the operation's document.
#[test]
fn install_refuses_load_failures_and_warns_on_admission_rules() {
    let w = World::new();
    let plugin = |name: &str, manifest_extra: &str, body: &str| {
        repo_with(
            &w,
            name,
            &[
                (
                    "plugin.yaml".to_string(),
                    format!(
                        "name: {name}\nversion: 1.0.0\ndescription: gate test\n{manifest_extra}"
                    ),
                ),
                ("__init__.py".to_string(), body.to_string()),
            ],
        )
    };

    // An undeclared tool: Hermes loads it; only catalog admission fails it.
    let loose = plugin(
        "loose",
        "",
        "def _t(**kw):\n    return 1\n\ndef register(ctx):\n    ctx.register_tool(name=\"loose_tool\", toolset=\"t\", schema={}, handler=_t)\n",
    );
    let (code, _, _) = w.run(&["validate", loose.to_str().unwrap()]);
    assert_eq!(code, Some(1), "validate keeps the admission error");
    let doc = w.json(&["install", &file_url(&loose), "--enable", "--yes-deps"]);
    common::follows_its_schema(&doc, None);
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("catalog admission") && warnings.contains("declared-tools"),
        "{doc:#}"
    );
    assert_eq!(doc["enabled"], true);

    // A call no Hermes release accepts: register(ctx) raises, Hermes does not load it.
    let broken = plugin(
        "broken",
        "",
        "def register(ctx):\n    ctx.register_everything_at_once(\"x\")\n",
    );
    let (code, _, err) = w.run(&["install", &file_url(&broken)]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("Hermes would not load `broken`") && err.contains("ctx-call"),
        "{err}"
    );

    // Patching a Hermes internal: asked, refused without a terminal, listed by a dry run,
    // approved by the flag and recorded.
    let patcher = plugin(
        "patcher",
        "",
        "import run_agent\n\ndef register(ctx):\n    run_agent.AIAgent.chat = lambda self, *a, **k: None\n",
    );
    let url = file_url(&patcher);
    let (code, _, err) = w.run(&["install", &url, "--enable", "--yes-deps"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("patches Hermes internals") && err.contains("--allow-core-patch"),
        "{err}"
    );
    assert!(w.json(&["list"])["plugins"].to_string().contains("loose"));
    assert!(!w.json(&["list"])["plugins"].to_string().contains("patcher"));
    let dry = w.json(&["install", &url, "--enable", "--yes-deps", "--dry-run"]);
    common::follows_its_schema(&dry, None);
    let items = dry["plan"]["items"].as_array().unwrap();
    let item = items
        .iter()
        .find(|i| i["kind"] == "core-patch")
        .unwrap_or_else(|| panic!("{dry:#}"));
    assert_eq!(item["plugin"], "patcher");
    assert!(item["targets"].to_string().contains("run_agent"), "{item}");
    assert!(
        dry["plan"]["required"]
            .to_string()
            .contains("--allow-core-patch"),
        "{dry:#}"
    );
    w.ok(&[
        "install",
        &url,
        "--enable",
        "--yes-deps",
        "--allow-core-patch",
    ]);
    let installed = read_json(&w.pm().join("installed.json"));
    let patches = installed["plugins"]["patcher"]["core_patches"].to_string();
    assert!(patches.contains("run_agent"), "{installed:#}");
    // The same targets again (a re-install) are not asked again.
    w.ok(&["install", &url, "--enable", "--yes-deps"]);

    // Held back for an unset requires_env: the install document says which and why.
    let needs = plugin(
        "needs",
        "provides_tools:\n  - needs_tool\nrequires_env:\n  - NEEDS_TOKEN\n",
        "def _t(**kw):\n    return 1\n\ndef register(ctx):\n    ctx.register_tool(name=\"needs_tool\", toolset=\"t\", schema={}, handler=_t)\n",
    );
    let doc = w.json(&["install", &file_url(&needs), "--enable", "--yes-deps"]);
    common::follows_its_schema(&doc, None);
    let held = doc["generation"]["held_back"].as_array().unwrap();
    assert_eq!(held.len(), 1, "{doc:#}");
    assert_eq!(held[0]["plugin"], "needs");
    assert_eq!(held[0]["missing_env"], serde_json::json!(["NEEDS_TOKEN"]));
    assert!(doc["warnings"].to_string().contains("held back"), "{doc:#}");
}

/// A repository of several plugins installed without a subdirectory: refused, naming each
/// plugin directory with the command that installs it (never a scratch path).
#[test]
fn a_repository_of_several_plugins_names_each() {
    let w = World::new();
    let mut all = Vec::new();
    for (dir, name) in [
        ("plugins/alpha", "alpha"),
        ("plugins/image_gen/beta", "beta"),
    ] {
        for (path, text) in files(name, "1.0.0", "", &[&format!("{name}_tool")]) {
            all.push((format!("{dir}/{path}"), text));
        }
    }
    all.push(("README.md".to_string(), "two plugins\n".to_string()));
    let repo = repo_with(&w, "several", &all);
    let url = file_url(&repo);
    let (code, _, err) = w.run(&["install", &url]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("holds 2 plugins"), "{err}");
    assert!(
        err.contains(&format!(
            "plugins/alpha: hermes-plugins install {url}#plugins/alpha"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "plugins/image_gen/beta: hermes-plugins install {url}#plugins/image_gen/beta"
        )),
        "{err}"
    );
    assert!(!err.contains("/pm/tmp/"), "a scratch path leaked: {err}");
    w.ok(&["install", &format!("{url}#plugins/alpha")]);
}

/// Keys as Hermes keys them: plugins from category directories are `<category>/<dir>` (two
/// backends that both call themselves `agnes` are two plugins), and a different plugin under
/// a taken key is refused, naming both sources — never a silent replacement.
#[test]
fn category_plugins_keep_hermes_keys_and_taken_keys_are_refused() {
    let w = World::new();
    let mut all = Vec::new();
    for category in ["image_gen", "video_gen"] {
        for (path, text) in files("agnes", "1.0.0", "", &[&format!("{category}_agnes")]) {
            all.push((format!("plugins/{category}/agnes/{path}"), text));
        }
    }
    let repo = repo_with(&w, "agnes", &all);
    let url = file_url(&repo);
    for category in ["image_gen", "video_gen"] {
        let doc = w.json(&[
            "install",
            &format!("{url}#plugins/{category}/agnes"),
            "--enable",
            "--yes-deps",
        ]);
        assert_eq!(
            doc["installed"]["key"],
            format!("{category}/agnes"),
            "{doc:#}"
        );
        assert_eq!(doc["installed"]["name"], "agnes");
    }
    assert_eq!(listed_keys(&w), ["image_gen/agnes", "video_gen/agnes"]);
    let generation = w
        .pm()
        .join(format!("generations/{}/plugins", w.current().unwrap()));
    for category in ["image_gen", "video_gen"] {
        assert!(
            generation.join(category).join("agnes/plugin.yaml").exists(),
            "{category}/agnes is not in the generation"
        );
    }

    // Another repository whose plugin is also called `weather`: refused, both sources named.
    let first = repo_with(&w, "weather", &files("weather", "1.0.0", "", &["forecast"]));
    w.ok(&["install", &file_url(&first)]);
    let second = repo_with(
        &w,
        "impostor",
        &files("weather", "9.0.0", "", &["forecast"]),
    );
    let (code, _, err) = w.run(&["install", &file_url(&second)]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--replace"), "{err}");
    assert!(
        err.contains("`weather` is taken")
            && err.contains("weather-repo")
            && err.contains("impostor-repo"),
        "{err}"
    );
    let installed = read_json(&w.pm().join("installed.json"));
    assert_eq!(installed["plugins"]["weather"]["version"], "1.0.0");
    // The same source again is a re-install, not a clash.
    w.ok(&["install", &file_url(&first)]);
}

/// `update NAME --grant CAP` takes the plugin by its manifest name as well as by its key
/// (`cap_up` in a category directory is keyed `image_gen/capup`): the capability the new version declares is granted, never
/// dropped silently; `--grant` with `--all` (no plugin named) is a usage error.
#[test]
fn update_grant_takes_the_plugin_by_name_or_key() {
    let w = World::new();
    // In a category directory the key is `image_gen/capup`, the manifest name `cap_up`.
    let dir = repo_with(
        &w,
        "capup",
        &in_category_dir(files("cap_up", "1.0.0", "", &["go"])),
    );
    let source = format!("{}#image_gen/capup", file_url(&dir));
    w.ok(&["install", &source, "--enable", "--yes-deps"]);
    assert_eq!(listed_keys(&w), ["image_gen/capup"]);
    commit(
        &dir,
        &in_category_dir(files(
            "cap_up",
            "1.1.0",
            "capabilities:\n  - llm.model_override\n",
            &["go"],
        )),
        "v1.1",
    );
    let (code, _, err) = w.run(&["update", "--all", "--yes", "--grant", "llm.model_override"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--grant applies to the plugins named"),
        "{err}"
    );
    w.ok(&["update", "cap_up", "--yes", "--grant", "llm.model_override"]);
    assert_eq!(
        w.json(&["env"])["plugins"][0]["granted_capabilities"],
        serde_json::json!(["llm.model_override"])
    );
}

/// A `config.yaml` that lists a plugin by its manifest name (`cap_up`) rather than its key
/// (`image_gen/capup`) selects it; `disable` by key takes every entry that names it off the
/// enabled list, so nothing is left selecting it (and `remove` likewise).
#[test]
fn disable_takes_a_plugin_listed_by_name_off_the_list() {
    let w = World::new();
    let dir = repo_with(
        &w,
        "capup",
        &in_category_dir(files("cap_up", "1.0.0", "", &["go"])),
    );
    w.ok(&["install", &format!("{}#image_gen/capup", file_url(&dir))]);
    std::fs::write(
        w.home.join("config.yaml"),
        "plugins:\n  enabled:\n    - cap_up\n",
    )
    .unwrap();
    w.ok(&["sync", "--yes-deps"]);
    assert_eq!(w.json(&["env"])["plugins"].as_array().unwrap().len(), 1);
    w.ok(&["disable", "image_gen/capup"]);
    let config = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
    assert!(!config.contains("- cap_up"), "{config}");
    assert!(config.contains("image_gen/capup"), "{config}");
    assert_eq!(
        w.json(&["env"])["plugins"],
        serde_json::json!([]),
        "{config}"
    );
}

/// A `.env` that cannot be read (here: not UTF-8, as a Latin-1 file is) is never shown as
/// empty: `list` and `show` say the plugin's state is unknown and why, `env` fails naming the
/// file, and `enable` (the writer) refuses it rather than writing over it.
#[test]
fn an_unreadable_env_file_is_said_never_read_as_empty() {
    let w = World::new();
    let extra = "requires_env:\n  - name: WEATHER_TOKEN\n    description: API token\n";
    let dir = repo_with(
        &w,
        "weather",
        &files("weather", "1.0.0", extra, &["forecast"]),
    );
    w.ok(&["install", &file_url(&dir), "--enable"]);
    let env_file = w.home.join(".env");
    std::fs::write(&env_file, b"WEATHER_TOKEN=caf\xe9\n").unwrap();
    let listed = w.json(&["list"]);
    let status = listed["plugins"][0]["status"]["default"].as_str().unwrap();
    assert!(
        status.starts_with("unknown (cannot read ") && status.contains(".env"),
        "{status}"
    );
    let shown = w.json(&["show", "weather"]);
    assert!(
        shown["status"].as_str().unwrap().starts_with("unknown ("),
        "{shown:#}"
    );
    let (code, _, err) = w.run(&["env"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains(".env"), "{err}");
    w.ok(&["disable", "weather"]);
    let (code, _, err) = w.run(&["enable", "weather"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("cannot read") && err.contains(".env"), "{err}");
    assert_eq!(
        std::fs::read(&env_file).unwrap(),
        b"WEATHER_TOKEN=caf\xe9\n"
    );
}

/// `disable` and `remove` install nothing themselves: when `config.yaml` was edited by hand
/// to enable a plugin whose dependencies were never consented to, they refuse (non-
/// interactive) naming `sync --yes-deps` instead of installing those dependencies unasked.
#[test]
fn disable_and_remove_never_install_a_hand_edited_selection_unasked() {
    let w = World::new();
    let plain = repo_with(&w, "plain", &files("plain", "1.0.0", "", &["one"]));
    let deps = "python_dependencies:\n  - \"weatherlib==1.0.0\"\n";
    let heavy = repo_with(&w, "heavy", &files("heavy", "1.0.0", deps, &["two"]));
    w.ok(&["install", &file_url(&plain), "--enable"]);
    w.ok(&["install", &file_url(&heavy)]);
    let before = w.current();
    let text = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
    let edited = text.replace("    - plain\n", "    - plain\n    - heavy\n");
    assert_ne!(edited, text, "{text}");
    std::fs::write(w.home.join("config.yaml"), &edited).unwrap();
    for args in [&["disable", "plain"][..], &["remove", "plain"][..]] {
        let (code, _, err) = w.run(args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(
            err.contains("sync --yes-deps") && err.contains("weatherlib"),
            "{args:?}: {err}"
        );
        assert_eq!(w.current(), before, "{args:?}");
    }
    w.ok(&["sync", "--yes-deps"]);
    w.ok(&["disable", "plain"]);
}

/// `requires_env` is asked for whenever a plugin comes into the selection, not only on a
/// targeted `enable`: a `sync` of a `config.yaml` edited by hand asks on a terminal and
/// writes `.env`.
#[test]
fn requires_env_is_asked_when_sync_brings_the_plugin() {
    let w = World::new();
    let extra = "requires_env:\n  - name: SYNC_TOKEN\n    description: API token\n";
    let other = repo_with(&w, "other", &files("other", "1.0.0", "", &["one"]));
    let dir = repo_with(&w, "needy", &files("needy", "1.0.0", extra, &["two"]));
    w.ok(&["install", &file_url(&other), "--enable"]);
    w.ok(&["install", &file_url(&dir)]);
    let text = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
    let edited = text.replace("    - other\n", "    - other\n    - needy\n");
    assert_ne!(edited, text, "{text}");
    std::fs::write(w.home.join("config.yaml"), &edited).unwrap();
    let (code, transcript) = interactive(&w, &["sync", "--yes-deps"], &[("SYNC_TOKEN", "tok-1")]);
    assert_eq!(code, 0, "{transcript}");
    assert!(transcript.contains("API token"), "{transcript}");
    assert_eq!(
        std::fs::read_to_string(w.home.join(".env")).unwrap(),
        "SYNC_TOKEN=\"tok-1\"\n"
    );
    let env = w.json(&["env"]);
    assert!(
        env["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["load"] != false),
        "{env:#}"
    );
}

/// CAP-3 across a disabled stretch: a capability the plugin stopped declaring in an update
/// made while it was disabled is revoked when it is enabled again (audited), as an update of
/// an enabled plugin revokes it; a capability it still declares stays granted.
#[test]
fn grants_of_capabilities_dropped_while_disabled_do_not_survive_re_enabling() {
    let w = World::new();
    let both = "capabilities:\n  - llm.model_override\n  - tools.override\n";
    let dir = repo_with(&w, "shifty", &files("shifty", "1.0.0", both, &["go"]));
    w.ok(&[
        "install",
        &file_url(&dir),
        "--enable",
        "--grant",
        "llm.model_override",
        "--grant",
        "tools.override",
    ]);
    w.ok(&["disable", "shifty"]);
    commit(
        &dir,
        &files(
            "shifty",
            "1.1.0",
            "capabilities:\n  - tools.override\n",
            &["go"],
        ),
        "v1.1",
    );
    w.ok(&["update", "shifty", "--yes"]);
    w.ok(&["enable", "shifty"]);
    assert_eq!(
        w.json(&["env"])["plugins"][0]["granted_capabilities"],
        serde_json::json!(["tools.override"])
    );
    let audit = std::fs::read_to_string(w.pm().join("audit.log")).unwrap();
    assert!(
        audit
            .lines()
            .any(|l| l.contains("revoke") && l.contains("llm.model_override")),
        "{audit}"
    );
}

/// `show NAME` without `--json` is for people (one fact per line), not a JSON dump; with
/// `--audit` it lists the plugin's audit entries.
#[test]
fn show_is_text_for_people_unless_json() {
    let w = World::new();
    let caps = "capabilities:\n  - llm.model_override\n";
    let dir = repo_with(&w, "shown", &files("shown", "1.0.0", caps, &["go"]));
    w.ok(&[
        "install",
        &file_url(&dir),
        "--enable",
        "--grant",
        "llm.model_override",
    ]);
    let out = w.ok(&["show", "shown", "--audit"]);
    assert!(!out.trim_start().starts_with('{'), "{out}");
    for expected in [
        "plugin       shown",
        "version      1.0.0",
        "enabled in   default",
        "tools        go",
        "capability   llm.model_override (declared, granted)",
        "audit        ",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    assert_eq!(w.json(&["show", "shown"])["plugin"]["key"], "shown");
}

/// A revoke takes the legacy key out of `config.yaml` with the `llm:` mapping it sat in
/// (no `llm: {}` left behind), and so does `remove`; an update of a plugin installed from a
/// plain directory says its contents changed (there are no commits to show) and which
/// generation it replaced.
#[test]
fn revokes_leave_no_empty_mapping_and_directory_updates_say_what_moved() {
    let w = World::new();
    let dir = w.tmp.path().join("modeler");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = "capabilities:\n  - llm.model_override\n";
    for (path, text) in files("modeler", "1.0.0", manifest, &["pick"]) {
        std::fs::write(dir.join(path), text).unwrap();
    }
    let source = dir.to_str().unwrap();
    w.ok(&[
        "install",
        source,
        "--enable",
        "--grant",
        "llm.model_override",
    ]);
    assert!(
        config(&w).contains("allow_model_override: true"),
        "{}",
        config(&w)
    );
    w.ok(&["capabilities", "modeler", "--revoke", "llm.model_override"]);
    assert!(!config(&w).contains("llm"), "{}", config(&w));
    w.ok(&["capabilities", "modeler", "--grant", "llm.model_override"]);
    assert!(config(&w).contains("llm:"), "{}", config(&w));

    std::fs::write(dir.join("README.md"), "changed\n").unwrap();
    let out = w.ok(&["update", "modeler", "--yes"]);
    assert!(!out.contains("- -> -"), "{out}");
    assert!(out.contains("its directory's contents changed"), "{out}");
    assert!(out.contains("is current (was "), "{out}");

    w.ok(&["remove", "modeler"]);
    assert!(!config(&w).contains("llm"), "{}", config(&w));
}

/// `enable` after `disable` (issue 32): an earlier generation was resolved for exactly these
/// inputs, so its lock is reused and its environment carried over by hard links — no
/// resolution, no download (the index answers 500 meanwhile).
#[test]
fn enabling_again_reuses_the_earlier_generation_resolved_alike() {
    let w = World::new();
    let weather = repo_with(
        &w,
        "weather",
        &files(
            "weather",
            "1.0.0",
            "python_dependencies:\n  - \"weatherlib==1.0.0\"\n",
            &["forecast"],
        ),
    );
    w.ok(&["install", &file_url(&weather), "--enable", "--yes-deps"]);
    w.ok(&["disable", "weather"]);
    assert_eq!(w.current(), Some(2));
    w.index.set_fault(common::index::Fault::Status(500));
    let out = w.json(&["enable", "weather", "--yes-deps"]);
    assert_eq!(out["generation"]["published"], true, "{out:#}");
    assert_eq!(w.current(), Some(3));
    assert_shares_installed_files(&w, 3, 1);
    let lock = |n: u64| {
        read_json(&w.pm().join(format!("generations/{n}/generation.json")))["lock"]["packages"]
            .clone()
    };
    assert_eq!(lock(3), lock(1));
    let (code, out, err) = w.run(&["verify"]);
    assert_eq!(code, Some(0), "{out}{err}");
}

/// Under `--profile P`, `requires_env` is met by the profile's own `.env`
/// (`<home>/profiles/P/.env`, the file Hermes reads for that profile), not by `<home>/.env`;
/// and a value entered at the prompt goes to the profile's file.
#[test]
fn a_profile_reads_its_own_env_file() {
    let w = World::new();
    let dir = weather_needing_a_token(&w);
    std::fs::create_dir_all(w.home.join("profiles/work")).unwrap();
    w.ok(&["install", &file_url(&dir)]);
    // Set for the default profile only: still missing in `work`.
    std::fs::write(w.home.join(".env"), "WEATHER_TOKEN=for-default\n").unwrap();
    let (code, _, err) = w.run(&["--profile", "work", "enable", "weather"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("missing: WEATHER_TOKEN"), "{err}");
    assert!(
        err.contains(&w.home.join("profiles/work/.env").display().to_string()),
        "the warning names the profile's file: {err}"
    );
    let status =
        |w: &World| w.json(&["--profile", "work", "list"])["plugins"][0]["status"]["work"].clone();
    assert_eq!(status(&w), "disabled (missing: WEATHER_TOKEN)");
    // Set in the profile's own file: met, and the agent's reader is handed that file.
    std::fs::write(
        w.home.join("profiles/work/.env"),
        "WEATHER_TOKEN=for-work\n",
    )
    .unwrap();
    assert_eq!(status(&w), "enabled");
    let env = w.json(&["--profile", "work", "env"]);
    assert_ne!(env["plugins"][0]["load"], false, "{env:#}");
    assert!(env["plugins"][0]["missing_env"].is_null(), "{env:#}");
    // Entered at the prompt, it goes to the profile's file; `<home>/.env` is left as it was.
    w.ok(&["--profile", "work", "disable", "weather"]);
    std::fs::remove_file(w.home.join("profiles/work/.env")).unwrap();
    let (code, transcript) = interactive(
        &w,
        &["--profile", "work", "enable", "weather"],
        &[("WEATHER_TOKEN (hidden):", "entered-for-work")],
    );
    assert_eq!(code, 0, "{transcript}");
    assert!(
        std::fs::read_to_string(w.home.join("profiles/work/.env"))
            .unwrap()
            .contains("WEATHER_TOKEN=")
    );
    assert_eq!(
        std::fs::read_to_string(w.home.join(".env")).unwrap(),
        "WEATHER_TOKEN=for-default\n"
    );
}
