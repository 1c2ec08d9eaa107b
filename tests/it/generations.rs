//! Generations end to end, on temp homes, with plugins in real git repositories (made with
//! git2) and dependencies from the loopback test index: install → enable → env → update →
//! rollback → gc; refusals that change nothing; the writer lock and readers' leases.

use crate::common;

use std::path::PathBuf;
use std::process::Command as StdCommand;

use common::world::*;
use common::{fixture, read_json, repo as repo_root, succeeded, validator, violations};
use serde_json::Value;

#[test]
fn install_enable_update_rollback_gc() {
    let w = World::new();
    let repo = w.tmp.path().join("weather-repo");
    let c1 = git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let config = "# my settings\nmodel: gpt-x  # keep\nplugins:\n  enabled: []\nother: 1\n";
    std::fs::write(w.home.join("config.yaml"), config).unwrap();

    // Install: fetched, stored, disabled, no generation yet.
    let installed = w.json(&["install", &file_url(&repo)]);
    assert_eq!(installed["installed"]["source"]["commit"], c1);
    assert_eq!(installed["installed"]["source"]["reviewed"], false);
    assert_eq!(installed["enabled"], false);
    assert_eq!(w.current(), None);
    assert_eq!(
        std::fs::read_to_string(w.home.join("config.yaml")).unwrap(),
        config
    );

    // Enabling without consent in a non-interactive session refuses and changes nothing.
    let (code, _, err) = w.run(&["enable", "weather"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--yes-deps"), "{err}");
    assert!(err.contains("weatherlib==1.0.0"), "{err}");
    assert_eq!(w.current(), None);
    assert_eq!(
        std::fs::read_to_string(w.home.join("config.yaml")).unwrap(),
        config
    );

    // Enable with consent: generation 1, config edited surgically.
    let enabled = w.json(&["enable", "weather", "--yes-deps"]);
    assert_eq!(enabled["generation"]["generation"], 1);
    assert_eq!(w.current(), Some(1));
    assert_eq!(
        std::fs::read_to_string(w.home.join("config.yaml")).unwrap(),
        "# my settings\nmodel: gpt-x  # keep\nplugins:\n  enabled: [weather]\nother: 1\n"
    );
    let env = w.json(&["env"]);
    assert_eq!(env["generation"], 1);
    assert_eq!(env["plugins"][0]["key"], "weather");
    assert!(current_manifest(&w).contains("version: 1.0.0"));
    assert_eq!(
        w.venv_python(
            "import weatherlib, colorlib; print(weatherlib.__version__, colorlib.__version__)"
        ),
        "1.0.0 2.0.0"
    );
    assert!(w.ok(&["verify"]).contains("ok"));

    // A new commit: update swaps code and dependencies in one switch.
    let c2 = commit(
        &repo,
        &plugin_files("weather", "2.0.0", &["weatherlib==2.0.0"]),
        "weather 2.0.0",
    );
    let updated = w.json(&["update", "--all", "--yes"]);
    assert_eq!(updated["plugins"][0]["status"], "updated");
    assert_eq!(updated["plugins"][0]["to"], c2);
    assert_eq!(w.current(), Some(2));
    assert!(current_manifest(&w).contains("version: 2.0.0"));
    assert_eq!(
        w.venv_python("import weatherlib; print(weatherlib.__version__)"),
        "2.0.0"
    );
    assert!(w.ok(&["verify"]).contains("ok"));

    // Nothing changed since: a second update is a no-op.
    let again = w.json(&["update", "--all", "--yes"]);
    assert_eq!(again["plugins"][0]["status"], "unchanged");
    assert_eq!(w.current(), Some(2));

    // Rollback brings both back.
    let back = w.json(&["generations", "rollback"]);
    assert_eq!(back["to"], 1);
    assert_eq!(w.current(), Some(1));
    assert!(current_manifest(&w).contains("version: 1.0.0"));
    assert_eq!(
        w.venv_python("import weatherlib; print(weatherlib.__version__)"),
        "1.0.0"
    );
    let shown = w.json(&["show", "weather"]);
    assert_eq!(shown["plugin"]["source"]["commit"], c1);
    assert!(w.ok(&["verify"]).contains("ok"));

    // gc removes generation 2 and the v2 tree: nothing references them any more.
    let gc = w.json(&["generations", "gc"]);
    assert_eq!(gc["removed_generations"], serde_json::json!([2]));
    assert_eq!(gc["removed_trees"].as_array().unwrap().len(), 1);
    assert_eq!(w.generation_dirs(), vec!["1".to_string()]);
    assert!(w.ok(&["verify"]).contains("ok"));
    let store: Vec<_> = std::fs::read_dir(w.pm().join("store")).unwrap().collect();
    assert_eq!(store.len(), 1);
}

#[test]
fn unresolvable_plugin_changes_nothing() {
    let w = World::new();
    let good = w.tmp.path().join("news");
    git_plugin(&good, None, "news", "1.0.0", &["newslib>=1"]);
    let bad = w.tmp.path().join("broken");
    git_plugin(&bad, None, "broken", "1.0.0", &["weatherlib>=9"]);
    std::fs::write(
        w.home.join("config.yaml"),
        "plugins:\n  enabled:\n    - news # on\n",
    )
    .unwrap();
    w.ok(&["install", &file_url(&good), "--enable", "--yes-deps"]);
    w.ok(&["install", &file_url(&bad)]);
    let config_before = std::fs::read(w.home.join("config.yaml")).unwrap();
    let current_before = std::fs::read_link(w.pm().join("current")).unwrap();
    let installed_before = std::fs::read(w.pm().join("installed.json")).unwrap();

    let (code, out, err) = w.run(&["enable", "broken", "--yes-deps"]);
    assert_eq!(code, Some(1), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("plugin `broken`"), "{out}");
    assert!(err.contains("nothing was changed"), "{err}");
    assert_eq!(
        std::fs::read(w.home.join("config.yaml")).unwrap(),
        config_before
    );
    assert_eq!(
        std::fs::read_link(w.pm().join("current")).unwrap(),
        current_before
    );
    assert_eq!(
        std::fs::read(w.pm().join("installed.json")).unwrap(),
        installed_before
    );
    assert_eq!(w.generation_dirs(), vec!["1".to_string()]);
    assert!(!w.pm().join("journal.json").exists());

    // With --json the conflict comes as data, for Hermes to show in its own words.
    let (code, out, _) = w.run(&["--json", "enable", "broken", "--yes-deps"]);
    assert_eq!(code, Some(1));
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["error"]["exit_code"], 1);
    assert_eq!(
        doc["error"]["details"]["conflict"]["plugins"],
        serde_json::json!(["broken"])
    );
    assert_eq!(
        std::fs::read(w.home.join("config.yaml")).unwrap(),
        config_before
    );
}

#[test]
fn no_op_sync_and_disable() {
    let w = World::new();
    let repo = w.tmp.path().join("news");
    git_plugin(&repo, None, "news", "1.0.0", &["newslib>=1"]);
    w.ok(&["install", &file_url(&repo), "--enable", "--yes-deps"]);
    let synced = w.json(&["sync"]);
    assert_eq!(synced["generation"]["published"], false);
    assert_eq!(w.current(), Some(1));

    // A hand edit of config.yaml is applied by sync (STATE-3).
    std::fs::write(w.home.join("config.yaml"), "plugins:\n  enabled: []\n").unwrap();
    let synced = w.json(&["sync"]);
    assert_eq!(synced["generation"]["published"], true);
    assert_eq!(w.current(), Some(2));
    assert_eq!(w.json(&["env"])["plugins"], serde_json::json!([]));

    // Enable again, then disable: deny wins in config and in the generation.
    w.ok(&["enable", "news", "--yes-deps"]);
    w.ok(&["disable", "news"]);
    let config = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
    assert_eq!(config, "plugins:\n  enabled: []\n  disabled:\n    - news\n");
    let listed = w.json(&["list"]);
    assert_eq!(listed["plugins"][0]["status"]["default"], "disabled");
}

#[test]
fn flags_and_refusals() {
    let w = World::new();
    let repo = w.tmp.path().join("news");
    git_plugin(&repo, None, "news", "1.0.0", &["newslib>=1"]);
    // Both consent flags: usage error.
    let (code, _, _) = w.run(&["install", &file_url(&repo), "--yes-deps", "--no-deps"]);
    assert_eq!(code, Some(2));
    // --no-deps fetches but keeps it disabled even with --enable.
    let out = w.json(&["install", &file_url(&repo), "--enable", "--no-deps"]);
    assert_eq!(out["enabled"], false);
    assert_eq!(w.current(), None);
    // Enable it, then --no-deps cannot replace the active plugin.
    w.ok(&["enable", "news", "--yes-deps"]);
    let (code, _, err) = w.run(&["install", &file_url(&repo), "--no-deps"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot replace an active plugin"), "{err}");

    // A dangerous package is refused even with --force; a bad manifest without --force.
    let dangerous = fixture("python/security-reverse-shell");
    let (code, _, err) = w.run(&["install", dangerous.to_str().unwrap(), "--force"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("dangerous"), "{err}");
    // A package Hermes would not load (it calls a method no release has): refused, --force
    // named; a manifest Hermes reads anyway (a numeric version) only fails catalog admission:
    // installed, with the finding as a warning.
    let unloadable = fixture("ctx-calls/no-such-method");
    let (code, _, err) = w.run(&["install", unloadable.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("Hermes would not load") && err.contains("--force"),
        "{err}"
    );
    let numeric = fixture("bad-native/version-is-a-number");
    let (code, _, err) = w.run(&["install", numeric.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("catalog admission") && err.contains("manifest-fields"),
        "{err}"
    );

    // Unknown plugin names and generations: usage errors.
    assert_eq!(w.run(&["enable", "nope"]).0, Some(2));
    assert_eq!(w.run(&["generations", "rollback", "42"]).0, Some(2));
}

/// A commit that touches nothing of the plugin's subdirectory: `update` says `unchanged A ->
/// B`, publishes nothing, and records B, so `outdated` agrees it is up to date.
#[test]
fn an_update_to_a_commit_outside_the_plugin_records_it() {
    let w = World::new();
    let repo = w.tmp.path().join("tools");
    let c1 = git_plugin(&repo, Some("plugins/news"), "news", "1.0.0", &[]);
    w.ok(&[
        "install",
        &format!("{}#plugins/news", file_url(&repo)),
        "--enable",
        "--yes-deps",
    ]);
    let c2 = commit(
        &repo,
        &[("README.md".to_string(), "elsewhere\n".to_string())],
        "docs",
    );
    let outdated = w.json(&["outdated", "--no-packages"]);
    assert_eq!(outdated["plugins"][0]["status"], "outdated", "{outdated:#}");
    let generation = w.current();
    let updated = w.json(&["update", "news", "--yes"]);
    let row = &updated["plugins"][0];
    assert_eq!(row["status"], "unchanged", "{updated:#}");
    assert_eq!(
        (row["from"].as_str(), row["to"].as_str()),
        (Some(c1.as_str()), Some(c2.as_str()))
    );
    assert_eq!(updated["generation"], Value::Null, "{updated:#}");
    assert_eq!(w.current(), generation);
    let outdated = w.json(&["outdated", "--no-packages"]);
    assert_eq!(
        outdated["plugins"][0]["status"], "up-to-date",
        "{outdated:#}"
    );
    assert_eq!(
        w.json(&["show", "news"])["plugin"]["source"]["commit"],
        c2.as_str()
    );
    // A dry run records nothing.
    let c3 = commit(
        &repo,
        &[("README.md".to_string(), "again\n".to_string())],
        "docs 2",
    );
    let dry = w.json(&["update", "news", "--dry-run"]);
    assert_eq!(dry["plugins"][0]["to"], c3.as_str());
    assert_eq!(
        w.json(&["show", "news"])["plugin"]["source"]["commit"],
        c2.as_str()
    );
    w.ok(&["verify"]);
}

/// An `owner/repo` source goes where this run's `HERMES_PLUGINS_GITHUB` says, for `outdated`
/// as for `update`: the two agree, whatever mirror the install went through.
#[test]
fn outdated_and_update_ask_the_same_github() {
    let w = World::new();
    let first = w.tmp.path().join("gh-a");
    git_plugin(
        &first.join("acme/tools"),
        Some("plugins/news"),
        "news",
        "1.0.0",
        &[],
    );
    let run = |mirror: &std::path::Path, args: &[&str]| {
        let out = w
            .cmd(args)
            .env("HERMES_PLUGINS_GITHUB", file_url(mirror))
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&succeeded(out)).unwrap()
    };
    run(&first, &["--json", "install", "acme/tools/plugins/news"]);
    // Another mirror of the same repository, one commit ahead.
    let second = w.tmp.path().join("gh-b");
    let status = StdCommand::new("git")
        .args(["clone", "-q"])
        .arg(first.join("acme/tools"))
        .arg(second.join("acme/tools"))
        .status()
        .unwrap();
    assert!(status.success());
    let ahead = commit(
        &second.join("acme/tools"),
        &plugin_files("news", "2.0.0", &[])
            .into_iter()
            .map(|(p, t)| (format!("plugins/news/{p}"), t))
            .collect::<Vec<_>>(),
        "v2",
    );
    assert_eq!(
        run(&first, &["--json", "outdated", "--no-packages"])["plugins"][0]["status"],
        "up-to-date"
    );
    let outdated = run(&second, &["--json", "outdated", "--no-packages"]);
    let row = &outdated["plugins"][0];
    assert_eq!(row["status"], "outdated", "{outdated:#}");
    assert_eq!(row["latest"], ahead.as_str(), "{outdated:#}");
    let updated = run(&second, &["--json", "update", "--all", "--yes"]);
    assert_eq!(updated["plugins"][0]["to"], ahead.as_str(), "{updated:#}");
    assert_eq!(
        run(&second, &["--json", "outdated", "--no-packages"])["plugins"][0]["status"],
        "up-to-date"
    );
}

#[test]
fn sources_github_subdir_catalog_and_ref() {
    let w = World::new();
    // A "GitHub" mirror on disk: <base>/<owner>/<repo>.
    let mirror = w.tmp.path().join("gh");
    let repo = mirror.join("acme").join("tools");
    let c1 = git_plugin(
        &repo,
        Some("plugins/news"),
        "news",
        "1.0.0",
        &["newslib>=1"],
    );
    let out = w
        .cmd(&["--json", "install", "acme/tools/plugins/news"])
        .env("HERMES_PLUGINS_GITHUB", file_url(&mirror))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["installed"]["source"]["commit"], c1);
    assert_eq!(doc["installed"]["source"]["subdir"], "plugins/news");
    assert_eq!(doc["installed"]["source"]["spec"]["type"], "github");

    // Subdirectory escapes are refused before anything is fetched.
    let (code, _, err) = w.run(&["install", &format!("{}#plugins/../..", file_url(&repo))]);
    assert_eq!(code, Some(2), "{err}");
    // A subdirectory that is a symlink is refused.
    std::os::unix::fs::symlink("plugins/news", repo.join("link")).unwrap();
    commit(&repo, &[], "add link");
    let (code, _, err) = w.run(&["install", &format!("{}#link", file_url(&repo))]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("symlink"), "{err}");

    // A catalog entry pins repo + sha + subdir; the entry is reviewed.
    let catalog = w.tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::write(
        catalog.join("news.yaml"),
        format!(
            "name: news\nrepo: {}\nsha: {c1}\nsubdir: plugins/news\ntier: official\nmaintainer: acme\n",
            file_url(&repo)
        ),
    )
    .unwrap();
    let doc = w.json(&["install", "news", "--catalog", catalog.to_str().unwrap()]);
    assert_eq!(doc["installed"]["source"]["reviewed"], true);
    assert_eq!(doc["installed"]["source"]["catalog"]["tier"], "official");
    // A catalog name without a catalog is a usage error.
    assert_eq!(w.run(&["install", "news"]).0, Some(2));

    // --ref pins: update leaves it alone.
    let doc = w.json(&[
        "install",
        &format!("{}#plugins/news", file_url(&repo)),
        "--ref",
        &c1,
    ]);
    assert_eq!(doc["installed"]["source"]["pinned_ref"], c1);
    commit(
        &repo,
        &plugin_files("news", "2.0.0", &[])
            .into_iter()
            .map(|(p, t)| (format!("plugins/news/{p}"), t))
            .collect::<Vec<_>>(),
        "v2",
    );
    let up = w.json(&["update", "news"]);
    assert_eq!(up["plugins"][0]["status"], "pinned");
}

#[test]
fn writer_lock_waits_and_times_out() {
    let w = World::new();
    let mut holder = hold_writer_lock(&w);
    let out = w
        .cmd(&["generations", "gc"])
        .env("HERMES_PLUGINS_LOCK_TIMEOUT", "2")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("waiting for pid 4242 (test-holder)"), "{err}");
    // --lock-timeout 0: no wait at all, the holder named in the error.
    let started = std::time::Instant::now();
    let (code, _, err) = w.run(&["--lock-timeout", "0", "generations", "gc"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("pid 4242 (test-holder)"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Readers never take the lock.
    assert_eq!(w.run(&["generations", "list"]).0, Some(0));
    // A holder that died leaves nothing behind: the kernel released its lock.
    let _ = holder.kill();
    let _ = holder.wait();
    let (code, _, err) = w.run(&["--lock-timeout", "0", "generations", "gc"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn gc_keeps_generations_in_use() {
    let w = World::new();
    let repo = w.tmp.path().join("news");
    git_plugin(&repo, None, "news", "1.0.0", &["newslib>=1"]);
    w.ok(&["install", &file_url(&repo), "--enable", "--yes-deps"]);
    w.ok(&["disable", "news"]);
    w.ok(&["enable", "news", "--yes-deps"]);
    assert_eq!(w.current(), Some(3));
    // An agent holds generation 1 open (a shared flock on its generation.json).
    let lease = w.pm().join("generations/1/generation.json");
    let mut agent = StdCommand::new("python3")
        .args([
            "-c",
            "import fcntl,sys,time\nf=open(sys.argv[1])\nfcntl.flock(f,fcntl.LOCK_SH)\nprint('leased',flush=True)\ntime.sleep(30)",
            lease.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(agent.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let gc = w.json(&["generations", "gc"]);
    let _ = agent.kill();
    let _ = agent.wait();
    // 3 is current, 2 its parent, 1 leased: nothing goes.
    assert_eq!(gc["removed_generations"], serde_json::json!([]));
    let kept: Vec<String> = gc["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| format!("{} {}", k[0], k[1].as_str().unwrap()))
        .collect();
    assert!(
        kept.contains(&"1 in use by a running agent".to_string()),
        "{kept:?}"
    );
    // Lease released: 1 goes.
    let gc = w.json(&["generations", "gc"]);
    assert_eq!(gc["removed_generations"], serde_json::json!([1]));
}

#[test]
fn generation_files_match_their_schemas_and_portable_env() {
    let w = World::new();
    let repo = w.tmp.path().join("weather");
    git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    w.ok(&["install", &file_url(&repo), "--enable", "--yes-deps"]);
    // A portable package: no Python, MCP servers and PLUGIN_ROOT/PLUGIN_DATA in `env`.
    let portable = fixture("plugins/summarize-kit");
    w.ok(&["install", portable.to_str().unwrap(), "--enable"]);
    assert_eq!(w.current(), Some(2));

    let generation: Value = read_json(&w.pm().join("current/generation.json"));
    let installed: Value = read_json(&w.pm().join("installed.json"));
    for (schema, doc) in [
        ("generation.schema.json", &generation),
        ("installed.schema.json", &installed),
        ("lock.schema.json", &generation["lock"]),
    ] {
        let v = validator(&repo_root().join("catalog-schema").join(schema));
        assert_eq!(violations(&v, doc), Vec::<String>::new(), "{schema}");
    }
    assert_eq!(generation["number"], 2);
    assert_eq!(generation["parent"], 1);
    assert_eq!(
        generation["profiles"]["default"]["enabled"],
        serde_json::json!(["summarize-kit", "weather"])
    );

    let env = w.json(&["env"]);
    let kit = env["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == "summarize-kit")
        .unwrap()
        .clone();
    assert_eq!(kit["kind"], "portable");
    assert_eq!(kit["env"]["PLUGIN_ROOT"], kit["path"]);
    assert!(
        kit["env"]["PLUGIN_DATA"]
            .as_str()
            .unwrap()
            .ends_with("plugin-data/summarize-kit")
    );
    let servers: Vec<String> = kit["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} {} {}",
                s["name"].as_str().unwrap(),
                s["transport"].as_str().unwrap(),
                s["trust"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        servers,
        [
            "index stdio full",
            "orders streamable-http untrusted",
            "local streamable-http full"
        ]
    );
    // The other profile sees nothing.
    std::fs::create_dir_all(w.home.join("profiles/work")).unwrap();
    let env = w.json(&["--profile", "work", "env"]);
    assert_eq!(env["plugins"], serde_json::json!([]));
    // Removing the portable one publishes a generation without it.
    let removed = w.json(&["remove", "summarize-kit"]);
    assert_eq!(removed["generation"]["generation"], 3);
    let config = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
    assert!(!config.contains("summarize-kit"), "{config}");
}

#[test]
fn catalog_update_repins_and_profiles_union() {
    let w = World::new();
    let repo = w.tmp.path().join("news-repo");
    let c1 = git_plugin(&repo, None, "news", "1.0.0", &["newslib>=1"]);
    let catalog = w.tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    let entry = |sha: &str| {
        format!(
            "name: news\nrepo: {}\nsha: {sha}\ntier: community\nmaintainer: acme\n",
            file_url(&repo)
        )
    };
    std::fs::write(catalog.join("news.yaml"), entry(&c1)).unwrap();
    let cat = catalog.to_str().unwrap();
    w.ok(&[
        "install",
        "news",
        "--catalog",
        cat,
        "--enable",
        "--yes-deps",
    ]);

    // A second profile enables another plugin: the generation holds the union, each
    // profile sees its own selection.
    let other = w.tmp.path().join("weather");
    git_plugin(&other, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    std::fs::create_dir_all(w.home.join("profiles/work")).unwrap();
    w.ok(&["install", &file_url(&other)]);
    w.ok(&["--profile", "work", "enable", "weather", "--yes-deps"]);
    let keys = |profile: &str| -> Vec<String> {
        w.json(&["--profile", profile, "env"])["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["key"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys("default"), ["news"]);
    assert_eq!(keys("work"), ["weather"]);
    let work_config = std::fs::read_to_string(w.home.join("profiles/work/config.yaml")).unwrap();
    assert_eq!(work_config, "plugins:\n  enabled:\n    - weather\n");

    // A new commit is not picked up until the catalog re-pins it.
    let c2 = commit(&repo, &plugin_files("news", "2.0.0", &["newslib>=1"]), "v2");
    let up = w.json(&["update", "news", "--catalog", cat, "--yes"]);
    assert_eq!(up["plugins"][0]["status"], "unchanged");
    std::fs::write(catalog.join("news.yaml"), entry(&c2)).unwrap();
    let up = w.json(&["update", "news", "--catalog", cat, "--yes"]);
    assert_eq!(up["plugins"][0]["status"], "updated");
    assert_eq!(up["plugins"][0]["to"], c2);
    assert_eq!(
        w.json(&["show", "news"])["plugin"]["source"]["catalog"]["sha"],
        c2
    );

    // remove --purge-data: gone from every profile, data deleted; without it data stays.
    let data = w.home.join("plugin-data/weather");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("state.json"), "{}").unwrap();
    w.ok(&["remove", "weather", "--purge-data"]);
    assert!(!data.exists());
    assert_eq!(keys("work"), Vec::<String>::new());
    let news_data = w.home.join("plugin-data/news");
    std::fs::create_dir_all(&news_data).unwrap();
    w.ok(&["remove", "news"]);
    assert!(news_data.exists());
    assert_eq!(w.json(&["list"])["plugins"], serde_json::json!([]));
}

#[test]
fn relative_home_records_paths_inside_the_generation() {
    let w = World::new();
    let repo = w.tmp.path().join("news");
    git_plugin(&repo, None, "news", "1.0.0", &["newslib>=1"]);
    let run = |args: &[&str]| {
        let out = w
            .cmd(args)
            .env_remove("HERMES_HOME")
            .current_dir(w.tmp.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&succeeded(out)).into_owned()
    };
    run(&[
        "--home",
        "home",
        "install",
        &file_url(&repo),
        "--enable",
        "--yes-deps",
    ]);
    run(&["--home", "home", "verify"]);
    let doc: Value = read_json(&w.pm().join("current/generation.json"));
    assert_eq!(doc["python"]["executable"], "venv/bin/python");
    assert!(
        doc["python"]["site_packages"]
            .as_str()
            .unwrap()
            .starts_with("venv/lib/python3.")
    );
    let env: Value = serde_json::from_str(&run(&["--home", "home", "--json", "env"])).unwrap();
    assert!(
        env["python"]["executable"]
            .as_str()
            .unwrap()
            .starts_with(w.home.to_str().unwrap())
    );
    assert!(!env["sys_path"][0].as_str().unwrap().contains(".tmp-"));
}

#[test]
fn gc_older_than_keeps_recent_generations() {
    let w = World::new();
    let repo = w.tmp.path().join("news");
    git_plugin(&repo, None, "news", "1.0.0", &["newslib>=1"]);
    w.ok(&["install", &file_url(&repo), "--enable", "--yes-deps"]);
    w.ok(&["disable", "news"]);
    w.ok(&["enable", "news", "--yes-deps"]);
    let gc = w.json(&["generations", "gc", "--older-than", "1d"]);
    assert_eq!(gc["removed_generations"], serde_json::json!([]));
    assert!(
        gc["kept"].to_string().contains("newer than --older-than"),
        "{gc}"
    );
    let gc = w.json(&["generations", "gc", "--older-than", "0s"]);
    assert_eq!(gc["removed_generations"], serde_json::json!([1]));
    assert_eq!(
        w.run(&["generations", "gc", "--older-than", "7 weeks"]).0,
        Some(2)
    );
}

/// A release is an sdist and several wheels, each with its own hash (as on PyPI): the lock
/// records the hash and URL of the one file chosen, the install admits exactly that file, and
/// the same holds for wheels taken from a `--find-links` directory (hashed from disk).
#[test]
fn the_lock_pins_the_chosen_files_own_hash() {
    let w = World::new();
    let repo = w.tmp.path().join("weather-repo");
    git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    w.ok(&["install", &file_url(&repo), "--enable", "--yes-deps"]);
    let own_hash = |file: &str| {
        let bytes = std::fs::read(w.index.wheels().join(file)).unwrap();
        hermes_plugins::hash::sha256_hex(&bytes)
    };
    let check = |packages: &Value, local: bool| {
        let packages = packages.as_array().unwrap();
        assert_eq!(packages.len(), 2, "{packages:#?}");
        for p in packages {
            let file = p["file"].as_str().unwrap();
            assert!(file.ends_with("-py3-none-any.whl"), "{p}");
            assert_eq!(p["sha256"].as_str(), Some(own_hash(file).as_str()), "{p}");
            let sdist = file.split('-').take(2).collect::<Vec<_>>().join("-") + ".tar.gz";
            assert_ne!(p["sha256"].as_str(), Some(own_hash(&sdist).as_str()));
            let url = p["url"].as_str().unwrap();
            assert!(url.ends_with(file), "{p}");
            assert_eq!(url.starts_with("file://"), local, "{p}");
        }
    };
    let generation = read_json(&w.pm().join("generations/1/generation.json"));
    check(&generation["lock"]["packages"], false);
    assert_eq!(
        w.venv_python("import weatherlib; print(weatherlib.__version__)"),
        "1.0.0"
    );

    // The same release from a local directory of its files: locked by the files' own hashes.
    let local = World::new();
    let repo = local.tmp.path().join("weather-repo");
    git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let wheels = w.index.wheels().to_str().unwrap().to_string();
    local.ok(&[
        "install",
        &file_url(&repo),
        "--enable",
        "--yes-deps",
        "--no-index",
        "--find-links",
        &wheels,
    ]);
    let generation = read_json(&local.pm().join("generations/1/generation.json"));
    check(&generation["lock"]["packages"], true);
}

/// Whether pypi.org answers on 443 within a few seconds (the tests' network is loopback only;
/// CI machines reach PyPI, some through a TLS-inspecting proxy whose CA is in SSL_CERT_FILE).
fn pypi_reachable() -> bool {
    use std::net::ToSocketAddrs;
    let Ok(mut addrs) = ("pypi.org", 443).to_socket_addrs() else {
        return false;
    };
    addrs.any(|a| {
        std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(5)).is_ok()
    })
}

#[test]
fn a_real_pypi_dependency_installs_where_uv_reaches_pypi() {
    if !pypi_reachable() {
        assert!(
            std::env::var("HERMES_PLUGINS_REQUIRE_PYPI").as_deref() != Ok("1"),
            "HERMES_PLUGINS_REQUIRE_PYPI=1 but pypi.org is not reachable"
        );
        eprintln!("pypi.org is not reachable: skipping the real-index test");
        return;
    }
    // httpx and its dependencies: every release an sdist plus wheels, each with its own hash
    // (the lock once recorded the sdist's hash for the wheel, and no real dependency installed).
    let w = World::new();
    let repo = w.tmp.path().join("httpx-repo");
    git_plugin(&repo, None, "fetcher", "1.0.0", &["httpx>=0.27,<1"]);
    succeeded(
        w.cmd(&["install", &file_url(&repo), "--enable", "--yes-deps"])
            .env_remove("HERMES_PLUGINS_INDEX_URL")
            .env_remove("NO_PROXY")
            .output()
            .unwrap(),
    );
    let version = w.venv_python("import httpx, anyio; print(httpx.__version__)");
    assert!(version.starts_with("0."), "{version}");
    let generation = read_json(&w.pm().join("generations/1/generation.json"));
    let packages = generation["lock"]["packages"].as_array().unwrap();
    assert!(packages.len() >= 5, "{packages:#?}");
    for p in packages {
        assert!(p["file"].as_str().unwrap().ends_with(".whl"), "{p}");
        assert_eq!(p["sha256"].as_str().map(str::len), Some(64), "{p}");
    }
    // `verify` re-hashes what is installed against the lock.
    w.ok(&["verify"]);
}

/// Whether a `hermes` command is on PATH (it would be found as the core).
fn hermes_on_path() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("hermes").is_file()))
}

/// `--find-links` and `--python` given as relative paths are recorded absolute: a later
/// command from another directory finds the same wheels and interpreter (README's walk passes
/// `--find-links fixtures/demo/wheels` from the checkout).
#[test]
fn relative_find_links_and_python_keep_working_from_anywhere() {
    let w = World::new();
    let plugin = w.tmp.path().join("weather");
    for (path, text) in plugin_files("weather", "1.0.0", &["weatherlib==1.0.0"]) {
        std::fs::create_dir_all(&plugin).unwrap();
        std::fs::write(plugin.join(path), text).unwrap();
    }
    let wheels = w.tmp.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    for name in [
        "weatherlib-1.0.0-py3-none-any.whl",
        "colorlib-1.0.0-py3-none-any.whl",
    ] {
        std::fs::copy(w.index.wheels().join(name), wheels.join(name)).unwrap();
    }
    // The interpreter by a path relative to the directory the command runs in.
    let python = common::synthetic::python_executable();
    let up = "../".repeat(w.tmp.path().components().count() - 1);
    let relative_python = format!(
        "{up}{}",
        python.display().to_string().trim_start_matches('/')
    );
    let out = w
        .cmd(&[
            "install",
            plugin.to_str().unwrap(),
            "--enable",
            "--yes-deps",
            "--no-index",
            "--find-links",
            "wheels",
            "--python",
            &relative_python,
        ])
        .current_dir(w.tmp.path())
        .env_remove("HERMES_PLUGINS_INDEX_URL")
        .output()
        .unwrap();
    succeeded(out);
    let settings: Value = common::read_json(&w.pm().join("settings.json"));
    assert_eq!(
        settings["find_links"],
        serde_json::json!([wheels.display().to_string()]),
        "{settings:#}"
    );
    let recorded = std::path::PathBuf::from(settings["python"].as_str().unwrap());
    assert!(recorded.is_absolute(), "{settings:#}");
    assert_eq!(
        std::fs::canonicalize(&recorded).unwrap(),
        std::fs::canonicalize(&python).unwrap()
    );
    // Every later command, from another directory, with nothing named.
    let elsewhere = w.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for args in [
        &["resolve"][..],
        &["disable", "weather"],
        &["enable", "weather", "--yes-deps"],
    ] {
        let out = w
            .cmd(args)
            .current_dir(&elsewhere)
            .env_remove("HERMES_PLUGINS_INDEX_URL")
            .output()
            .unwrap();
        succeeded(out);
    }
}

#[test]
fn the_environment_is_recorded_and_core_is_never_guessed() {
    let w = World::new();
    let repo = w.tmp.path().join("weather-repo");
    git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let url = file_url(&repo);
    let bare = |args: &[&str]| {
        let mut c = w.cmd(args);
        c.env_remove("HERMES_PLUGINS_NO_CORE");
        c
    };
    // With no core known, publishing is refused, naming both ways out; nothing changes.
    if !hermes_on_path() {
        let out = bare(&["--json", "install", &url, "--enable", "--yes-deps"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["error"]["code"], "no-core", "{doc:#}");
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(message.contains("--core") && message.contains("--no-core"));
        assert_eq!(w.current(), None);
        assert_eq!(w.json(&["list"])["plugins"], serde_json::json!([]));
    }

    // --no-core is a choice: recorded with the index this run used, shown by list and env.
    succeeded(
        bare(&["install", &url, "--enable", "--yes-deps", "--no-core"])
            .output()
            .unwrap(),
    );
    let config = w.json(&["config", "get"]);
    assert_eq!(config["settings"]["core"], "none", "{config:#}");
    assert_eq!(config["settings"]["index-url"], w.index.url());
    assert!(
        w.json(&["list"])["core"]
            .as_str()
            .unwrap()
            .starts_with("none: resolved without Hermes core")
    );
    assert!(
        w.json(&["env"])["core"]
            .as_str()
            .unwrap()
            .starts_with("none")
    );

    // Later commands use what was recorded: no core flag, no index in the environment.
    let later = |args: &[&str]| {
        succeeded(
            bare(args)
                .env_remove("HERMES_PLUGINS_INDEX_URL")
                .output()
                .unwrap(),
        )
    };
    later(&["disable", "weather"]);
    later(&["enable", "weather", "--yes-deps"]);
    assert_eq!(
        w.venv_python("import weatherlib; print(weatherlib.__version__)"),
        "1.0.0"
    );

    // config set/get/unset, and what it refuses.
    w.ok(&["config", "set", "quarantine-days", "7"]);
    assert_eq!(w.json(&["config", "get", "quarantine-days"])["value"], 7);
    w.ok(&["config", "unset", "quarantine-days"]);
    assert_eq!(
        w.json(&["config", "get", "quarantine-days"])["value"],
        Value::Null
    );
    assert_eq!(w.run(&["config", "set", "colour", "blue"]).0, Some(2));
    assert_eq!(
        w.run(&["config", "set", "core", "/no/such/core"]).0,
        Some(2)
    );

    // An installed Hermes as core: its distributions pin, the change shows in the diff.
    let Some(hermes) = common::hermes_python() else {
        return;
    };
    let core = format!("installed:{}", hermes.display());
    w.ok(&["config", "set", "core", &core]);
    let out = bare(&["--json", "sync", "--yes-deps"])
        .env_remove("HERMES_PLUGINS_INDEX_URL")
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&succeeded(out)).unwrap();
    let changes = doc["generation"]["changes"].to_string();
    assert!(
        changes.contains("core: none -> hermes-agent 0.19.0 (installed "),
        "{doc:#}"
    );
    let generation = read_json(
        &w.pm()
            .join("generations")
            .join(w.current().unwrap().to_string())
            .join("generation.json"),
    );
    assert_eq!(generation["core"]["version"], "0.19.0");
    assert!(
        generation["core"]["origin"]
            .as_str()
            .unwrap()
            .starts_with("installed ")
    );

    // What the interpreter said about its environment is remembered in the user's cache
    // while that environment is unchanged: the next command does not start it again.
    let out = bare(&["-v", "sync"])
        .env_remove("HERMES_PLUGINS_INDEX_URL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    succeeded(out);
    assert!(
        stderr.contains(&format!("installed core {}: remembered", hermes.display())),
        "{stderr}"
    );
}

/// The `plugin.yaml` of the first plugin the current generation's `env` lists.
fn current_manifest(w: &World) -> String {
    let env = w.json(&["env"]);
    let plugin_dir = PathBuf::from(env["plugins"][0]["path"].as_str().unwrap());
    std::fs::read_to_string(plugin_dir.join("plugin.yaml")).unwrap()
}

/// A plugin repository whose manifest carries `extra`.
fn plugin_repo(w: &World, name: &str, version: &str, extra: &str) -> PathBuf {
    repo_with(
        w,
        &format!("{name}-{version}"),
        &[
            (
                "plugin.yaml".to_string(),
                format!("name: {name}\nversion: {version}\ndescription: {name} plugin\n{extra}"),
            ),
            (
                "__init__.py".to_string(),
                "def register(ctx):\n    pass\n".to_string(),
            ),
        ],
    )
}

/// Runs with the core recorded in settings (not `--no-core`); returns code and stdout.
fn with_core(w: &World, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = w
        .cmd(&all)
        .env_remove("HERMES_PLUGINS_NO_CORE")
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), doc)
}

/// A Hermes core checkout of `version` (pyproject.toml + uv.lock, no dependencies) in the
/// world's temp directory; returns its path for `--core`.
fn core_checkout(w: &World, version: &str) -> String {
    let core = w.tmp.path().join("core");
    std::fs::create_dir_all(&core).unwrap();
    std::fs::write(
        core.join("pyproject.toml"),
        format!("[project]\nname = \"hermes-agent\"\nversion = \"{version}\"\ndependencies = []\n"),
    )
    .unwrap();
    std::fs::write(
        core.join("uv.lock"),
        format!("version = 1\nrevision = 2\nrequires-python = \">=3.10\"\n\n[[package]]\nname = \"hermes-agent\"\nversion = \"{version}\"\nsource = {{ editable = \".\" }}\n"),
    )
    .unwrap();
    core.display().to_string()
}

#[test]
fn requires_hermes_is_checked_against_the_core() {
    let w = World::new();
    let core_arg = core_checkout(&w, "0.19.0");
    let future = plugin_repo(&w, "future", "1.0.0", "requires_hermes: \">=0.20, <1\"\n");
    let url = file_url(&future);
    let (code, doc) = with_core(&w, &["install", &url, "--enable", "--core", &core_arg]);
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(doc["error"]["code"], "requires-hermes");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(">=0.20, <1")
            && message.contains("0.19.0")
            && message.contains("--ignore-requires-hermes"),
        "{message}"
    );
    assert_eq!(w.current(), None);

    // Overridden: published, the override recorded for this core version and audited; later
    // operations do not ask again.
    let (code, doc) = with_core(
        &w,
        &["install", &url, "--enable", "--ignore-requires-hermes"],
    );
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["generation"]["published"], true, "{doc:#}");
    let installed = read_json(&w.pm().join("installed.json"));
    assert_eq!(
        installed["plugins"]["future"]["requires_hermes_ignored_for"],
        "0.19.0"
    );
    let audit = std::fs::read_to_string(w.pm().join("audit.log")).unwrap();
    assert!(audit.contains("ignore-requires-hermes"), "{audit}");
    let (code, doc) = with_core(&w, &["sync"]);
    assert_eq!(code, Some(0), "{doc:#}");
}

/// `requires_hermes` is read at enable exactly as `validate` reads it: `v0.19` (which validate
/// accepts) is the floor 0.19 and publishes on a 0.19 core; a spec neither can read is refused
/// naming the way past it, and `--ignore-requires-hermes` is that way.
#[test]
fn requires_hermes_is_read_at_enable_as_validate_reads_it() {
    let w = World::new();
    let core_arg = core_checkout(&w, "0.19.0");
    let prefixed = plugin_repo(&w, "prefixed", "1.0.0", "requires_hermes: \"v0.19\"\n");
    let (code, _, err) = w.run(&["validate", prefixed.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let (code, doc) = with_core(
        &w,
        &[
            "install",
            &file_url(&prefixed),
            "--enable",
            "--core",
            &core_arg,
        ],
    );
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["generation"]["published"], true, "{doc:#}");

    let unreadable = plugin_repo(&w, "unreadable", "1.0.0", "requires_hermes: \"~=0.19\"\n");
    let url = file_url(&unreadable);
    let (code, _, err) = w.run(&["validate", unreadable.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    let (code, doc) = with_core(&w, &["install", &url, "--enable"]);
    assert_ne!(code, Some(0), "{doc:#}");
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("does not parse") || message.contains("~=0.19"),
        "{doc:#}"
    );
    let (code, doc) = with_core(
        &w,
        &[
            "install",
            &url,
            "--replace",
            "--enable",
            "--ignore-requires-hermes",
        ],
    );
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["generation"]["published"], true, "{doc:#}");
}

/// A plugin is judged against the core's Hermes version at every publication: one whose ctx
/// calls only upstream main accepts is refused with the call in the message; one already
/// published when the core changes under it is kept out of the new generation, and the
/// operation's document says why.
#[test]
fn plugins_are_judged_against_the_cores_hermes_version() {
    let w = World::new();
    let core_arg = core_checkout(&w, "0.19.0");
    let newer = repo_with(
        &w,
        "newer",
        &[
            (
                "plugin.yaml".to_string(),
                "name: newer\nversion: 1.0.0\ndescription: needs upstream main\n".to_string(),
            ),
            (
                "__init__.py".to_string(),
                "def _run(args, **kwargs):\n    return 'ok'\n\ndef register(ctx):\n    if ctx.has_capability('tools.override'):\n        pass\n".to_string(),
            ),
        ],
    );
    let url = file_url(&newer);
    let (code, doc) = with_core(&w, &["install", &url, "--enable", "--core", &core_arg]);
    assert_eq!(code, Some(1), "{doc:#}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Hermes 0.19.0 (the core) would not load `newer`")
            && message.contains("has_capability"),
        "{message}"
    );
    assert_eq!(w.current(), None);

    // Published without a core, then the core appears: kept out, and said so.
    let other = w.tmp.path().join("other-home");
    let w2 = World {
        home: other.clone(),
        ..World::new()
    };
    std::fs::create_dir_all(&other).unwrap();
    w2.ok(&["install", &url, "--enable", "--no-core"]);
    let installed = read_json(&w2.pm().join("installed.json"));
    assert_eq!(
        installed["plugins"]["newer"]["loads_on"],
        serde_json::json!([
            "0.20.4", "0.20.5", "0.20.6", "0.21.0", "0.21.3", "0.21.4", "0.21.5", "0.22.2", "main"
        ]),
        "{installed:#}"
    );
    let (code, doc) = with_core(&w2, &["sync", "--core", &core_arg]);
    assert_eq!(code, Some(0), "{doc:#}");
    let held = &doc["generation"]["held_back"];
    assert_eq!(held[0]["plugin"], "newer", "{doc:#}");
    assert!(
        held[0]["reason"]
            .as_str()
            .unwrap()
            .contains("does not load on Hermes 0.19.0"),
        "{doc:#}"
    );
    let generation = read_json(&w2.pm().join(format!(
        "generations/{}/generation.json",
        w2.current().unwrap()
    )));
    assert!(
        !generation["plugins"].to_string().contains("newer"),
        "{generation:#}"
    );
}

#[test]
fn requires_plugins_needs_the_other_plugin_enabled_in_range() {
    let w = World::new();
    let needs = plugin_repo(
        &w,
        "addon",
        "1.0.0",
        "manifest_version: 2\nrequires_plugins:\n  - id: base\n    version_range: \">=2\"\n",
    );
    let (code, out, _) = w.run(&["--json", "install", &file_url(&needs), "--enable"]);
    assert_eq!(code, Some(1), "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["error"]["code"], "requires-plugins", "{doc:#}");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`base` >=2"),
        "{doc:#}"
    );

    let old_base = plugin_repo(&w, "base", "1.0.0", "");
    w.ok(&["install", &file_url(&old_base), "--enable"]);
    w.ok(&["install", &file_url(&needs)]);
    let (code, out, _) = w.run(&["--json", "enable", "addon"]);
    assert_eq!(code, Some(1), "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["error"]["code"], "requires-plugins");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`base` 1.0.0"),
        "{doc:#}"
    );

    let new_base = plugin_repo(&w, "base", "2.1.0", "");
    w.ok(&["install", &file_url(&new_base), "--enable", "--replace"]);
    w.ok(&["enable", "addon"]);
    // Its requirement cannot be disabled from under it.
    let (code, out, _) = w.run(&["--json", "disable", "base"]);
    assert_eq!(code, Some(1), "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["error"]["code"], "requires-plugins", "{doc:#}");
    assert_eq!(
        w.json(&["list"])["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["key"] == "base")
            .unwrap()["status"]["default"],
        "enabled"
    );
    w.ok(&["disable", "addon"]);
    w.ok(&["disable", "base"]);
}

/// Makes a file writable (store trees and installed files are read-only) and rewrites it.
fn tamper(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap();
    let dir_mode = std::fs::metadata(dir).unwrap().permissions().mode();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(dir_mode | 0o700)).unwrap();
    if path.exists() {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn verify_finds_each_problem_it_claims_to() {
    let w = World::new();
    let dir = w.tmp.path().join("weather");
    git_plugin(&dir, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    w.ok(&["install", &file_url(&dir), "--enable", "--yes-deps"]);
    let env = w.json(&["env"]);
    let generation = PathBuf::from(env["path"].as_str().unwrap());
    let link = PathBuf::from(env["plugins"][0]["path"].as_str().unwrap());
    let store_tree = std::fs::canonicalize(&link).unwrap();
    let site = env["sys_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .find(|p| p.ends_with("site-packages") && p.starts_with(&generation))
        .expect("the generation's site-packages is on sys_path");
    let verify = |w: &World| -> (Option<i32>, Vec<(String, String)>) {
        let (code, out, _) = w.run(&["--json", "verify"]);
        let doc: Value = serde_json::from_str(&out).unwrap();
        let problems = doc["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["subject"].as_str().unwrap().to_string(),
                    p["message"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (code, problems)
    };
    assert_eq!(verify(&w), (Some(0), Vec::new()));
    let finds = |w: &World, subject: &str, says: &str| {
        let (code, problems) = verify(w);
        assert_eq!(code, Some(1), "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|(s, m)| s == subject && m.contains(says)),
            "expected `{subject}: …{says}…` in {problems:?}"
        );
    };

    // A store file changed: the tree's NAR hash no longer matches.
    let init = store_tree.join("__init__.py");
    let original = std::fs::read_to_string(&init).unwrap();
    tamper(&init, "def register(ctx):\n    import os\n");
    finds(&w, "plugin weather", "was modified");
    tamper(&init, &original);
    assert_eq!(verify(&w).0, Some(0));

    // A plugin link gone.
    let parked = w.tmp.path().join("parked-link");
    std::fs::rename(&link, &parked).unwrap();
    finds(&w, "plugin weather", "No such file");
    std::fs::rename(&parked, &link).unwrap();
    assert_eq!(verify(&w).0, Some(0));

    // A distribution installed beside the lock, and a locked one missing.
    let extra = site.join("intruder-6.6.6.dist-info");
    std::fs::create_dir(&extra).unwrap();
    std::fs::write(extra.join("RECORD"), "").unwrap();
    finds(&w, "intruder 6.6.6", "not in the lock");
    std::fs::remove_dir_all(&extra).unwrap();
    let info = std::fs::read_dir(&site)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("weatherlib-")
        })
        .expect("weatherlib's dist-info");
    let hidden = w.tmp.path().join("hidden-dist-info");
    std::fs::rename(&info, &hidden).unwrap();
    finds(&w, "weatherlib 1.0.0", "locked but not installed");
    std::fs::rename(&hidden, &info).unwrap();
    assert_eq!(verify(&w).0, Some(0));

    // An installed file that is not what its wheel's RECORD says.
    let record = std::fs::read_to_string(info.join("RECORD")).unwrap();
    let module = record
        .lines()
        .map(|l| l.split(',').next().unwrap())
        .find(|p| p.ends_with(".py"))
        .expect("a module in RECORD");
    tamper(&site.join(module), "print('patched')\n");
    finds(&w, "weatherlib 1.0.0", "differs from its RECORD hash");
}

/// `--locked` resolves but refuses a lock that would change (naming what); `--frozen` never
/// resolves: it installs the current lock when the requirements are those it was resolved
/// for, and refuses otherwise. Nothing moves when they refuse.
#[test]
fn locked_and_frozen() {
    let w = World::new();
    let weather = w.tmp.path().join("weather-repo");
    git_plugin(&weather, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let news = w.tmp.path().join("news-repo");
    git_plugin(&news, None, "news", "1.0.0", &[]);
    w.ok(&["install", &file_url(&weather)]);
    w.ok(&["install", &file_url(&news)]);

    // Nothing published: no lock to freeze, and --locked would add packages.
    let (code, out, _) = w.run(&["--json", "enable", "weather", "--yes-deps", "--frozen"]);
    assert_eq!(code, Some(1), "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["error"]["code"], "lock-changed", "{doc:#}");
    let (code, _, err) = w.run(&["enable", "weather", "--yes-deps", "--locked"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("+weatherlib 1.0.0") && err.contains("+colorlib"),
        "{err}"
    );
    assert_eq!(w.current(), None);

    w.ok(&["enable", "weather", "--yes-deps"]);
    assert_eq!(w.current(), Some(1));
    let lock_of = |n: u64| {
        common::read_json(&w.pm().join(format!("generations/{n}/generation.json")))["lock"]
            ["packages"]
            .clone()
    };
    // Nothing changes: --locked is satisfied.
    w.ok(&["sync", "--locked"]);
    assert_eq!(w.current(), Some(1));
    // A plugin without requirements needs nothing from the lock: --frozen publishes it with
    // the same lock.
    w.ok(&["enable", "news", "--frozen"]);
    assert_eq!(w.current(), Some(2));
    assert_eq!(lock_of(2), lock_of(1));
    // The lock's resolution digest goes with it — and is never recorded empty: a generation
    // that has none (written by an older version) passes on none.
    let doc_path = |n: u64| w.pm().join(format!("generations/{n}/generation.json"));
    let digest_of = |n: u64| common::read_json(&doc_path(n))["resolution_digest"].clone();
    assert!(digest_of(1).as_str().is_some_and(|d| !d.is_empty()));
    assert_eq!(digest_of(2), digest_of(1));
    let mut doc = common::read_json(&doc_path(2));
    doc.as_object_mut().unwrap().remove("resolution_digest");
    std::fs::write(doc_path(2), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    w.ok(&["disable", "news", "--frozen"]);
    assert_eq!(w.current(), Some(3));
    assert_eq!(digest_of(3), Value::Null);
    w.ok(&["enable", "news", "--frozen"]);
    assert_eq!(w.current(), Some(4));

    // weather 2.0 needs weatherlib 2: --frozen refuses (its requirements changed), --locked
    // refuses naming the version change; nothing is published.
    commit(
        &weather,
        &plugin_files("weather", "2.0.0", &["weatherlib==2.0.0"]),
        "weather 2.0.0",
    );
    let (code, _, err) = w.run(&["update", "weather", "--yes", "--frozen"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--frozen") && err.contains("plugin:weather"),
        "{err}"
    );
    let (code, _, err) = w.run(&["update", "weather", "--yes", "--locked"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("weatherlib 1.0.0 -> 2.0.0"), "{err}");
    assert_eq!(w.current(), Some(4));
    w.ok(&["update", "weather", "--yes"]);
    assert_eq!(w.current(), Some(5));
}

/// `outdated`: a git plugin against its branch head and newest tag, a local directory
/// against its HEAD and work tree, and the lock's packages against a fresh resolution —
/// a looser requirement leaves the locked version in place (the lock is preferred), which
/// `outdated` then shows. It changes nothing.
#[test]
fn outdated_plugins_and_packages() {
    let w = World::new();
    let weather = w.tmp.path().join("weather-repo");
    let c1 = git_plugin(&weather, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let news = w.tmp.path().join("news");
    git_plugin(&news, None, "news", "1.0.0", &[]);
    w.ok(&["install", &file_url(&weather), "--enable", "--yes-deps"]);
    w.ok(&["install", news.to_str().unwrap(), "--enable"]);
    let now = w.current();

    let report = w.json(&["outdated"]);
    common::follows_its_schema(&report, None);
    let status = |report: &Value, key: &str| {
        report["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["key"] == key)
            .unwrap_or_else(|| panic!("{key} in {report:#}"))
            .clone()
    };
    assert_eq!(
        status(&report, "weather")["status"],
        "up-to-date",
        "{report:#}"
    );
    assert_eq!(status(&report, "weather")["latest"], c1.as_str());
    assert_eq!(
        status(&report, "news")["status"],
        "up-to-date",
        "{report:#}"
    );
    assert_eq!(report["packages"], serde_json::json!([]), "{report:#}");

    // Upstream moves: a new commit and tag for weather (its requirement loosened), a new
    // commit plus an uncommitted edit in the news directory.
    let c2 = commit(
        &weather,
        &plugin_files("weather", "1.1.0", &["weatherlib>=1"]),
        "weather 1.1.0",
    );
    let repo = git2::Repository::open(&weather).unwrap();
    let head = repo.revparse_single(&c2).unwrap();
    repo.tag_lightweight("v1.1.0", &head, false).unwrap();
    repo.tag_lightweight("v0.9.0", &head, false).unwrap();
    commit(&news, &[("NOTES.md".into(), "notes\n".into())], "notes");
    std::fs::write(news.join("NOTES.md"), "edited\n").unwrap();
    let report = w.json(&["outdated", "--no-packages"]);
    common::follows_its_schema(&report, None);
    let row = status(&report, "weather");
    assert_eq!(row["status"], "outdated", "{report:#}");
    assert_eq!(
        (row["current"].as_str(), row["latest"].as_str()),
        (Some(c1.as_str()), Some(c2.as_str()))
    );
    assert_eq!(row["newest_tag"], "v1.1.0", "{report:#}");
    let row = status(&report, "news");
    assert_eq!(row["status"], "changed", "{report:#}");
    assert!(
        row["note"].as_str().unwrap().contains("uncommitted"),
        "{report:#}"
    );
    assert_eq!(report["packages"], Value::Null);
    assert_eq!(w.current(), now, "outdated changes nothing");

    // The update keeps weatherlib 1.0.0 (the lock is preferred); a fresh resolution would
    // take 2.0.0 — outdated says so, in words too.
    w.ok(&["update", "weather", "--yes"]);
    let report = w.json(&["outdated"]);
    assert_eq!(
        status(&report, "weather")["status"],
        "up-to-date",
        "{report:#}"
    );
    let packages = report["packages"].as_array().unwrap();
    assert!(
        packages.iter().any(|p| p["name"] == "weatherlib"
            && p["current"] == "1.0.0"
            && p["latest"] == "2.0.0"),
        "{report:#}"
    );
    let (code, out, err) = w.run(&["outdated"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("weatherlib") && out.contains("1.0.0 -> 2.0.0"),
        "{out}"
    );
}

/// `rollback N` brings generation N back whole: a plugin removed since gets its installed
/// record again (so the next `sync` keeps it), and the external plugins N had enabled (from
/// `<home>/plugins`) are enabled again in `config.yaml`.
#[test]
fn rollback_restores_removed_plugins_and_external_ones() {
    let w = World::new();
    let keep = plugin_repo(&w, "keep", "1.0.0", "");
    let gone = plugin_repo(&w, "gone", "1.0.0", "");
    let ext = w.home.join("plugins").join("handmade");
    std::fs::create_dir_all(&ext).unwrap();
    std::fs::write(
        ext.join("plugin.yaml"),
        "name: handmade\nversion: 0.1.0\ndescription: put here by hand\n",
    )
    .unwrap();
    std::fs::write(ext.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
    w.ok(&["install", &file_url(&keep), "--enable"]);
    w.ok(&["install", &file_url(&gone), "--enable"]);
    let config = w.home.join("config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("    - gone\n", "    - gone\n    - handmade\n"),
    )
    .unwrap();
    w.ok(&["sync"]);
    let target = w.current().unwrap();
    let doc = common::read_json(&w.pm().join(format!("generations/{target}/generation.json")));
    assert_eq!(
        doc["profiles"]["default"]["external"],
        serde_json::json!(["handmade"]),
        "{doc:#}"
    );
    // `env` lists it, as the agent's reader does: where Hermes loads it from.
    let env = w.json(&["env"]);
    common::follows_its_schema(&env, None);
    assert_eq!(
        env["external"],
        serde_json::json!([{ "name": "handmade", "path": ext.display().to_string() }]),
        "{env:#}"
    );
    let human = w.ok(&["env"]);
    assert!(
        human.contains(&format!(
            "handmade (external: not managed, loaded by Hermes) {}",
            ext.display()
        )),
        "{human}"
    );

    // Since then: `gone` removed, `handmade` taken off the list by hand.
    w.ok(&["remove", "gone"]);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("    - handmade\n", "")).unwrap();
    w.ok(&["sync"]);

    w.ok(&["generations", "rollback", &target.to_string()]);
    let installed = common::read_json(&w.pm().join("installed.json"));
    let keys: Vec<&String> = installed["plugins"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["gone", "keep"], "{installed:#}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains("- gone") && text.contains("- handmade"),
        "{text}"
    );
    // The next sync keeps everything the rolled-back generation had.
    w.ok(&["sync"]);
    let now = w.current().unwrap();
    let doc = common::read_json(&w.pm().join(format!("generations/{now}/generation.json")));
    assert_eq!(
        doc["profiles"]["default"]["enabled"],
        serde_json::json!(["gone", "keep"]),
        "{doc:#}"
    );
    assert_eq!(
        doc["profiles"]["default"]["external"],
        serde_json::json!(["handmade"]),
        "{doc:#}"
    );
}

/// A home bounded by policy (issue 32): each publication keeps the newest `keep-generations`
/// (recorded in pm/settings.json), the current one and its parent, and collects the rest with
/// the store trees only they used; `generations list` says why each is kept and which one
/// the next publication collects; `keep-generations 0` collects nothing.
#[test]
fn publications_keep_the_newest_generations_by_policy() {
    let w = World::new();
    let repo = w.tmp.path().join("news");
    git_plugin(&repo, None, "news", "1.0.0", &["newslib>=1"]);
    w.ok(&["config", "set", "keep-generations", "2"]);
    w.ok(&["install", &file_url(&repo), "--enable", "--yes-deps"]);
    for _ in 0..2 {
        w.ok(&["disable", "news"]);
        w.ok(&["enable", "news", "--yes-deps"]);
    }
    // Five publications; the newest two (4, 5) stay, 5 is current and 4 its parent.
    let numbers = |w: &World| -> Vec<u64> {
        w.json(&["generations", "list"])["generations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["number"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(numbers(&w), [4, 5]);
    let list = w.json(&["generations", "list"]);
    assert_eq!(list["generations"][1]["kept"], "current", "{list:#}");
    assert_eq!(
        list["generations"][0]["kept"], "parent of current",
        "{list:#}"
    );

    // Rolled back to 4: 5 is now one of the newest kept, not collected.
    w.ok(&["generations", "rollback"]);
    w.ok(&["config", "set", "keep-generations", "1"]);
    let list = w.json(&["generations", "list"]);
    assert_eq!(list["generations"][0]["kept"], "current", "{list:#}");
    assert_eq!(
        list["generations"][1]["kept"], "one of the newest 1 (keep-generations)",
        "{list:#}"
    );

    // Policy off: nothing is collected, and the list says so (4 is current: news disabled).
    w.ok(&["config", "set", "keep-generations", "0"]);
    w.ok(&["enable", "news", "--yes-deps"]);
    w.ok(&["disable", "news"]);
    assert_eq!(numbers(&w), [4, 5, 6, 7]);
    let list = w.json(&["generations", "list"]);
    assert!(
        list["generations"][0]["kept"]
            .as_str()
            .is_some_and(|k| k.contains("nothing is collected")),
        "{list:#}"
    );
    // Back on at 2: the next publication collects down to the newest two (+ current's parent).
    w.ok(&["config", "set", "keep-generations", "2"]);
    let (_, human, _) = w.run(&["generations", "list"]);
    assert!(
        human.contains("(collected by the next publication)"),
        "{human}"
    );
    w.ok(&["enable", "news", "--yes-deps"]);
    assert_eq!(numbers(&w), [7, 8]);
}

/// What uv learns about an interpreter is kept once for every home (`<cache dir>/uv`), so a
/// new home's first publication does not query it again; the homes keep only their own
/// downloads. A cache directory that cannot be used costs the query, nothing else.
#[test]
fn interpreter_facts_are_shared_between_homes() {
    let shared = tempfile::tempdir().unwrap();
    let first = World::new();
    first.enable_news_with_user_cache(shared.path());
    let facts = common::interpreter_facts(&shared.path().join("uv"));
    assert!(facts >= 1);
    assert_eq!(common::interpreter_facts(&first.pm().join("cache/uv")), 0);

    // A second home finds the facts: nothing new is written, its own cache has none.
    let second = World::new();
    second.enable_news_with_user_cache(shared.path());
    assert_eq!(common::interpreter_facts(&shared.path().join("uv")), facts);
    assert_eq!(common::interpreter_facts(&second.pm().join("cache/uv")), 0);

    // A cache directory that is a file: the home's cache keeps the facts instead.
    let third = World::new();
    let blocked = third.tmp.path().join("not-a-directory");
    std::fs::write(&blocked, "").unwrap();
    third.enable_news_with_user_cache(&blocked);
    assert!(common::interpreter_facts(&third.pm().join("cache/uv")) >= 1);
}

/// `outdated` in a home where nothing is published compares nothing, so it needs no core.
#[test]
fn outdated_in_an_empty_home_needs_no_core() {
    let w = World::new();
    let out = w
        .cmd(&["outdated"])
        .env_remove("HERMES_PLUGINS_NO_CORE")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let text = String::from_utf8(succeeded(out)).unwrap();
    assert!(text.contains("No plugins installed"), "{text}");
    assert!(
        text.contains("none yet (no generation is published)"),
        "{text}"
    );
    let json = w
        .cmd(&["--json", "outdated"])
        .env_remove("HERMES_PLUGINS_NO_CORE")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&succeeded(json)).unwrap();
    common::follows_its_schema(&doc, None);
    assert_eq!(doc["packages"], Value::Null, "{doc:#}");
}
