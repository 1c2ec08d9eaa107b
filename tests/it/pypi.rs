//! `install pypi:NAME[…]`: plugins that are Python distributions on the package index (the
//! loopback test index), registering through Hermes's `hermes_agent.plugins` entry point.
//! Whether Hermes then loads them from the generation is `conformance::agent`'s.

use crate::common;

use common::index::{TestIndex, Wheel};
use common::world::*;
use serde_json::Value;

/// The plugin's module: a tool backed by the distribution's own dependency.
pub const SKY_PLUGIN: &str = "def _tool(args, **kwargs):\n    import skylib\n    return \"skylib \" + skylib.__version__\n\ndef register(ctx):\n    ctx.register_tool(name=\"sky_tool\", toolset=\"sky\", schema={\"name\": \"sky_tool\", \"description\": \"sky\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}, handler=_tool)\n";

/// `hermes-sky` at `version`: the entry point `sky`, a dependency on `skylib` and one on
/// `hermes-agent` (core: never installed; the test index has no such package).
pub fn sky_wheel(version: &str) -> Wheel {
    Wheel::new("hermes-sky", version, "2025-06-01T00:00:00Z")
        .requires("skylib>=1")
        .requires("hermes-agent>=0.13")
        .requires("fastlib>=1; extra == \"fast\"")
        .with_file("hermes_sky/plugin.py", SKY_PLUGIN.as_bytes().to_vec())
        .with_file(
            &format!("hermes_sky-{version}.dist-info/entry_points.txt"),
            b"[hermes_agent.plugins]\nsky = hermes_sky.plugin\n".to_vec(),
        )
}

/// The index a world with PyPI plugins uses: two releases of the plugin, its dependency, a
/// plain library, and the packages the other tests' plugins use.
pub fn pypi_index() -> TestIndex {
    TestIndex::start(&[
        sky_wheel("1.0.0"),
        sky_wheel("1.1.0"),
        Wheel::new("skylib", "1.0.0", "2025-01-01T00:00:00Z"),
        Wheel::new("fastlib", "1.0.0", "2025-01-01T00:00:00Z"),
        Wheel::new("hermes-ancient", "1.0.0", "2025-01-01T00:00:00Z")
            .requires("hermes-agent<0.13")
            .with_file(
                "hermes_ancient/plugin.py",
                b"def register(ctx):\n    pass\n".to_vec(),
            )
            .with_file(
                "hermes_ancient-1.0.0.dist-info/entry_points.txt",
                b"[hermes_agent.plugins]\nancient = hermes_ancient.plugin\n".to_vec(),
            ),
        Wheel::new("plainlib", "1.0.0", "2025-01-01T00:00:00Z"),
        // A tool that sets a plugin up itself: console scripts, no Hermes entry point.
        Wheel::new("hermes-setup", "1.0.0", "2025-01-01T00:00:00Z")
            .with_file("hermes_setup/cli.py", b"def main():\n    pass\n".to_vec())
            .with_file(
                "hermes_setup-1.0.0.dist-info/entry_points.txt",
                b"[console_scripts]\nhermes-setup = hermes_setup.cli:main\n".to_vec(),
            ),
        // A memory provider alone (`plugins.memory` reads the group from 0.20.4).
        Wheel::new("hermes-recall", "1.0.0", "2025-01-01T00:00:00Z")
            .with_file(
                "hermes_recall/provider.py",
                b"def register(ctx):\n    ctx.register_memory_provider(object())\n".to_vec(),
            )
            .with_file(
                "hermes_recall-1.0.0.dist-info/entry_points.txt",
                b"[hermes_agent.memory_providers]\nrecall = hermes_recall.provider:register\n"
                    .to_vec(),
            ),
        Wheel::new("weatherlib", "1.0.0", "2025-01-01T00:00:00Z").requires("colorlib>=1"),
        Wheel::new("colorlib", "1.0.0", "2025-01-01T00:00:00Z"),
    ])
}

pub fn pypi_world() -> World {
    World {
        index: pypi_index(),
        ..World::new()
    }
}

