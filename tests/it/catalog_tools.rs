//! `catalog review`, `catalog resolve-all`, `search` and the kill list, through the binary,
//! against local git repositories reached through `HERMES_PLUGINS_GIT_INSTEAD_OF` (entries keep
//! their https URLs) and the loopback index.

use crate::common;

use std::path::{Path, PathBuf};

use common::follows_its_schema;
use common::world::*;
use serde_json::Value;

const HOST: &str = "https://git.example.org/";

/// A catalog world: the index, a mirror directory standing in for `HOST`, a catalog dir.
struct Cat {
    w: World,
    mirror: PathBuf,
    catalog: PathBuf,
}

impl Cat {
    fn new() -> Cat {
        let w = World::new();
        let mirror = w.tmp.path().join("mirror");
        let catalog = w.tmp.path().join("catalog");
        std::fs::create_dir_all(&mirror).unwrap();
        std::fs::create_dir_all(&catalog).unwrap();
        Cat { w, mirror, catalog }
    }

    /// A repository `acme/<name>` with a plugin; returns its first commit.
    fn repo(&self, name: &str, deps: &[&str]) -> String {
        git_plugin(
            &self.mirror.join("acme").join(name),
            None,
            name,
            "1.0.0",
            deps,
        )
    }

    fn entry(&self, name: &str, sha: &str, extra: &str) -> PathBuf {
        let path = self.catalog.join(format!("{name}.yaml"));
        std::fs::write(
            &path,
            format!(
                "name: {name}\nrepo: {HOST}acme/{name}\nsha: \"{sha}\"\ndescription: The {name} plugin\nmaintainer: acme\ntier: community\n{extra}"
            ),
        )
        .unwrap();
        path
    }

    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        self.run_with(args, &[])
    }

    /// [`Cat::run`] with more environment variables.
    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
        let mut cmd = self.w.cmd(args);
        cmd.env(
            "HERMES_PLUGINS_GIT_INSTEAD_OF",
            format!("{HOST}={}/", file_url(&self.mirror)),
        )
        .env("HERMES_PLUGINS_CATALOG", &self.catalog);
        for (k, v) in env {
            cmd.env(k, v);
        }
        outcome(&mut cmd)
    }
}

