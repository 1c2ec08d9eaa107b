//! The agent contract end to end: an unmodified Hermes 0.19.0, started through
//! `hermes-plugins exec`, loads exactly the current generation — its plugins through Hermes's
//! own `discover_plugins()`, their dependencies from the generation, only granted
//! capabilities — keeps its generation leased while it runs, never sees a later switch, and a
//! new process after `rollback` sees the old plugin set.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use super::hermes_python;
use crate::common::succeeded;
use crate::common::world::*;

/// Run under `exec`: discovers plugins the way Hermes does, prints what the user plugins did
/// and what each named tool returns; on a line `again` on stdin, rediscovers and prints again.
const AGENT: &str = r#"
import json, sys
from hermes_cli.plugins import discover_plugins, get_plugin_manager
from tools.registry import registry

def snapshot():
    plugins = {
        key: {"enabled": p.enabled, "error": p.error, "tools": sorted(p.tools_registered)}
        for key, p in get_plugin_manager()._plugins.items()
        if p.manifest.source in ("user", "entrypoint")
    }
    out = {"plugins": plugins, "tools": {}}
    for name in sys.argv[1:]:
        try:
            out["tools"][name] = registry.dispatch(name, {})
        except Exception as error:
            out["tools"][name] = "error: %s" % error
    return out

discover_plugins()
print(json.dumps(snapshot()), flush=True)
if sys.stdin.readline().strip() == "again":
    discover_plugins(force=True)
    print(json.dumps(snapshot()), flush=True)
"#;

fn sky_files() -> Vec<(String, String)> {
    vec![
        (
            "plugin.yaml".into(),
            "name: sky\nversion: 1.0.0\ndescription: A tool backed by its dependency\nmanifest_version: 2\nprovides_tools:\n  - sky_tool\npython_dependencies:\n  - \"weatherlib>=1,<2\"\n".into(),
        ),
        (
            "__init__.py".into(),
            "def _tool(args, **kwargs):\n    import weatherlib\n    return \"weatherlib \" + weatherlib.__version__\n\ndef register(ctx):\n    ctx.register_tool(name=\"sky_tool\", toolset=\"sky\", schema={\"name\": \"sky_tool\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}, handler=_tool)\n".into(),
        ),
    ]
}

fn shadow_files() -> Vec<(String, String)> {
    vec![
        (
            "plugin.yaml".into(),
            "name: shadow\nversion: 1.0.0\ndescription: Replaces a built-in tool\nmanifest_version: 2\nprovides_tools:\n  - read_file\ncapabilities:\n  - tools.override\n".into(),
        ),
        (
            "__init__.py".into(),
            "def _tool(args, **kwargs):\n    return \"shadowed\"\n\ndef register(ctx):\n    ctx.register_tool(name=\"read_file\", toolset=\"shadow\", schema={\"name\": \"read_file\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}, handler=_tool, override=True)\n".into(),
        ),
    ]
}

/// Starts the agent under `exec` and reads its first snapshot.
fn start(w: &World, python: &Path, script: &Path) -> (std::process::Child, Value) {
    let mut child = w
        .std_cmd(&[
            "exec",
            "--",
            python.to_str().unwrap(),
            script.to_str().unwrap(),
            "sky_tool",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = read_snapshot(&mut child);
    (child, first)
}

fn read_snapshot(child: &mut std::process::Child) -> Value {
    let mut line = String::new();
    let stdout = child.stdout.as_mut().unwrap();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| {
        let mut err = String::new();
        if let Some(mut s) = child.stderr.take() {
            std::io::Read::read_to_string(&mut s, &mut err).unwrap();
        }
        panic!("agent printed {line:?} ({e}); stderr:\n{err}")
    })
}

/// One agent run to completion.
fn snapshot(w: &World, python: &Path, script: &Path) -> Value {
    let (mut child, mut first) = start(w, python, script);
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    first["stderr"] = String::from_utf8_lossy(&out.stderr).into();
    first
}

fn enabled(snapshot: &Value) -> Vec<String> {
    snapshot["plugins"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, p)| p["enabled"] == true)
        .map(|(k, _)| k.clone())
        .collect()
}

/// The real Hermes's interpreter and a world with `script` written to `<tmp>/<file>` (not
/// `agent.py`: the script's directory comes first on `sys.path`, and Hermes has an `agent`
/// package); `None`, said on stderr, when no Hermes is configured.
fn agent_world(
    what: &str,
    file: &str,
    script: &str,
) -> Option<(std::path::PathBuf, World, std::path::PathBuf)> {
    let Some(python) = hermes_python() else {
        eprintln!("HERMES_PLUGINS_HERMES_PYTHON not set: skipping {what}");
        return None;
    };
    let w = World::new();
    let path = w.tmp.path().join(file);
    std::fs::write(&path, script).unwrap();
    Some((python, w, path))
}