fn installed(w: &World) -> Value {
    serde_json::from_slice(&std::fs::read(w.pm().join("installed.json")).unwrap()).unwrap()
}

#[test]
fn a_plugin_from_the_index_is_its_wheel_installed_into_the_generation() {
    let w = pypi_world();
    w.ok(&["install", "pypi:hermes-sky", "--enable", "--yes-deps"]);
    assert_eq!(w.current(), Some(1));

    // Keyed by its entry point, as Hermes keys it; the newest release; the very wheel.
    let doc = installed(&w);
    let sky = &doc["plugins"]["sky"];
    assert_eq!(sky["format"], "pip", "{sky:#}");
    assert_eq!(sky["version"], "1.1.0", "{sky:#}");
    assert_eq!(
        sky["source"]["spec"],
        serde_json::json!({"type": "pypi", "requirement": "hermes-sky"})
    );
    let pin = &sky["source"]["package"];
    assert_eq!(pin["name"], "hermes-sky");
    assert_eq!(pin["version"], "1.1.0");
    let wheel = sky_wheel("1.1.0");
    assert_eq!(pin["filename"], wheel.filename().as_str());
    assert_eq!(
        pin["sha256"].as_str().unwrap(),
        common::index::sha256_hex(&wheel.build())
    );
    assert_eq!(
        sky["requirements"],
        serde_json::json!(["hermes-sky==1.1.0"])
    );

    // The environment has the distribution and its dependency, and never hermes-agent.
    assert_eq!(
        w.venv_python("import hermes_sky.plugin, skylib; print(skylib.__version__)"),
        "1.0.0"
    );
    let generation: Value =
        serde_json::from_slice(&std::fs::read(w.pm().join("current/generation.json")).unwrap())
            .unwrap();
    let locked: Vec<&str> = generation["lock"]["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(locked, ["hermes-sky", "skylib"], "{generation:#}");
    // The state files follow their schemas with the new source and format.
    for (schema, doc) in [
        ("installed.schema.json", &doc),
        ("generation.schema.json", &generation),
    ] {
        let v = common::validator(&common::repo().join("catalog-schema").join(schema));
        let problems = common::violations(&v, doc);
        assert!(problems.is_empty(), "{schema}: {problems:#?}");
    }

    let list = w.json(&["list"]);
    common::follows_its_schema(&list, Some(0));
    assert_eq!(list["plugins"][0]["key"], "sky", "{list:#}");
    let show = w.json(&["show", "sky"]);
    common::follows_its_schema(&show, Some(0));

    // A version named exactly is that version, with the extras asked; `outdated` compares
    // versions.
    w.ok(&[
        "install",
        "pypi:hermes-sky[fast]==1.0.0",
        "--replace",
        "--yes-deps",
    ]);
    assert_eq!(installed(&w)["plugins"]["sky"]["version"], "1.0.0");
    assert_eq!(
        w.venv_python(
            "import importlib.metadata as m, fastlib; print(m.version('hermes-sky'), fastlib.__version__)"
        ),
        "1.0.0 1.0.0"
    );
    let outdated = w.json(&["outdated", "--no-packages"]);
    let row = &outdated["plugins"][0];
    assert_eq!(
        (row["current"].as_str(), row["latest"].as_str()),
        (Some("1.0.0"), Some("1.0.0")),
        "the requirement pins it: {outdated:#}"
    );

    // The generation verifies (the store tree is the wheel), and a rollback brings the
    // release before back with its environment.
    w.ok(&["verify"]);
    w.ok(&["generations", "rollback"]);
    assert_eq!(
        w.venv_python("import importlib.metadata as m; print(m.version('hermes-sky'))"),
        "1.1.0"
    );
    w.ok(&["remove", "sky"]);
    assert_eq!(w.json(&["list"])["plugins"], serde_json::json!([]));
}

/// A distribution that registers only a memory provider (`hermes_agent.memory_providers`) is
/// a plugin too, keyed by that entry point's name as `plugins.memory` knows it.
/// The release chosen is the generation's answer: with no other plugin, the resolution that
/// chose it is the generation's, and the index is asked for each project's page once.
#[test]
fn installing_from_the_index_resolves_once() {
    let w = pypi_world();
    w.ok(&["install", "pypi:hermes-sky", "--enable", "--yes-deps"]);
    assert_eq!(installed(&w)["plugins"]["sky"]["version"], "1.1.0");
    for page in ["/simple/hermes-sky/", "/simple/skylib/"] {
        assert_eq!(w.index.requests_for(page), 1, "{page}");
    }
    // With another plugin's requirement in the generation, the generation resolves again
    // (the release was chosen for the plugin alone) and installs the one chosen.
    let w = pypi_world();
    let weather = repo_with(
        &w,
        "weather",
        &plugin_files("weather", "1.0.0", &["weatherlib>=1"]),
    );
    w.ok(&[
        "install",
        weather.to_str().unwrap(),
        "--enable",
        "--yes-deps",
    ]);
    w.ok(&[
        "install",
        "pypi:hermes-sky==1.0.0",
        "--enable",
        "--yes-deps",
    ]);
    assert_eq!(installed(&w)["plugins"]["sky"]["version"], "1.0.0");
    assert_eq!(w.index.requests_for("/simple/hermes-sky/"), 2);
    assert_eq!(
        w.venv_python("import hermes_sky.plugin, weatherlib; print('ok')"),
        "ok"
    );
}

/// With the dependencies agreed to up front, the environment is installed while the wheel is
/// still being validated and stored, and the generation moves it in when its packages are the
/// ones the release was chosen with. Asked first (no `--yes-deps`) or dry, nothing is built
/// ahead; with another plugin's requirements the generation's lock is another one, and the
/// build installs its own.
#[test]
fn the_environment_is_built_ahead_when_the_dependencies_are_agreed_to() {
    let logged = |w: &World, args: &[&str]| {
        let (code, out, err) = outcome(
            w.cmd(args)
                .env("HERMES_PLUGINS_LOG", "hermes_plugins::generation=debug"),
        );
        assert_eq!(code, Some(0), "{args:?}\n{out}{err}");
        err
    };
    let w = pypi_world();
    let err = logged(&w, &["install", "pypi:hermes-sky", "--enable", "--dry-run"]);
    assert!(!err.contains("ahead"), "{err}");
    let err = logged(
        &w,
        &["install", "pypi:hermes-sky", "--enable", "--yes-deps"],
    );
    assert!(
        err.contains("building the environment of 2 packages ahead")
            && err
                .contains("the environment built ahead is this generation's: 2 packages moved in"),
        "{err}"
    );
    assert_eq!(
        w.venv_python("import hermes_sky.plugin, skylib; print(skylib.__name__)"),
        "skylib"
    );
    // Moved, not copied: nothing is left where it was built, and the generation verifies.
    assert!(w.leftovers().is_empty(), "{:?}", w.leftovers());
    w.ok(&["verify"]);

    let w = pypi_world();
    let weather = repo_with(
        &w,
        "weather",
        &plugin_files("weather", "1.0.0", &["weatherlib>=1"]),
    );
    let path = weather.to_str().unwrap();
    w.ok(&["install", path, "--enable", "--yes-deps"]);
    let err = logged(
        &w,
        &["install", "pypi:hermes-sky", "--enable", "--yes-deps"],
    );
    assert!(
        err.contains("the environment built ahead is not this generation's; stopped"),
        "{err}"
    );
    assert_eq!(
        w.venv_python("import hermes_sky.plugin, skylib, weatherlib; print('ok')"),
        "ok"
    );
    assert!(w.leftovers().is_empty(), "{:?}", w.leftovers());
}

#[test]
fn a_memory_provider_alone_is_a_plugin_keyed_by_its_entry_point() {
    let w = pypi_world();
    w.ok(&["install", "pypi:hermes-recall", "--enable", "--yes-deps"]);
    let doc = installed(&w);
    assert_eq!(doc["plugins"]["recall"]["format"], "pip", "{doc:#}");
    assert_eq!(
        w.venv_python("import importlib.metadata as m; print([e.name for e in m.distribution('hermes-recall').entry_points])"),
        "['recall']"
    );
    // Only the releases whose `plugins.memory` reads the group load it (the wheel as stored).
    let store = w.json(&["show", "recall"])["store_path"]
        .as_str()
        .unwrap()
        .to_string();
    let wheel = std::path::Path::new(&store).join("hermes_recall-1.0.0-py3-none-any.whl");
    let (_, out, err) = w.run(&["validate", "--format", "json", &wheel.to_string_lossy()]);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let loads = &report["packages"][0]["compatibility"]["loads"];
    assert_eq!(loads["0.19.0"], false, "{report:#}");
    assert_eq!(loads["0.20.4"], true, "{report:#}");
    assert_eq!(loads["0.22.2"], true, "{report:#}");
    // Why 0.19.0 does not: its loader never reads the package — not the `ctx` call its
    // `register` makes, which that release is never asked to run.
    let reasons = report["packages"][0]["compatibility"]["why_not"]["0.19.0"].to_string();
    assert!(reasons.contains("memory_providers"), "{reasons}");
    assert!(!reasons.contains("register_memory_provider"), "{reasons}");
}

#[test]
fn what_is_no_plugin_on_the_index_is_refused_and_nothing_is_published() {
    let w = pypi_world();
    let refused = |args: &[&str], code: i32, says: &str| {
        let (got, out, err) = w.run(args);
        assert_eq!(got, Some(code), "{args:?}\n{out}\n{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(w.current(), None, "{args:?} published something");
        assert!(w.leftovers().is_empty(), "{:?}", w.leftovers());
    };
    // A library: no Hermes entry point, and nothing else either.
    refused(
        &["install", "pypi:plainlib", "--enable", "--yes-deps"],
        1,
        "registers no Hermes plugin: it has no `hermes_agent.plugins` or `hermes_agent.memory_providers` entry point, so Hermes would never load it. It is a plain library",
    );
    // A tool with an installer of its own: named by its console scripts.
    refused(
        &["install", "pypi:hermes-setup", "--enable", "--yes-deps"],
        1,
        "It is a command-line tool (console scripts: hermes-setup)",
    );
    // Not on the index.
    refused(
        &["install", "pypi:no-such-plugin", "--yes-deps"],
        1,
        "no-such-plugin",
    );
    // Not a requirement by name.
    refused(
        &["install", "pypi:sky @ https://example.invalid/sky.whl"],
        2,
        "is not a package requirement",
    );
    // Revisions are versions here.
    refused(
        &["install", "pypi:hermes-sky", "--ref", "v1"],
        2,
        "names its release by version",
    );
}

/// The lock must install the wheel that was validated: a record whose wheel the index no
/// longer serves (here: a hash edited in `installed.json`) is refused when it is published
/// again, naming the plugin and both files, and nothing changes.
#[test]
fn the_generation_installs_only_the_wheel_that_was_validated() {
    let w = pypi_world();
    w.ok(&["install", "pypi:hermes-sky", "--enable", "--yes-deps"]);
    w.ok(&["disable", "sky"]);
    let path = w.pm().join("installed.json");
    let mut doc = installed(&w);
    doc["plugins"]["sky"]["source"]["package"]["sha256"] = Value::from("0".repeat(64));
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let before = w.current();
    let (code, _, err) = w.run(&["enable", "sky", "--yes-deps"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("plugin `sky` is the wheel hermes_sky-1.1.0-py3-none-any.whl")
            && err.contains("validated when it was installed"),
        "{err}"
    );
    assert_eq!(w.current(), before);
}

/// `outdated` and `update` against the index: a newer release the same requirement admits is
/// reported by version and installed by `update`, code and dependencies in one generation.
#[test]
fn update_moves_a_distribution_to_the_release_the_index_offers_now() {
    let w = World {
        index: TestIndex::start(&[
            sky_wheel("1.0.0"),
            Wheel::new("skylib", "1.0.0", "2025-01-01T00:00:00Z"),
        ]),
        ..World::new()
    };
    w.ok(&["install", "pypi:hermes-sky", "--enable", "--yes-deps"]);
    assert_eq!(installed(&w)["plugins"]["sky"]["version"], "1.0.0");
    // The index now has 1.1.0.
    let newer = pypi_index();
    let with_newer = |args: &[&str]| -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = w
            .cmd(&all)
            .env("HERMES_PLUGINS_INDEX_URL", newer.url())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let outdated = with_newer(&["outdated", "--no-packages"]);
    let row = &outdated["plugins"][0];
    assert_eq!(
        (
            row["current"].as_str(),
            row["latest"].as_str(),
            row["status"].as_str()
        ),
        (Some("1.0.0"), Some("1.1.0"), Some("outdated")),
        "{outdated:#}"
    );
    let updated = with_newer(&["update", "sky", "--yes"]);
    common::follows_its_schema(&updated, Some(0));
    assert_eq!(installed(&w)["plugins"]["sky"]["version"], "1.1.0");
    let out = w
        .cmd(&["env", "--json"])
        .env("HERMES_PLUGINS_INDEX_URL", newer.url())
        .output()
        .unwrap();
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["generation"], 2, "{env:#}");
    assert!(updated.to_string().contains("1.1.0"), "{updated:#}");
}

/// A local wheel file is a plugin the same way: validated, stored, found by the resolution
/// where the store keeps it, installed from that very file, its dependencies from the index.
#[test]
fn a_local_wheel_file_is_installed_as_it_is() {
    let w = pypi_world();
    let wheel = sky_wheel("2.0.0");
    let file = w.tmp.path().join(wheel.filename());
    std::fs::write(&file, wheel.build()).unwrap();
    w.ok(&["install", file.to_str().unwrap(), "--enable", "--yes-deps"]);
    let sky = &installed(&w)["plugins"]["sky"];
    assert_eq!(sky["version"], "2.0.0", "{sky:#}");
    assert_eq!(sky["source"]["spec"]["type"], "wheel", "{sky:#}");
    assert_eq!(
        w.venv_python("import importlib.metadata as m, skylib; print(m.version('hermes-sky'))"),
        "2.0.0"
    );
    let generation: Value =
        serde_json::from_slice(&std::fs::read(w.pm().join("current/generation.json")).unwrap())
            .unwrap();
    let locked = generation["lock"]["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "hermes-sky")
        .unwrap()
        .clone();
    assert!(
        locked["url"].as_str().unwrap().contains("/pm/store/"),
        "from the store: {locked:#}"
    );
    // `outdated` resolves the packages again, finding the wheel where the store keeps it.
    let outdated = w.json(&["outdated"]);
    assert_eq!(
        outdated["plugins"][0]["status"], "up-to-date",
        "{outdated:#}"
    );
    // The file rebuilt under the same version is another wheel: `outdated` says so.
    std::fs::write(
        &file,
        sky_wheel("2.0.0")
            .with_file("extra.txt", b"x".to_vec())
            .build(),
    )
    .unwrap();
    let outdated = w.json(&["outdated", "--no-packages"]);
    assert_eq!(outdated["plugins"][0]["status"], "changed", "{outdated:#}");
    let before = installed(&w)["plugins"]["sky"]["source"]["package"]["sha256"].clone();
    w.ok(&["update", "sky", "--yes"]);
    let after = installed(&w)["plugins"]["sky"]["source"]["package"]["sha256"].clone();
    assert_ne!(before, after, "the rebuilt file is installed");
    assert_eq!(
        w.venv_python("import sys, os; print(any(os.path.exists(os.path.join(p, 'extra.txt')) for p in sys.path))"),
        "True"
    );
    w.ok(&["verify"]);
    // Nix can fetch a wheel only from an index: the export refuses it by name.
    let (code, out, err) = w.run(&["nix", "lock"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(
        err.contains("sky") && err.contains("local wheel file"),
        "{err}"
    );
}