fn items(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["kind"].as_str().unwrap(),
                c["item"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn review_of_a_changed_entry() {
    let c = Cat::new();
    let repo = c.mirror.join("acme/weather");
    let c1 = c.repo("weather", &["weatherlib==1.0.0"]);
    let old = c.w.tmp.path().join("old-weather.yaml");
    std::fs::write(
        &old,
        format!("name: weather\nrepo: {HOST}acme/weather\nsha: {c1}\nmaintainer: acme\n"),
    )
    .unwrap();
    // Two commits later: a new tool, a hook and a dependency change.
    commit(&repo, &[("README.md".into(), "docs\n".into())], "docs");
    let mut v2 = plugin_files("weather", "2.0.0", &["weatherlib==2.0.0"]);
    v2[0].1 = v2[0].1.replace(
        "provides_tools:\n  - weather_tool\n",
        "provides_tools:\n  - weather_tool\n  - weather_alerts\nprovides_hooks:\n  - on_session_start\n",
    );
    v2[1].1.push_str(
        "\ndef _hook(**kwargs):\n    return None\n\ndef _more(ctx):\n    ctx.register_tool(name=\"weather_alerts\", toolset=\"weather\", schema={}, handler=_tool)\n    ctx.register_hook(\"on_session_start\", _hook)\n",
    );
    v2[1].1 = v2[1]
        .1
        .replace("handler=_tool)\n", "handler=_tool)\n    _more(ctx)\n");
    let c3 = commit(&repo, &v2, "v2");
    let new = c.entry(
        "weather",
        &c3,
        "capabilities:\n  provides_tools: [weather_tool, weather_alerts]\n  provides_hooks: [on_session_start]\n",
    );
    let (code, out, err) = c.run(&[
        "catalog",
        "review",
        new.to_str().unwrap(),
        "--base",
        old.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let review: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(review["ok"], true, "{out}");
    assert_eq!(review["base"]["commits"], 2);
    assert_eq!(review["base"]["fast_forward"], true);
    assert_eq!(
        items(&review["base"]["surface"]["added"]),
        [
            "tool weather_alerts",
            "hook on_session_start",
            "dependency weatherlib==2.0.0"
        ]
    );
    assert_eq!(
        items(&review["base"]["surface"]["removed"]),
        ["dependency weatherlib==1.0.0"]
    );
    assert_eq!(review["package"]["version"], "2.0.0");

    // Markdown for the PR comment carries the same diff.
    let (_, md, _) = c.run(&[
        "catalog",
        "review",
        new.to_str().unwrap(),
        "--base",
        old.to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    assert!(md.contains("(2 commits)"), "{md}");
    assert!(md.contains("| ➕ | tool | `weather_alerts` |"), "{md}");

    // A capabilities block that doesn't match the package is an error.
    c.entry(
        "weather",
        &c3,
        "capabilities:\n  provides_tools: [weather_tool]\n",
    );
    let (code, out, _) = c.run(&["--json", "catalog", "review", new.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    let review: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(follows_its_schema(&review, None), "review.schema.json");
    let checks: Vec<&str> = review["entry_findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert_eq!(
        checks,
        [
            "catalog-capabilities-mismatch",
            "catalog-capabilities-mismatch"
        ]
    );

    // An unreachable sha is an error, not a review.
    c.entry("weather", &"0".repeat(40), "");
    let (code, _, err) = c.run(&["catalog", "review", new.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("0000000000000000000000000000000000000000"),
        "{err}"
    );
    // An unreachable repository is the network's fault: exit 3, code `network`.
    std::fs::write(
        &new,
        format!(
            "name: weather\nrepo: https://127.0.0.1:9/acme/weather\nsha: \"{}\"\ndescription: The weather plugin\nmaintainer: acme\ntier: community\n",
            "1".repeat(40)
        ),
    )
    .unwrap();
    let (code, out, _) = c.run(&["--json", "catalog", "review", new.to_str().unwrap()]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, Some(3), "{doc:#}");
    assert_eq!(follows_its_schema(&doc, Some(3)), "error.schema.json");
    assert_eq!(doc["error"]["code"], "network");
}

#[test]
fn resolve_all_names_both_sides_of_a_conflict() {
    let c = Cat::new();
    let a = c.repo("alpha", &["newslib>=1"]);
    let b = c.repo("bravo", &["weatherlib==1.0.0"]);
    let cc = c.repo("charlie", &["weatherlib==2.0.0"]);
    let d = c.repo("delta", &["colorlib>=1"]);
    c.entry("alpha", &a, "");
    c.entry("bravo", &b, "");
    c.entry("charlie", &cc, "");
    c.entry("delta", &d, "");
    c.entry("echo", &"1".repeat(40), "");
    let dir = c.catalog.to_str().unwrap();
    let (code, out, err) = c.run(&["catalog", "resolve-all", dir, "--format", "github"]);
    assert_eq!(code, Some(1), "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with(&format!(
            "::error file={dir}/bravo.yaml::bravo: joint: conflicts with `charlie`"
        )),
        "{out}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "::error file={dir}/charlie.yaml::charlie: joint: conflicts with `bravo`"
        )),
        "{out}"
    );
    assert!(
        lines[2].starts_with(&format!("::error file={dir}/echo.yaml::echo: fetch:")),
        "{out}"
    );

    let (_, out, _) = c.run(&["--json", "catalog", "resolve-all", dir]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(follows_its_schema(&report, None), "resolve-all.schema.json");
    assert_eq!(
        report["conflicts"],
        serde_json::json!([["charlie", "bravo"]])
    );
    assert_eq!(report["joint_ok"], false);
    let ok: Vec<&str> = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ok"] == true)
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(ok, ["alpha", "delta"]);
    // People see what the count is counted with: here, no core.
    let (_, out, _) = c.run(&["catalog", "resolve-all", dir]);
    assert!(
        out.contains("✓ alpha (1 package(s), without core)"),
        "{out}"
    );
}

#[test]
fn search_and_the_kill_list() {
    let c = Cat::new();
    let a = c.repo("forecast", &["newslib>=1"]);
    c.entry(
        "forecast",
        &a,
        "tags: [weather]\ncapabilities:\n  provides_tools: [forecast_tool]\n",
    );
    let b = c.repo("headlines", &["newslib>=1"]);
    c.entry("headlines", &b, "tags: [news]\n");
    let (code, out, _) = c.run(&["--json", "search", "weather"]);
    assert_eq!(code, Some(0));
    let hits: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(follows_its_schema(&hits, None), "search.schema.json");
    assert_eq!(hits["results"][0]["name"], "forecast");
    assert_eq!(hits["results"].as_array().unwrap().len(), 1);
    let (_, out, _) = c.run(&["search", "forecast_tool"]);
    assert!(
        out.contains("forecast") && out.contains("1 tool(s)"),
        "{out}"
    );
    // A catalog that is not there is an error, not "no entry matches".
    let missing = c.catalog.with_file_name("no-such-catalog");
    let (code, out, err) = c.run(&["search", "weather", "--catalog", missing.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("no-such-catalog") && err.contains("not a directory"),
        "{err}"
    );
    assert!(!out.contains("No catalog entry matches"), "{out}");

    // The kill list blocks install by name (and by repo), unless --allow-removed.
    std::fs::write(
        c.catalog.join("removed.yaml"),
        format!("removed:\n  - name: headlines\n    reason: malware\n    date: \"2026-11-01\"\n  - name: other\n    repo: {HOST}acme/forecast.git\n"),
    )
    .unwrap();
    let (code, _, err) = c.run(&["install", "headlines"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("removal list") && err.contains("malware") && err.contains("--allow-removed"),
        "{err}"
    );
    let (code, out, err) = c.run(&["--json", "install", "forecast"]);
    assert_eq!(code, Some(1), "{err}");
    let refusal: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(refusal["error"]["code"], "removed", "{refusal:#}");
    // A kill list that cannot be read fails closed: nothing installs, the file is named.
    let kill_list = std::fs::read_to_string(c.catalog.join("removed.yaml")).unwrap();
    std::fs::write(
        c.catalog.join("removed.yaml"),
        "removed:\n  - reason: no name\n",
    )
    .unwrap();
    let (code, out, err) = c.run(&["--json", "install", "search-me-not"]);
    assert_eq!(code, Some(1), "{err}");
    let refusal: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(refusal["error"]["code"], "removed", "{refusal:#}");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("removed.yaml"),
        "{refusal:#}"
    );
    std::fs::write(c.catalog.join("removed.yaml"), kill_list).unwrap();
    // Checked before any fetch: an entry whose repository is gone is refused for what it is
    // (reason and date), not with a clone error; a git URL spelled another way is the same repo.
    let gone = c.repo("oldtool", &[]);
    c.entry("oldtool", &gone, "");
    std::fs::remove_dir_all(c.mirror.join("acme/oldtool")).unwrap();
    let mut list = std::fs::read_to_string(c.catalog.join("removed.yaml")).unwrap();
    list.push_str(
        "  - name: oldtool\n    reason: abandoned, repository deleted\n    date: \"2026-10-15\"\n",
    );
    std::fs::write(c.catalog.join("removed.yaml"), list).unwrap();
    let (code, out, err) = c.run(&["--json", "install", "oldtool"]);
    assert_eq!(code, Some(1), "{err}");
    let refusal: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(refusal["error"]["code"], "removed", "{refusal:#}");
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("abandoned")
            && message.contains("2026-10-15")
            && !message.contains("clone"),
        "{message}"
    );
    for spelling in [
        format!("{HOST}ACME/forecast/"),
        "https://www.git.example.org/acme/forecast.git".to_string(),
    ] {
        let (code, out, err) = c.run(&["--json", "install", &spelling]);
        assert_eq!(code, Some(1), "{spelling}: {err}");
        let refusal: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            refusal["error"]["code"], "removed",
            "{spelling}: {refusal:#}"
        );
    }
    let (code, _, err) = c.run(&["install", "headlines", "--allow-removed"]);
    assert_eq!(code, Some(0), "{err}");
    let (_, out, _) = c.run(&["--json", "list"]);
    let listed: Value = serde_json::from_str(&out).unwrap();
    let status = listed["plugins"][0]["status"]["default"].as_str().unwrap();
    assert!(status.starts_with("blocked"), "{status}");
    let _ = Path::new("");
}

/// Several catalogs: the first listed gives an entry its name shadows in a later one (flags
/// and the space-separated variable alike); a name only a later catalog has is found there;
/// every catalog's kill list applies; `search` shows the winning entry and its catalog.
#[test]
fn several_catalogs_the_first_has_precedence() {
    let c = Cat::new();
    let public = c.w.tmp.path().join("public");
    std::fs::create_dir_all(&public).unwrap();
    let v1 = c.repo("forecast", &[]);
    let v2 = commit(
        &c.mirror.join("acme/forecast"),
        &[("NEWS.md".into(), "v2\n".into())],
        "v2",
    );
    c.entry("forecast", &v1, "description: private pin\n");
    let radar = c.repo("radar", &[]);
    c.entry("radar", &radar, "");
    let entry = |name: &str, sha: &str| {
        std::fs::write(
            public.join(format!("{name}.yaml")),
            format!("name: {name}\nrepo: {HOST}acme/{name}\nsha: \"{sha}\"\ndescription: public {name}\nmaintainer: acme\n"),
        )
        .unwrap();
    };
    entry("forecast", &v2);
    let tides = c.repo("tides", &[]);
    entry("tides", &tides);
    std::fs::write(
        public.join("removed.yaml"),
        "removed:\n  - name: radar\n    reason: sends data home\n",
    )
    .unwrap();
    let private = c.catalog.to_str().unwrap().to_string();
    let public = public.to_str().unwrap().to_string();
    let installed_commit = |env: &[(&str, &str)]| {
        let (_, out, _) = c.run_with(&["--json", "list"], env);
        let listed: Value = serde_json::from_str(&out).unwrap();
        listed["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["key"] == "forecast")
            .map(|p| p["commit"].as_str().unwrap().to_string())
    };

    // Flags: private first → its pin.
    let (code, _, err) = c.run(&[
        "install",
        "forecast",
        "--catalog",
        &private,
        "--catalog",
        &public,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(installed_commit(&[]).as_deref(), Some(&v1[..12]));
    let (code, _, err) = c.run(&["remove", "forecast"]);
    assert_eq!(code, Some(0), "{err}");
    // The variable, public first → the public pin.
    let both = format!("{public} {private}");
    let env = [("HERMES_PLUGINS_CATALOG", both.as_str())];
    let (code, _, err) = c.run_with(&["install", "forecast"], &env);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(installed_commit(&env).as_deref(), Some(&v2[..12]));
    // From here on, the variable with the private catalog first.
    let private_first = format!("{private} {public}");
    let ordered = [("HERMES_PLUGINS_CATALOG", private_first.as_str())];
    // Only the later catalog has it: found there.
    let (code, _, err) = c.run_with(&["install", "tides"], &ordered);
    assert_eq!(code, Some(0), "{err}");
    // The public kill list blocks the private catalog's entry.
    let (code, out, err) = c.run_with(&["--json", "install", "radar"], &ordered);
    assert_eq!(code, Some(1), "{err}");
    let refusal: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(refusal["error"]["code"], "removed", "{refusal:#}");
    assert!(err.contains("sends data home"), "{err}");
    // Alone, the private catalog has no kill list naming it.
    let (code, _, err) = c.run(&["install", "radar", "--catalog", &private]);
    assert_eq!(code, Some(0), "{err}");
    // search: one forecast, the first catalog's, named.
    let (code, out, err) = c.run_with(&["--json", "search", "forecast"], &ordered);
    assert_eq!(code, Some(0), "{err}");
    let hits: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(follows_its_schema(&hits, None), "search.schema.json");
    let results = hits["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{hits:#}");
    assert_eq!(results[0]["description"], "private pin");
    assert_eq!(results[0]["catalog"], private.as_str());
    // …and for people too.
    let (code, out, err) = c.run_with(&["search", "forecast"], &ordered);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&format!("(from {private})")), "{out}");
    // catalog update names each catalog, in order.
    let (code, out, err) = c.run_with(&["--json", "catalog", "update"], &ordered);
    assert_eq!(code, Some(0), "{err}");
    let updated: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        follows_its_schema(&updated, None),
        "catalog-update.schema.json"
    );
    assert_eq!(updated["catalogs"][0]["catalog"], private.as_str());
    assert_eq!(updated["catalogs"][0]["entries"], 2);
    assert_eq!(updated["catalogs"][1]["entries"], 2);
}

/// The GitHub Action's script (`scripts/catalog-action.sh`, what `action.yml` runs) on a
/// simulated pull request: a catalog repository whose head commit moves one entry to a new
/// commit and adds another. Both are reviewed (the moved one against its base version), the
/// SARIF file, the step summary and the step outputs are written; a defective entry makes
/// the job fail with its finding in the SARIF.
#[test]
fn the_action_script_reviews_a_pull_request() {
    let c = Cat::new();
    let a1 = c.repo("alpha", &["newslib>=1"]);
    c.entry("alpha", &a1, "");
    std::fs::write(c.catalog.join("removed.yaml"), "removed: []\n").unwrap();
    git2::Repository::init(&c.catalog).unwrap();
    let base = commit(&c.catalog, &[], "base");
    let a2 = commit(
        &c.mirror.join("acme/alpha"),
        &[("NOTES.md".into(), "notes\n".into())],
        "notes",
    );
    c.entry("alpha", &a2, "");
    let b1 = c.repo("beta", &["newslib>=1"]);
    c.entry("beta", &b1, "");
    commit(&c.catalog, &[], "move alpha, add beta");

    let out = c.w.tmp.path().join("out");
    let run_script = || {
        let template = c.w.std_cmd(&[]);
        let mut cmd = std::process::Command::new("bash");
        for (k, v) in template.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let summary = c.w.tmp.path().join("summary.md");
        let outputs = c.w.tmp.path().join("outputs");
        let _ = std::fs::remove_file(&summary);
        let _ = std::fs::remove_file(&outputs);
        #[allow(deprecated)]
        let bin = assert_cmd::cargo::cargo_bin("hermes-plugins");
        let result = cmd
            .arg(common::repo().join("scripts/catalog-action.sh"))
            .current_dir(&c.catalog)
            .env("CATALOG", ".")
            .env("BASE_REF", &base)
            .env("CORE", "none")
            .env("OUT", &out)
            .env("HERMES_PLUGINS_BIN", bin)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &outputs)
            .env(
                "HERMES_PLUGINS_GIT_INSTEAD_OF",
                format!("{HOST}={}/", file_url(&c.mirror)),
            )
            .output()
            .unwrap();
        (
            result,
            std::fs::read_to_string(&summary).unwrap_or_default(),
            std::fs::read_to_string(&outputs).unwrap_or_default(),
        )
    };

    let (result, summary, outputs) = run_script();
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&result.stdout).into_owned();
    assert_eq!(result.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("2 entries reviewed"), "{stderr}");
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("catalog.sarif")).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        sarif["runs"][0]["results"].as_array().unwrap().len(),
        0,
        "{sarif:#}"
    );
    let review = std::fs::read_to_string(out.join("review.md")).unwrap();
    assert!(
        review.contains("alpha") && review.contains("beta"),
        "{review}"
    );
    // alpha is reviewed as a change from its base pin, beta as an addition.
    assert!(
        review.contains(&a1[..7]) && review.contains(&a2[..7]),
        "{review}"
    );
    assert!(
        summary.contains(&review),
        "the review is in the step summary: {summary}"
    );
    assert!(
        outputs.contains(&format!("sarif={}", out.join("catalog.sarif").display()))
            && outputs.contains("reviewed=2"),
        "{outputs}"
    );

    // A head with a defective entry: the job fails, the finding is in the SARIF.
    std::fs::write(
        c.catalog.join("gamma.yaml"),
        "name: gamma\nrepo: https://git.example.org/acme/gamma\nsha: main\nmaintainer: acme\n",
    )
    .unwrap();
    commit(&c.catalog, &[], "add gamma");
    let (result, _, outputs) = run_script();
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    let sarif = std::fs::read_to_string(out.join("catalog.sarif")).unwrap();
    assert!(
        sarif.contains("gamma.yaml") && sarif.contains("sha"),
        "{sarif}"
    );
    assert!(outputs.contains("reviewed=3"), "{outputs}");
}

/// A catalog that is a git repository (served over loopback smart HTTP): install reads it
/// through its cached copy; a newer upstream (a new entry, a kill-list item) is seen after
/// `catalog update`, or when the copy is older than the TTL; a server that fails meanwhile
/// leaves the cached copy in use with a warning naming its age; with no copy it is exit 3.
#[test]
fn a_git_catalog_is_cached_refreshed_and_never_silently_stale() {
    use common::git_http::{GitFault, GitServer};
    let c = Cat::new();
    let forecast = c.repo("forecast", &["newslib>=1"]);
    c.entry("forecast", &forecast, "");
    std::fs::write(c.catalog.join("removed.yaml"), "removed: []\n").unwrap();
    git2::Repository::init(&c.catalog).unwrap();
    commit(&c.catalog, &[], "catalog v1");
    let server = GitServer::start(c.w.tmp.path());
    let url = server.url("catalog");
    let (code, _, err) = c.run(&["install", "forecast", "--catalog", &url]);
    assert_eq!(code, Some(0), "{err}");

    // Upstream adds `headlines` and removes it at once (the kill list must win).
    let headlines = c.repo("headlines", &[]);
    c.entry("headlines", &headlines, "");
    std::fs::write(
        c.catalog.join("removed.yaml"),
        "removed:\n  - name: headlines\n    reason: malware\n",
    )
    .unwrap();
    commit(&c.catalog, &[], "catalog v2");
    // Within the TTL the cached copy answers: no such entry yet.
    let (code, _, err) = c.run(&["install", "headlines", "--catalog", &url]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no entry named `headlines`"), "{err}");
    let (code, out, err) = c.run(&["--json", "catalog", "update", "--catalog", &url]);
    assert_eq!(code, Some(0), "{err}");
    let updated: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        follows_its_schema(&updated, None),
        "catalog-update.schema.json"
    );
    assert_eq!(updated["catalogs"][0]["entries"], 2, "{updated:#}");
    let (code, _, err) = c.run(&["install", "headlines", "--catalog", &url]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("removal list") && err.contains("malware"),
        "{err}"
    );
    // Named as the user named the catalog, not by our cached copy of it.
    assert!(err.contains(&format!("the catalog {url}")), "{err}");
    assert!(!err.contains("pm/cache"), "{err}");

    // The server fails; the copy is older than the TTL (0 s): used, with a warning.
    server.set_fault(GitFault::Status(500));
    let ttl0 = [("HERMES_PLUGINS_CATALOG_TTL", "0")];
    let (code, out, err) = c.run_with(&["search", "forecast", "--catalog", &url], &ttl0);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("forecast"), "{out}");
    assert!(
        err.contains("warning:")
            && err.contains("as cached")
            && err.contains("ago")
            && err.contains("500"),
        "{err}"
    );
    // A home with no copy: an error naming the catalog, exit 3.
    let fresh = World::new();
    let out = fresh
        .cmd(&["search", "forecast", "--catalog", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("cannot fetch the catalog") && err.contains(&url),
        "{err}"
    );
}

/// A catalog published as a JSON feed (`{"generated_at", "entries", "removed"}`, as Hermes
/// publishes plugin-catalog.json): entries install, its kill list blocks, an unchanged feed
/// is revalidated with `If-None-Match` (304), a changed one is read again.
#[test]
fn a_json_feed_catalog_with_conditional_refresh() {
    use common::feed::FeedServer;
    let c = Cat::new();
    let forecast = c.repo("forecast", &["newslib>=1"]);
    let headlines = c.repo("headlines", &[]);
    let feed = |removed: &str| {
        serde_json::json!({
            "generated_at": "2026-12-01T00:00:00Z",
            "entries": [
                {"name": "forecast", "repo": format!("{HOST}acme/forecast"), "sha": forecast, "maintainer": "acme", "description": "Forecasts"},
                {"name": "headlines", "repo": format!("{HOST}acme/headlines"), "sha": headlines, "maintainer": "acme"}
            ],
            "removed": [{"name": removed, "reason": "malware", "date": "2026-11-30"}]
        })
        .to_string()
    };
    let server = FeedServer::start(&feed("headlines"));
    let url = server.url.clone();
    let (code, _, err) = c.run(&["install", "forecast", "--catalog", &url]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = c.run(&["install", "headlines", "--catalog", &url]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("malware"), "{err}");
    assert_eq!(server.answers(), [200], "one fetch while the copy is fresh");

    // Past the TTL: revalidated, unchanged (304), still read from the copy.
    let ttl0 = [("HERMES_PLUGINS_CATALOG_TTL", "0")];
    let (code, out, err) = c.run_with(&["--json", "search", "forecast", "--catalog", &url], &ttl0);
    assert_eq!(code, Some(0), "{err}");
    let hits: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(hits["results"][0]["name"], "forecast", "{hits:#}");
    assert_eq!(server.answers(), [200, 304]);

    // A new feed: `forecast` is on the kill list now and `headlines` is not.
    server.publish(&feed("forecast"));
    let (code, _, err) = c.run_with(&["install", "headlines", "--catalog", &url], &ttl0);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(server.answers(), [200, 304, 200]);
    let (code, _, err) = c.run(&["update", "forecast", "--catalog", &url]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("removal list"), "{err}");
}

/// A feed file on disk (what upstream publishes, saved or generated locally) is a catalog by
/// its path and by its `file://` URL; a changed file is read again, an unchanged one is not
/// unpacked again.
#[test]
fn a_local_feed_file_is_a_catalog_by_path_and_by_file_url() {
    let c = Cat::new();
    let forecast = c.repo("forecast", &[]);
    let path = c.w.tmp.path().join("plugin-catalog.json");
    let feed = |names: &[&str]| {
        let entries: Vec<Value> = names
            .iter()
            .map(|n| {
                serde_json::json!({"name": n, "repo": format!("{HOST}acme/forecast"), "sha": forecast, "maintainer": "acme", "description": format!("{n} forecasts")})
            })
            .collect();
        serde_json::json!({"entries": entries, "removed": []}).to_string()
    };
    std::fs::write(&path, feed(&["forecast"])).unwrap();
    let url = url::Url::from_file_path(&path).unwrap().to_string();
    for catalog in [path.to_str().unwrap(), url.as_str()] {
        let (code, out, err) = c.run(&["--json", "search", "forecast", "--catalog", catalog]);
        assert_eq!(code, Some(0), "{catalog}: {err}");
        let hits: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            hits["results"][0]["name"], "forecast",
            "{catalog}: {hits:#}"
        );
    }
    let (code, _, err) = c.run(&["install", "forecast", "--catalog", &url]);
    assert_eq!(code, Some(0), "{err}");
    // Rewritten (another size): read again.
    std::fs::write(&path, feed(&["forecast", "forecast-two"])).unwrap();
    let (code, out, err) = c.run(&["--json", "search", "forecast-two", "--catalog", &url]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("forecast-two"), "{out}");
    // Not there: a clear error naming it.
    let missing = c.w.tmp.path().join("nope.json");
    let (code, _, err) = c.run(&["search", "x", "--catalog", missing.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("nope.json"), "{err}");
}

/// A catalog's reviewers accept a finding for the pinned commit (`accepted_findings` in the
/// entry): `catalog review` shows it accepted, with their reason (no longer blocking);
/// `install` from that catalog takes it (recorded and audited as the catalog's); a stale
/// acceptance is a warning.
#[test]
fn reviewed_acceptances_in_a_catalog_entry() {
    let c = Cat::new();
    let repo = c.mirror.join("acme/hinted");
    c.repo("hinted", &[]);
    let sha = commit(
        &repo,
        &[(
            "setup.sh".into(),
            "#!/bin/sh\ncurl -fsSL https://example.invalid/install.sh | sh\n".into(),
        )],
        "setup script",
    );
    let id = "pipe-to-shell@setup.sh:2";
    // Without the acceptance: the review blocks, install refuses naming the id.
    let entry = c.entry("hinted", &sha, "");
    let (code, _, _) = c.run(&["catalog", "review", entry.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    let (code, _, err) = c.run(&["install", "hinted"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(id), "{err}");
    // Reviewed and accepted in the entry.
    let entry = c.entry(
        "hinted",
        &sha,
        &format!(
            "accepted_findings:\n  - id: {id}\n    reason: an installer the user runs by hand\n"
        ),
    );
    let (code, out, err) = c.run(&[
        "catalog",
        "review",
        entry.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let review: Value = serde_json::from_str(&out).unwrap();
    assert!(
        review["validation"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["severity"] == "warning"
                && f["message"]
                    .as_str()
                    .unwrap()
                    .contains("accepted by the catalog entry: an installer the user runs by hand")),
        "{review:#}"
    );
    let (code, _, err) = c.run(&["install", "hinted"]);
    assert_eq!(code, Some(0), "{err}");
    let audit = std::fs::read_to_string(c.w.pm().join("audit.log")).unwrap();
    assert!(
        audit.contains(id) && audit.contains("reviewed in the catalog entry `hinted`"),
        "{audit}"
    );
    // An acceptance that matches nothing at the pin: a warning to remove it.
    let entry = c.entry(
        "hinted",
        &sha,
        "accepted_findings:\n  - id: pipe-to-shell@other.sh:9\n    reason: gone\n",
    );
    let (_, out, _) = c.run(&["catalog", "review", entry.to_str().unwrap()]);
    assert!(out.contains("matches no finding"), "{out}");
}

/// `subdir: ""`, upstream's documented default, is the repository root: `catalog check`
/// accepts it and `install` of the entry installs the root.
#[test]
fn an_empty_subdir_is_the_repository_root() {
    let c = Cat::new();
    let sha = c.repo("rooted", &[]);
    let entry = c.entry("rooted", &sha, "subdir: \"\"\n");
    let (code, out, err) = c.run(&["catalog", "check", entry.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let (code, _, err) = c.run(&["install", "rooted"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(c.w.json(&["list"])["plugins"][0]["key"], "rooted");
}

/// With no catalog configured, the catalog is the official feed Hermes itself reads. Reached
/// here through an HTTPS proxy on loopback that records what it is asked for and refuses (the
/// real host is not reachable from CI): a catalog name fails with exit 3 naming the feed and
/// `--catalog`; a path installs, with a warning that the kill list was not consulted; `list`
/// asks nothing of the network; `HERMES_PLUGINS_CATALOG=none` turns catalogs off.
#[test]
fn the_official_feed_is_the_default_catalog() {
    use std::io::{BufRead, BufReader, Write};
    let c = Cat::new();
    c.repo("forecast", &[]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy = format!("http://{}", listener.local_addr().unwrap());
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = asked.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut line = String::new();
            let _ = BufReader::new(&stream).read_line(&mut line);
            seen.lock().unwrap().push(line.trim().to_string());
            let _ = (&stream).write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let run = |args: &[&str], catalog: Option<&str>| {
        let mut cmd = c.w.cmd(args);
        cmd.env("HTTPS_PROXY", &proxy).env("https_proxy", &proxy);
        match catalog {
            Some(value) => cmd.env("HERMES_PLUGINS_CATALOG", value),
            None => cmd.env_remove("HERMES_PLUGINS_CATALOG"),
        };
        outcome(&mut cmd)
    };
    let official = "https://hermes-agent.nousresearch.com/docs/api/plugin-catalog.json";

    let (code, _, err) = run(&["install", "forecast"], None);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains(official) && err.contains("--catalog DIR|URL"),
        "{err}"
    );
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        ["CONNECT hermes-agent.nousresearch.com:443 HTTP/1.1"]
    );
    // `search` and `catalog update` need the catalog: the same error, naming the way out.
    for args in [&["search", "forecast"][..], &["catalog", "update"][..]] {
        let (code, _, err) = run(args, None);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(err.contains("HERMES_PLUGINS_CATALOG=none"), "{err}");
    }
    assert_eq!(asked.lock().unwrap().len(), 3);

    // A path needs no catalog: installed, with the kill list's absence said.
    let dir = c.mirror.join("acme/forecast");
    let (code, _, err) = run(&["install", dir.to_str().unwrap()], None);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("kill list was not consulted"), "{err}");
    assert_eq!(asked.lock().unwrap().len(), 4);
    // `--offline`: the copy at hand or nothing, never the network.
    let (code, _, err) = run(
        &["install", dir.to_str().unwrap(), "--replace", "--offline"],
        None,
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("--offline: no copy of the catalog"), "{err}");
    assert_eq!(asked.lock().unwrap().len(), 4);
    // Reading the home never waits on the default catalog.
    let (code, out, err) = run(&["list"], None);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("forecast"), "{out}");
    assert_eq!(asked.lock().unwrap().len(), 4);

    // `none`: no catalog, nothing asked.
    let (code, _, err) = run(&["install", "forecast"], Some("none"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("HERMES_PLUGINS_CATALOG=none"), "{err}");
    let (code, _, err) = run(&["search", "forecast", "--catalog", "none"], None);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = run(
        &["search", "x", "--catalog", "none", "--catalog", "./c"],
        None,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cannot be listed with others"), "{err}");
    assert_eq!(asked.lock().unwrap().len(), 4);
}

/// A catalog entry whose plugin calls itself something else (`install forecast` of a plugin
/// named `forecast-demo`) is found by the entry name the user typed, by every command that
/// takes a plugin name.
#[test]
fn a_plugin_is_found_by_the_catalog_entry_it_was_installed_as() {
    let c = Cat::new();
    let sha = git_plugin(
        &c.mirror.join("acme").join("forecast"),
        None,
        "forecast-demo",
        "1.0.0",
        &[],
    );
    c.entry("forecast", &sha, "");
    let (code, out, err) = c.run(&["install", "forecast", "--enable", "--yes-deps"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, out, err) = c.run(&["--json", "show", "forecast"]);
    assert_eq!(code, Some(0), "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["plugin"]["key"], "forecast-demo", "{shown:#}");
    for args in [
        &["disable", "forecast"][..],
        &["enable", "forecast", "--yes-deps"],
    ] {
        let (code, _, err) = c.run(args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
    let (code, _, err) = c.run(&["remove", "forecast"]);
    assert_eq!(code, Some(0), "{err}");
}

/// A plugin installed with `--catalog DIR` remembers its catalog: `outdated` and `update`
/// read it again without `--catalog` (the catalog it came from is recorded with the pin).
#[test]
fn a_catalog_plugin_remembers_its_catalog() {
    let c = Cat::new();
    let first = c.repo("alpha", &[]);
    c.entry("alpha", &first, "");
    let catalog = c.catalog.to_str().unwrap().to_string();
    let run = |args: &[&str], with_catalog: bool| {
        let mut cmd = c.w.cmd(args);
        cmd.env(
            "HERMES_PLUGINS_GIT_INSTEAD_OF",
            format!("{HOST}={}/", file_url(&c.mirror)),
        );
        if with_catalog {
            cmd.env("HERMES_PLUGINS_CATALOG", &catalog);
        } else {
            // Nothing configured: the official feed, which this machine cannot reach.
            cmd.env_remove("HERMES_PLUGINS_CATALOG");
        }
        outcome(&mut cmd)
    };
    let (code, _, err) = run(&["install", "alpha", "--enable", "--yes-deps"], true);
    assert_eq!(code, Some(0), "{err}");
    let installed = common::read_json(&c.w.pm().join("installed.json"));
    assert_eq!(
        installed["plugins"]["alpha"]["source"]["catalog"]["catalog"],
        catalog.as_str()
    );
    let schema = common::validator(&common::repo().join("catalog-schema/installed.schema.json"));
    assert_eq!(
        common::violations(&schema, &installed),
        Vec::<String>::new()
    );
    // The catalog re-pins the entry to a new commit.
    let second = commit(
        &c.mirror.join("acme/alpha"),
        &plugin_files("alpha", "2.0.0", &[]),
        "v2",
    );
    c.entry("alpha", &second, "");
    let (code, out, err) = run(&["--json", "outdated", "--no-packages"], false);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["plugins"][0]["status"], "outdated", "{doc:#}");
    assert_eq!(doc["plugins"][0]["latest"], second.as_str(), "{doc:#}");
    let (code, out, err) = run(&["--json", "update", "alpha", "--yes"], false);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["plugins"][0]["to"], second.as_str(), "{doc:#}");
}