#[test]
fn an_unmodified_hermes_runs_exactly_the_leased_generation() {
    let Some((python, w, script)) = agent_world("the agent contract test", "run_hermes.py", AGENT)
    else {
        return;
    };
    let sky = repo_with(&w, "sky", &sky_files());
    let shadow = repo_with(&w, "shadow", &shadow_files());
    w.ok(&["install", &file_url(&sky), "--enable", "--yes-deps"]);
    w.ok(&["install", &file_url(&shadow), "--enable", "--yes-deps"]);
    let a = w.current().unwrap();

    // Hermes discovers the generation's plugins; the tool imports its dependency from it; the
    // override nobody granted is refused by the gate, even though Hermes itself loads the code.
    let first = snapshot(&w, &python, &script);
    assert_eq!(first["tools"]["sky_tool"], "weatherlib 1.0.0", "{first:#}");
    assert_eq!(enabled(&first), ["sky"], "{first:#}");
    let refusal = first["plugins"]["shadow"]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(refusal.contains("not granted tools.override"), "{first:#}");
    let linked: Vec<_> = std::fs::read_dir(w.home.join("plugins"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert!(
        linked.is_empty(),
        "nothing is linked under <home>/plugins: {linked:?}"
    );

    // A running agent keeps generation A: gc leaves it, later switches are not seen.
    let (mut agent, before) = start(&w, &python, &script);
    assert_eq!(enabled(&before), ["sky"]);
    w.ok(&["disable", "shadow"]);
    w.ok(&["disable", "sky"]);
    let gc = w.json(&["generations", "gc"]);
    assert!(
        gc["kept"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k[0] == a && k[1] == "in use by a running agent"),
        "{gc:#}"
    );
    assert_eq!(
        enabled(&snapshot(&w, &python, &script)),
        Vec::<String>::new(),
        "a new process sees the new generation"
    );
    writeln!(agent.stdin.as_mut().unwrap(), "again").unwrap();
    let after = read_snapshot(&mut agent);
    assert_eq!(enabled(&after), ["sky"], "{after:#}");
    assert!(after["plugins"].get("shadow").is_some(), "{after:#}");
    drop(agent.stdin.take());
    assert!(agent.wait().unwrap().success());
    let gc = w.json(&["generations", "gc"]);
    assert_eq!(gc["removed_generations"], serde_json::json!([a]), "{gc:#}");

    // Rollback: a new process sees the previous plugin set again.
    w.ok(&["generations", "rollback"]);
    let rolled = snapshot(&w, &python, &script);
    assert_eq!(enabled(&rolled), ["sky"], "{rolled:#}");
    assert_eq!(
        rolled["tools"]["sky_tool"], "weatherlib 1.0.0",
        "{rolled:#}"
    );

    // Granted, the override loads. `shadow` has no requirements, so the lock stays and the
    // new generation's venv is the rolled-back one's, carried over by hard links: the real
    // Hermes runs on it, the tool still importing its dependency from it.
    let rolled_back = w.current().unwrap();
    w.ok(&["enable", "shadow", "--grant", "tools.override"]);
    let carried = w.current().unwrap();
    let pyvenv = |n: u64| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(w.pm().join(format!("generations/{n}/venv/pyvenv.cfg")))
            .unwrap()
            .ino()
    };
    assert_ne!(carried, rolled_back);
    assert_eq!(pyvenv(carried), pyvenv(rolled_back), "the venv is shared");
    let granted = snapshot(&w, &python, &script);
    assert_eq!(enabled(&granted), ["shadow", "sky"], "{granted:#}");
    assert_eq!(
        granted["plugins"]["shadow"]["tools"],
        serde_json::json!(["read_file"])
    );
    assert_eq!(
        granted["tools"]["sky_tool"], "weatherlib 1.0.0",
        "{granted:#}"
    );
}

/// Run with the reference reader alone on `sys.path` (no Hermes): prints what it reads, and
/// checks the pieces `exec` relies on against stand-ins.
const READER_CHECK: &str = r##"
import dataclasses, json, os, sys, types
import hermes_plugins_generation as g
from hermes_plugins_generation import capabilities

home = sys.argv[1]
directory, lease = g.acquire(home)
plan = g.read_plan(directory, "default")
env_file = os.path.join(home, ".env")
out = {
    "generation": plan.number,
    "path": directory,
    "enabled": plan.enabled,
    "grants": {k: sorted(v) for k, v in plan.grants.items()},
    "site_packages": plan.site_packages,
    "missing_env": {k: plan.missing_env(k, {}, env_file) for k in plan.enabled},
}

# The LLM gate: only granted overrides survive, whatever config.yaml says.
@dataclasses.dataclass(frozen=True)
class _TrustPolicy:
    plugin_id: str
    allow_provider_override: bool = False
    allow_model_override: bool = False

llm = types.ModuleType("agent.plugin_llm")
llm._resolve_trust_policy = lambda pid: _TrustPolicy(pid, True, True)
capabilities.patch_llm(llm, plan)
policy = llm._resolve_trust_policy("keyed")
out["llm"] = [policy.allow_provider_override, policy.allow_model_override]
out["llm_unmanaged"] = dataclasses.astuple(llm._resolve_trust_policy("elsewhere"))[1:]

try:
    plan.check_python((2, 7))
    out["python_check"] = "accepted"
except g.GenerationError as error:
    out["python_check"] = str(error)
plan.check_python()

with open(os.path.join(home, "dotenv-sample"), "w") as f:
    f.write("# comment\nexport A_ONE=1\n B_TWO = 2\n#C_THREE=3\nNOT A LINE\n")
out["dotenv"] = sorted(g.env_file_names(os.path.join(home, "dotenv-sample")))

before = list(sys.meta_path)
g.install({})
out["install_without_exec"] = sys.meta_path == before
print(json.dumps(out))
"##;

#[test]
fn the_reference_reader_reads_what_env_prints() {
    let w = World::new();
    let files = vec![
        (
            "plugin.yaml".to_string(),
            "name: keyed\nversion: 1.0.0\ndescription: Needs a token\nmanifest_version: 2\nprovides_tools:\n  - keyed_tool\nrequires_env:\n  - KEYED_TOKEN\ncapabilities:\n  - llm.model_override\n  - llm.provider_override\npython_dependencies:\n  - \"colorlib>=1,<2\"\n".to_string(),
        ),
        (
            "__init__.py".to_string(),
            "def register(ctx):\n    ctx.register_tool(name=\"keyed_tool\", toolset=\"keyed\", schema={}, handler=lambda args, **kw: \"k\")\n".to_string(),
        ),
    ];
    let dir = repo_with(&w, "keyed", &files);
    w.ok(&[
        "install",
        &file_url(&dir),
        "--enable",
        "--yes-deps",
        "--grant",
        "llm.model_override",
    ]);
    // The package as the binary embeds it, alone on the path.
    let reader_dir = w.tmp.path().join("reader");
    std::fs::create_dir_all(&reader_dir).unwrap();
    assert!(hermes_plugins::agent::package::place(&reader_dir).unwrap());
    let read = |home: &Path| -> Value {
        let out = std::process::Command::new("python3")
            .args(["-c", READER_CHECK, home.to_str().unwrap()])
            .env("PYTHONPATH", &reader_dir)
            .env_remove("KEYED_TOKEN")
            .output()
            .unwrap();
        serde_json::from_slice(&succeeded(out)).unwrap()
    };
    let reader = read(&w.home);
    let env = w.json(&["env"]);
    assert_eq!(reader["generation"], env["generation"]);
    assert_eq!(reader["path"], env["path"]);
    assert_eq!(reader["enabled"], serde_json::json!(["keyed"]));
    assert_eq!(
        reader["grants"]["keyed"],
        env["plugins"][0]["granted_capabilities"]
    );
    assert_eq!(reader["site_packages"], env["sys_path"][0]);
    assert_eq!(
        reader["missing_env"]["keyed"],
        env["plugins"][0]["missing_env"]
    );
    assert_eq!(
        reader["llm"],
        serde_json::json!([false, true]),
        "{reader:#}"
    );
    assert_eq!(reader["llm_unmanaged"], serde_json::json!([true, true]));
    assert!(
        reader["python_check"]
            .as_str()
            .unwrap()
            .contains("was built for Python 3."),
        "{reader:#}"
    );
    assert_eq!(reader["dotenv"], serde_json::json!(["A_ONE", "B_TWO"]));
    assert_eq!(reader["install_without_exec"], true);
    // Set in .env, the variable is no longer missing.
    std::fs::write(w.home.join(".env"), "KEYED_TOKEN=x\n").unwrap();
    assert_eq!(read(&w.home)["missing_env"]["keyed"], serde_json::json!([]));
}

/// A plugin placed by hand in `<home>/plugins/<name>`.
fn hand_placed(w: &World, name: &str, tool: &str, extra: &str, body: &str) {
    let dir = w.home.join("plugins").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("plugin.yaml"),
        format!("name: {name}\nversion: 0.1.0\ndescription: Put here by hand\nmanifest_version: 2\nprovides_tools:\n  - {tool}\n{extra}"),
    )
    .unwrap();
    std::fs::write(
        dir.join("__init__.py"),
        format!("def _tool(args, **kwargs):\n{body}\n\ndef register(ctx):\n    ctx.register_tool(name=\"{tool}\", toolset=\"{name}\", schema={{\"name\": \"{tool}\", \"parameters\": {{\"type\": \"object\", \"properties\": {{}}}}}}, handler=_tool)\n"),
    )
    .unwrap();
}

#[test]
fn an_external_plugin_loads_where_it_is_with_its_requirements_from_the_generation() {
    let Some((python, w, script)) = agent_world("the external plugin test", "run_hermes.py", AGENT)
    else {
        return;
    };
    hand_placed(
        &w,
        "localtool",
        "local_tool",
        "python_dependencies:\n  - \"colorlib>=1,<3\"\n",
        "    import colorlib\n    return \"colorlib \" + colorlib.__version__",
    );
    hand_placed(&w, "idle", "idle_tool", "", "    return \"idle\"");
    std::fs::write(
        w.home.join("config.yaml"),
        "plugins:\n  enabled:\n    - localtool\n",
    )
    .unwrap();

    // Its requirements join the generation, with dependency consent like any plugin's.
    let (code, _, err) = w.run(&["sync"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("colorlib") && err.contains("--yes-deps"),
        "{err}"
    );
    let (code, _, err) = w.run(&["sync", "--yes-deps"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("not managed by hermes-plugins"), "{err}");
    let doc: Value = crate::common::read_json(&w.pm().join("current/generation.json"));
    assert_eq!(
        doc["profiles"]["default"]["external"],
        serde_json::json!(["localtool"]),
        "{doc:#}"
    );
    assert!(doc["plugins"].as_array().unwrap().is_empty(), "{doc:#}");
    let listed = w.json(&["list"]);
    assert_eq!(listed["plugins"][0]["key"], "localtool", "{listed:#}");
    assert_eq!(
        listed["plugins"][0]["status"]["default"],
        "enabled (external)"
    );
    crate::common::follows_its_schema(&listed, None);

    // Under exec, Hermes loads it from where it is, its dependency from the generation;
    // what is not enabled stays unloaded.
    let out = w
        .std_cmd(&[
            "exec",
            "--",
            python.to_str().unwrap(),
            script.to_str().unwrap(),
            "local_tool",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&succeeded(out)).into_owned();
    let seen: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(enabled(&seen), ["localtool"], "{seen:#}");
    assert!(
        seen["tools"]["local_tool"]
            .as_str()
            .unwrap()
            .starts_with("colorlib "),
        "{seen:#}"
    );

    // Managed later: the store's copy replaces it, and it is no longer external.
    let local = w.home.join("plugins/localtool");
    w.ok(&["install", local.to_str().unwrap(), "--enable", "--yes-deps"]);
    let doc: Value = crate::common::read_json(&w.pm().join("current/generation.json"));
    assert!(
        doc["profiles"]["default"].get("external").is_none(),
        "{doc:#}"
    );
    assert_eq!(doc["plugins"][0]["key"], "localtool", "{doc:#}");
}

/// Run under `exec`: what Hermes's own provider loaders find — memory providers
/// (`plugins.memory`, flat `<home>/plugins/<name>`), model providers (`providers`,
/// `<home>/plugins/model-providers/<name>`) — and the general loader's keys.
const PROVIDERS: &str = r#"
import json, sys
import providers
import plugins.memory as memory
from hermes_cli.plugins import discover_plugins, get_plugin_manager

out = {
    "memory": sorted(memory.list_memory_provider_names()),
    "model": providers.get_provider_profile("acme") is not None,
}
provider = memory.load_memory_provider("skymem")
out["memory_loaded"] = type(provider).__name__ if provider else None
out["memory_dep"] = provider.dependency() if provider else None
deep = memory.load_memory_provider("deepmem")
out["deep_loaded"] = type(deep).__name__ if deep else None
discover_plugins()
out["general"] = {
    key: {"enabled": p.enabled, "error": p.error}
    for key, p in get_plugin_manager()._plugins.items()
    if p.manifest.source == "user"
}
print(json.dumps(out), flush=True)
"#;

/// Every kind of plugin Hermes discovers is discovered from the generation: a memory
/// provider (with its dependency importable), a model provider from the `model-providers`
/// category, a backend keyed `<category>/<dir>` — and one enabled nowhere stays out.
#[test]
fn memory_and_model_providers_load_from_the_generation() {
    let Some((python, w, script)) =
        agent_world("the provider loaders test", "run_providers.py", PROVIDERS)
    else {
        return;
    };
    let memory = repo_with(
        &w,
        "skymem",
        &[
            (
                "plugin.yaml".into(),
                "name: skymem\nversion: 1.0.0\ndescription: A memory provider\npython_dependencies:\n  - \"weatherlib>=1,<2\"\n".into(),
            ),
            (
                "__init__.py".into(),
                "from agent.memory_provider import MemoryProvider\n\nclass SkyMemory(MemoryProvider):\n    @property\n    def name(self):\n        return \"skymem\"\n\n    def is_available(self):\n        return True\n\n    def initialize(self, session_id, **kwargs):\n        pass\n\n    def get_tool_schemas(self):\n        return []\n\n    def dependency(self):\n        import weatherlib\n        return weatherlib.__version__\n\ndef register(ctx):\n    ctx.register_memory_provider(SkyMemory())\n".into(),
            ),
        ],
    );
    let mut several = Vec::new();
    for (dir, manifest, init) in [
        (
            "plugins/model-providers/acme",
            "name: acme-provider\nversion: 1.0.0\ndescription: A model provider\nkind: model-provider\n",
            "from providers import register_provider\nfrom providers.base import ProviderProfile\n\nregister_provider(ProviderProfile(name=\"acme\", display_name=\"Acme\", env_vars=(\"ACME_API_KEY\",), base_url=\"https://api.acme.invalid/v1\"))\n",
        ),
        (
            "plugins/model-providers/other",
            "name: other-provider\nversion: 1.0.0\ndescription: Installed, never enabled\nkind: model-provider\n",
            "from providers import register_provider\nfrom providers.base import ProviderProfile\n\nregister_provider(ProviderProfile(name=\"other\", display_name=\"Other\", base_url=\"https://api.other.invalid/v1\"))\n",
        ),
        (
            "plugins/memory/deepmem",
            "name: deepmem\nversion: 1.0.0\ndescription: A memory provider in the memory category\n",
            "from agent.memory_provider import MemoryProvider\n\nclass DeepMemory(MemoryProvider):\n    @property\n    def name(self):\n        return \"deepmem\"\n\n    def is_available(self):\n        return True\n\n    def initialize(self, session_id, **kwargs):\n        pass\n\n    def get_tool_schemas(self):\n        return []\n\ndef register(ctx):\n    ctx.register_memory_provider(DeepMemory())\n",
        ),
        (
            "plugins/deepmem",
            "name: deepmem\nversion: 1.0.0\ndescription: A tools plugin that happens to share the name\nprovides_tools:\n  - deep_tool\n",
            "def _t(args, **kwargs):\n    return 'deep'\n\ndef register(ctx):\n    ctx.register_tool(name='deep_tool', toolset='deep', schema={'name': 'deep_tool', 'parameters': {'type': 'object', 'properties': {}}}, handler=_t)\n",
        ),
        (
            "plugins/image_gen/painter",
            "name: painter\nversion: 1.0.0\ndescription: An image backend\n",
            "def register(ctx):\n    pass\n",
        ),
    ] {
        several.push((format!("{dir}/plugin.yaml"), manifest.to_string()));
        several.push((format!("{dir}/__init__.py"), init.to_string()));
    }
    let repo = repo_with(&w, "several", &several);
    let url = file_url(&repo);
    w.ok(&["install", &file_url(&memory), "--enable", "--yes-deps"]);
    w.ok(&[
        "install",
        &format!("{url}#plugins/model-providers/acme"),
        "--enable",
        "--yes-deps",
    ]);
    w.ok(&["install", &format!("{url}#plugins/model-providers/other")]);
    w.ok(&[
        "install",
        &format!("{url}#plugins/image_gen/painter"),
        "--enable",
        "--yes-deps",
    ]);
    // `memory/deepmem` and a flat tools plugin `deepmem`: the memory loader sees the one in
    // its own category under the name `memory.provider` uses.
    for dir in ["plugins/memory/deepmem", "plugins/deepmem"] {
        w.ok(&["install", &format!("{url}#{dir}"), "--enable", "--yes-deps"]);
    }
    std::fs::write(w.home.join("config.yaml"), {
        let mut text = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
        text.push_str("memory:\n  provider: skymem\n");
        text
    })
    .unwrap();

    let out = w
        .std_cmd(&[
            "exec",
            "--",
            python.to_str().unwrap(),
            script.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = succeeded(out);
    let seen: Value = serde_json::from_slice(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&stdout)));
    assert!(
        seen["memory"]
            .as_array()
            .unwrap()
            .contains(&"skymem".into()),
        "{seen:#}"
    );
    assert_eq!(seen["memory_loaded"], "SkyMemory", "{seen:#}");
    assert_eq!(seen["memory_dep"], "1.0.0", "{seen:#}");
    assert_eq!(seen["deep_loaded"], "DeepMemory", "{seen:#}");
    assert_eq!(seen["general"]["deepmem"]["enabled"], true, "{seen:#}");
    assert_eq!(seen["model"], true, "{seen:#}");
    assert_eq!(
        seen["general"]["image_gen/painter"]["enabled"], true,
        "{seen:#}"
    );
    assert!(
        seen["general"].get("model-providers/other").is_none()
            || seen["general"]["model-providers/other"]["enabled"] == false,
        "{seen:#}"
    );

    // A model provider installed but enabled nowhere is not imported.
    let probe = w
        .std_cmd(&[
            "exec",
            "--",
            python.to_str().unwrap(),
            "-c",
            "import providers; print(providers.get_provider_profile('other') is None)",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&probe.stdout).trim(), "True");
}

/// A module a plugin imports while it loads, provided neither by Hermes's environment nor by
/// its declared dependencies, is named at install (asked of the installed Hermes's own
/// interpreter, with the generation's site-packages as `exec` adds them); what Hermes or the
/// declared dependencies provide is not.
#[test]
fn imports_nothing_provides_are_named_at_install() {
    let Some((python, w, _)) = agent_world("the import check test", "unused.py", "") else {
        return;
    };
    let repo = repo_with(
        &w,
        "importer",
        &[
            (
                "plugin.yaml".into(),
                "name: importer\nversion: 1.0.0\ndescription: Imports three things\npython_dependencies:\n  - \"weatherlib>=1,<2\"\n".into(),
            ),
            (
                "__init__.py".into(),
                "import yaml\nimport weatherlib\nfrom .client import go\n\ndef register(ctx):\n    pass\n".into(),
            ),
            (
                "client.py".into(),
                "import surely_missing_module_xyz\n\ndef go():\n    pass\n".into(),
            ),
        ],
    );
    let core = format!("installed:{}", python.display());
    let out = w
        .cmd(&[
            "--json",
            "install",
            &file_url(&repo),
            "--enable",
            "--yes-deps",
            "--core",
            &core,
        ])
        .env_remove("HERMES_PLUGINS_NO_CORE")
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&succeeded(out)).unwrap();
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("`surely_missing_module_xyz` (client.py:1)"),
        "{doc:#}"
    );
    // PyYAML comes with Hermes 0.19.0's requirements, not with 0.22.2's: there an undeclared
    // `import yaml` fails the plugin, and is named.
    assert_eq!(
        warnings.contains("`yaml`"),
        !crate::common::hermes_has_module(&python, "yaml"),
        "{doc:#}"
    );
    assert!(!warnings.contains("`weatherlib`"), "{doc:#}");
}

/// A venv of its own whose interpreter sees the CI Hermes through a `.pth` path line, so
/// `activate` writes into a site-packages of the test's, never into the shared Hermes venv.
fn hermes_venv_of_our_own(w: &World, hermes_python: &Path) -> std::path::PathBuf {
    let venv = w.tmp.path().join("hermes-venv");
    succeeded(
        std::process::Command::new(hermes_python)
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv)
            .output()
            .unwrap(),
    );
    let purelib = |python: &Path| {
        let out = std::process::Command::new(python)
            .args([
                "-I",
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ])
            .output()
            .unwrap();
        std::path::PathBuf::from(String::from_utf8(succeeded(out)).unwrap().trim())
    };
    let python = venv.join("bin/python");
    std::fs::write(
        purelib(&python).join("the_ci_hermes.pth"),
        format!("{}\n", purelib(hermes_python).display()),
    )
    .unwrap();
    python
}

/// Runs the agent script with `python` directly (no `exec`, no PYTHONPATH) in `home`.
fn direct_snapshot(python: &Path, script: &Path, home: &Path) -> Value {
    let out = std::process::Command::new(python)
        .arg(script)
        .arg("sky_tool")
        .env("HERMES_HOME", home)
        .env_remove("PYTHONPATH")
        .env_remove("HERMES_PLUGINS_GENERATION")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = succeeded(out);
    let line = String::from_utf8_lossy(&stdout);
    serde_json::from_str(line.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {line}\n{stderr}"))
}

/// `activate`: an unmodified Hermes started directly — no `exec` — reads the current
/// generation of its home (plugins, selection, dependencies); a home with nothing published
/// is left as Hermes has it; `activate` is idempotent; `deactivate` restores Hermes's own
/// behaviour.
#[test]
fn an_activated_hermes_reads_the_generation_without_exec() {
    let Some((hermes, w, script)) = agent_world("the activate test", "run_hermes.py", AGENT) else {
        return;
    };
    let python = hermes_venv_of_our_own(&w, &hermes);
    let sky = repo_with(&w, "sky", &sky_files());
    w.ok(&["install", &file_url(&sky), "--enable", "--yes-deps"]);

    let before = direct_snapshot(&python, &script, &w.home);
    assert_eq!(enabled(&before), Vec::<String>::new(), "{before:#}");

    let python_arg = python.to_str().unwrap();
    let doc = w.json(&["activate", "--python", python_arg]);
    crate::common::follows_its_schema(&doc, None);
    assert_eq!(doc["active"], true, "{doc:#}");
    assert_eq!(
        doc["hermes"],
        crate::common::hermes_release(&hermes),
        "{doc:#}"
    );
    assert!(
        doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["change"] == "written"),
        "{doc:#}"
    );
    let seen = direct_snapshot(&python, &script, &w.home);
    assert_eq!(enabled(&seen), ["sky"], "{seen:#}");
    assert_eq!(seen["tools"]["sky_tool"], "weatherlib 1.0.0", "{seen:#}");

    // Idempotent.
    let again = w.json(&["activate", "--python", python_arg]);
    assert!(
        again["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["change"] == "unchanged"),
        "{again:#}"
    );

    // A home with nothing published: Hermes loads <home>/plugins exactly as without the hook.
    let plain = w.tmp.path().join("plain-home");
    std::fs::create_dir_all(plain.join("plugins/sky")).unwrap();
    for (name, text) in sky_files() {
        std::fs::write(plain.join("plugins/sky").join(name), text).unwrap();
    }
    std::fs::write(plain.join("config.yaml"), "plugins:\n  enabled: [sky]\n").unwrap();
    let unmanaged = direct_snapshot(&python, &script, &plain);
    assert_eq!(enabled(&unmanaged), ["sky"], "{unmanaged:#}");
    assert!(
        unmanaged["tools"]["sky_tool"]
            .as_str()
            .unwrap()
            .contains("No module named 'weatherlib'"),
        "its dependency is not there without a generation: {unmanaged:#}"
    );

    // Without --python: the Hermes behind the `hermes` on PATH, here the install script's
    // shape — a bash launcher `exec`ing the venv's console script (never run, only read).
    let venv_bin = python.parent().unwrap();
    std::fs::write(
        venv_bin.join("hermes"),
        format!(
            "#!{}\nfrom hermes_cli.main import main\nmain()\n",
            python.display()
        ),
    )
    .unwrap();
    let launchers = w.tmp.path().join("local-bin");
    std::fs::create_dir_all(&launchers).unwrap();
    std::fs::write(
        launchers.join("hermes"),
        format!(
            "#!/usr/bin/env bash\nexec \"{}\" \"$@\"\n",
            venv_bin.join("hermes").display()
        ),
    )
    .unwrap();
    for file in [venv_bin.join("hermes"), launchers.join("hermes")] {
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let path = format!(
        "{}:{}",
        launchers.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let on_path = |args: &[&str]| -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = w.cmd(&all).env("PATH", &path).output().unwrap();
        let doc: Value = serde_json::from_slice(&succeeded(out)).unwrap();
        crate::common::follows_its_schema(&doc, None);
        doc
    };
    // `env` and `list` say whether the Hermes in use reads the generation by itself.
    for command in ["env", "list", "verify"] {
        let doc = on_path(&[command]);
        assert_eq!(doc["hermes"]["python"], python_arg, "{doc:#}");
        assert_eq!(doc["hermes"]["activated"], true, "{doc:#}");
    }
    let doc = on_path(&["deactivate"]);
    assert_eq!(doc["python"], python_arg, "{doc:#}");
    assert_eq!(doc["active"], false, "{doc:#}");
    assert_eq!(on_path(&["env"])["hermes"]["activated"], false);
    let after = direct_snapshot(&python, &script, &w.home);
    assert_eq!(enabled(&after), Vec::<String>::new(), "{after:#}");
}

/// The venv's `hermes` console script, as pip writes it.
fn console_script(python: &Path) -> std::path::PathBuf {
    let script = python.parent().unwrap().join("hermes");
    std::fs::write(
        &script,
        format!(
            "#!{}\nimport sys\nfrom hermes_cli.main import main\nif __name__ == \"__main__\":\n    sys.exit(main())\n",
            python.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script
}

/// Runs `hermes ARGS…` (the console script) non-interactively in the world's home, with the
/// world's index; (exit code, stdout, stderr).
fn hermes_says(w: &World, hermes: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(hermes)
        .args(args)
        .current_dir(w.tmp.path())
        .env("HERMES_HOME", &w.home)
        .env("HERMES_PLUGINS_INDEX_URL", w.index.url())
        .env("HERMES_PLUGINS_CATALOG", "none")
        .env("HERMES_PLUGINS_NO_CORE", "1")
        .env("HERMES_PLUGINS_NOW", NOW)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .env_remove("PYTHONPATH")
        .env_remove("HERMES_PLUGINS_GENERATION")
        .env_remove("HERMES_PLUGINS_BIN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `hermes plugins …` of an activated Hermes is served by this binary: install (with this
/// tool's own flags passed on and Hermes's `--force` as `--replace`), enable, disable,
/// remove, and `validate`, which no Hermes release has; `list` stays Hermes's own table and
/// JSON but lists the generation; bundled plugins stay Hermes's; a hook whose binary is gone
/// fails closed; `deactivate` gives Hermes its commands back.
#[test]
fn hermes_plugins_commands_are_served_when_activated() {
    let Some((hermes_python, w, script)) = agent_world("the routing test", "run_hermes.py", AGENT)
    else {
        return;
    };
    let python = hermes_venv_of_our_own(&w, &hermes_python);
    let hermes = console_script(&python);
    let ok = |args: &[&str]| -> String {
        let (code, out, err) = hermes_says(&w, &hermes, args);
        assert_eq!(code, Some(0), "hermes {args:?}\n{out}\n{err}");
        out
    };
    let before = ok(&["plugins", "list", "--plain"]);

    w.ok(&["activate", "--python", python.to_str().unwrap()]);
    let sky = repo_with(&w, "sky", &sky_files());
    let url = file_url(&sky);

    // Non-interactive dependency consent is refused, naming the flag.
    let (code, out, err) = hermes_says(&w, &hermes, &["plugins", "install", &url, "--enable"]);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(err.contains("--yes-deps"), "{err}");
    // With it: published, and the plugin runs in a Hermes started directly.
    ok(&["plugins", "install", &url, "--enable", "--yes-deps"]);
    let listed = w.json(&["list"]);
    assert_eq!(listed["plugins"][0]["key"], "sky", "{listed:#}");
    assert_eq!(
        listed["plugins"][0]["status"]["default"], "enabled",
        "{listed:#}"
    );
    let snapshot = direct_snapshot(&python, &script, &w.home);
    assert_eq!(
        snapshot["tools"]["sky_tool"], "weatherlib 1.0.0",
        "{snapshot:#}"
    );

    // `hermes plugins list` is Hermes's own, listing the generation.
    let plain = ok(&["plugins", "list", "--plain", "--no-bundled"]);
    assert!(
        plain.lines().any(|l| l.starts_with("enabled")
            && l.contains("hermes-plugins")
            && l.ends_with(" sky")),
        "{plain}"
    );
    let doc: Value = serde_json::from_str(&ok(&["plugins", "list", "--json"])).unwrap();
    let entry = doc
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "sky")
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(entry["status"], "enabled", "{doc:#}");
    assert_eq!(entry["source"], "hermes-plugins", "{doc:#}");
    assert_eq!(entry["version"], "1.0.0", "{doc:#}");

    // Hermes's `--force` (remove and install again) is this tool's `--replace`.
    let out = ok(&["plugins", "install", &url, "-f", "--yes-deps"]);
    assert!(!out.is_empty());
    ok(&["plugins", "disable", "sky"]);
    assert_eq!(
        w.json(&["list"])["plugins"][0]["status"]["default"],
        "disabled"
    );
    // Not in the generation any more, still in Hermes's list.
    let plain = ok(&["plugins", "list", "--plain", "--no-bundled"]);
    assert!(
        plain.lines().any(|l| !l.starts_with("enabled")
            && l.contains("hermes-plugins")
            && l.ends_with(" sky")),
        "{plain}"
    );
    ok(&["plugins", "enable", "sky", "--yes-deps"]);
    assert_eq!(
        w.json(&["list"])["plugins"][0]["status"]["default"],
        "enabled"
    );

    // `pack` is this tool's on every release (0.22's own is routed here too): a pack installs
    // as one generation.
    let pack = w.tmp.path().join("hermes-pack.yaml");
    std::fs::write(&pack, crate::pack::pack_text(&w, "")).unwrap();
    let before_pack = w.current().unwrap();
    let said = ok(&[
        "plugins",
        "pack",
        "install",
        pack.to_str().unwrap(),
        "--yes-deps",
    ]);
    assert!(said.contains("Pack team-kit: 2 plugins enabled"), "{said}");
    assert_eq!(w.current(), Some(before_pack + 1));
    ok(&["plugins", "remove", "weather"]);
    ok(&["plugins", "remove", "news"]);

    // `validate` is this tool's (Hermes 0.13 – 0.19 have none; 0.22's own is routed here too).
    let doc: Value = serde_json::from_str(&ok(&[
        "plugins",
        "validate",
        sky.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    crate::common::follows_its_schema(&doc, None);

    // A bundled plugin stays Hermes's: its own `enable` writes config.yaml (`image_gen/fal` is
    // bundled with every release the tests run).
    // From 0.21 Hermes's own `enable` first syncs its `hermes pm` environment, which needs a
    // managed CPython 3.14 this machine cannot download: there the command is seen reaching
    // Hermes (its own refusal), not this tool.
    let config = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
    if crate::common::hermes_has_module(&hermes_python, "pm") {
        let (_, said, _) = hermes_says(&w, &hermes, &["plugins", "enable", "image_gen/fal"]);
        assert!(
            said.contains("Enable 'image_gen/fal' refused: python"),
            "{said}"
        );
    } else {
        ok(&["plugins", "enable", "image_gen/fal"]);
        let edited = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
        assert!(edited.contains("image_gen/fal"), "{edited}");
    }
    std::fs::write(w.home.join("config.yaml"), config).unwrap();

    ok(&["plugins", "remove", "sky"]);
    assert_eq!(w.json(&["list"])["plugins"], serde_json::json!([]));

    // A hook whose binary is gone fails closed rather than give the command to Hermes.
    let pth = std::fs::read_dir(python.parent().unwrap().parent().unwrap().join("lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages/hermes_plugins_activate.pth");
    let line = std::fs::read_to_string(&pth).unwrap();
    std::fs::write(
        &pth,
        "import hermes_plugins_generation; hermes_plugins_generation.activate(binary=\"/nonexistent/hermes-plugins\")\n",
    )
    .unwrap();
    let (code, out, err) = hermes_says(&w, &hermes, &["plugins", "install", &url]);
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert!(err.contains("/nonexistent/hermes-plugins"), "{err}");
    std::fs::write(&pth, line).unwrap();

    w.ok(&["deactivate", "--python", python.to_str().unwrap()]);
    assert_eq!(ok(&["plugins", "list", "--plain"]), before);
}

/// What a tree holds, for "left alone": every path under `dir` with its file contents or link
/// target (directories by name).
fn tree_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let shown = path.strip_prefix(dir).unwrap().display().to_string();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.push((shown, target.into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                out.push((shown, Vec::new()));
                stack.push(path);
            } else {
                out.push((shown, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Beside Hermes's own package manager (`hermes pm`, 0.21+): run in the real Hermes, its
/// commands' bodies (`status`, `doctor`, `gc`, `repair`'s recovery — the CLI itself first
/// downloads a managed CPython this machine cannot fetch) leave a published generation, its
/// store and `config.yaml` byte for byte as they were, and `pm`'s plugin discovery does not
/// see the generation's plugins (it never installs or evicts their dependencies).
#[test]
fn hermes_pm_leaves_a_generation_alone() {
    let Some((python, w, _)) = agent_world("the hermes pm test", "unused.py", "") else {
        return;
    };
    if !crate::common::hermes_has_module(&python, "pm") {
        eprintln!("this Hermes has no `hermes pm` (0.21+): nothing to check");
        return;
    }
    let sky = repo_with(&w, "sky", &sky_files());
    w.ok(&["install", &file_url(&sky), "--enable", "--yes-deps"]);
    let config = std::fs::read(w.home.join("config.yaml")).unwrap();
    let before = tree_of(&w.pm());
    let script = r#"
import argparse, json, sys
import hermes_bootstrap
from pm import cli
from pm.workspace import enabled_plugin_entries
from pm.paths import repo_root
from hermes_cli._early_recovery import recover_if_needed
ran = {}
for name in ("cmd_status", "cmd_doctor", "cmd_gc"):
    try:
        ran[name] = repr(getattr(cli, name)(argparse.Namespace()))
    except BaseException as e:
        ran[name] = "raised " + type(e).__name__
try:
    ran["repair"] = repr(recover_if_needed(repo_root(), explicit=True))
except BaseException as e:
    ran["repair"] = "raised " + type(e).__name__
entries = [str(getattr(e, "name", e)) for e in enabled_plugin_entries()]
print(json.dumps({"ran": ran, "entries": entries}))
"#;
    let out = std::process::Command::new(&python)
        .args(["-c", script])
        .env("HERMES_HOME", &w.home)
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8(succeeded(out)).unwrap();
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(seen["ran"].as_object().unwrap().len(), 4, "{seen:#}");
    eprintln!("hermes pm, run in Hermes beside a generation: {seen}");
    assert!(
        !seen["entries"].to_string().contains("sky"),
        "pm sees the generation's plugin: {seen:#}"
    );
    assert!(tree_of(&w.pm()) == before, "hermes pm changed <home>/pm");
    assert_eq!(std::fs::read(w.home.join("config.yaml")).unwrap(), config);
}

/// A plugin that is a Python distribution from the package index (`install pypi:…`): its
/// wheel goes into the generation's environment only; Hermes finds it by its entry point there
/// and loads it while the profile enables it; its requirement on `hermes-agent` is judged
/// against the core, never installed.
#[test]
fn a_plugin_from_the_package_index_loads_from_the_generation() {
    let Some(python) = hermes_python() else {
        eprintln!("HERMES_PLUGINS_HERMES_PYTHON not set: skipping the PyPI plugin agent test");
        return;
    };
    let w = crate::pypi::pypi_world();
    let script = w.tmp.path().join("run_hermes.py");
    std::fs::write(&script, AGENT).unwrap();
    w.ok(&["install", "pypi:hermes-sky", "--enable", "--yes-deps"]);
    let seen = snapshot(&w, &python, &script);
    assert_eq!(seen["tools"]["sky_tool"], "skylib 1.0.0", "{seen:#}");
    assert_eq!(enabled(&seen), ["sky"], "{seen:#}");
    // Nothing went into Hermes's own environment.
    let own = std::process::Command::new(&python)
        .args([
            "-c",
            "import importlib.util; print(importlib.util.find_spec('hermes_sky'))",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&own.stdout).trim(), "None");

    w.ok(&["disable", "sky"]);
    let seen = snapshot(&w, &python, &script);
    assert_eq!(enabled(&seen), Vec::<String>::new(), "{seen:#}");
    assert!(
        seen["tools"]["sky_tool"]
            .as_str()
            .is_some_and(|s| s.contains("Unknown tool")),
        "{seen:#}"
    );

    // Against this Hermes as core, a distribution excluding its release is refused by name.
    let core = format!("installed:{}", python.display());
    let (code, _, err) = w.run(&[
        "install",
        "pypi:hermes-ancient",
        "--enable",
        "--yes-deps",
        "--core",
        &core,
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("`ancient` requires Hermes <0.13, but the core is"),
        "{err}"
    );
}

/// A pack `pack export` writes is one Hermes 0.22's own parser (`parse_pack`) reads, naming
/// the same plugins, commits and seeds; a pack with a secret-shaped seed is refused by both.
#[test]
fn an_exported_pack_parses_with_hermes_own_parser() {
    let Some(python) = hermes_python() else {
        eprintln!("HERMES_PLUGINS_HERMES_PYTHON not set: skipping the pack parser test");
        return;
    };
    if !crate::common::hermes_has_module(&python, "hermes_cli.plugin_packs") {
        eprintln!("this Hermes has no plugin packs (0.22+): nothing to check");
        return;
    }
    let w = World::new();
    let original = w.tmp.path().join("kit.yaml");
    std::fs::write(&original, crate::pack::pack_text(&w, "")).unwrap();
    w.ok(&["pack", "install", original.to_str().unwrap(), "--yes-deps"]);
    let exported = w.tmp.path().join("exported.yaml");
    std::fs::write(&exported, w.ok(&["pack", "export", "--name", "again"])).unwrap();
    let parse = |file: &Path| -> Result<Value, String> {
        let out = std::process::Command::new(&python)
            .args([
                "-c",
                "import json, sys\nfrom hermes_cli.plugin_packs import parse_pack, PackError\ntry:\n    p = parse_pack(open(sys.argv[1]).read(), source=sys.argv[1])\nexcept PackError as e:\n    print(json.dumps({'error': str(e)}))\n    sys.exit(0)\nprint(json.dumps({'name': p.name, 'plugins': sorted([e.repo, e.subdir, e.ref] for e in p.plugins), 'config': p.config}))",
                file.to_str().unwrap(),
            ])
            .env("HERMES_HOME", &w.home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        match doc["error"].as_str() {
            Some(e) => Err(e.to_string()),
            None => Ok(doc),
        }
    };
    let theirs = parse(&exported).unwrap();
    assert_eq!(theirs["name"], "again");
    let ours = w.json(&["pack", "show", exported.to_str().unwrap()]);
    let plugins = theirs["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), 2, "{theirs:#}");
    for p in ours["plugins"].as_array().unwrap() {
        assert!(
            plugins.iter().any(|t| t[2] == p["commit"]),
            "{p} not in {theirs:#}"
        );
    }
    assert_eq!(
        theirs["config"]["news"],
        serde_json::json!({"units": "metric", "retries": 3, "sources": ["a", "b"]}),
        "{theirs:#}"
    );
    // The same refusal on both sides.
    let secret = w.tmp.path().join("secret.yaml");
    std::fs::write(&secret, crate::pack::pack_text(&w, "    api_token: abc\n")).unwrap();
    let hermes_says = parse(&secret).unwrap_err();
    assert!(hermes_says.contains("api_token"), "{hermes_says}");
    let (code, _, err) = w.run(&["pack", "show", secret.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("secret-shaped key 'api_token'"), "{err}");
}
