"""The patches inside the real Hermes releases: each interpreter of
``HERMES_PLUGINS_TEST_PYTHONS`` (``:``-separated; `.ci/run` names 0.19.0, the eight
0.20.0 – 0.21.5 packagings and 0.22.2) runs
Hermes's own loaders with the package on its path and a generation written here. Without the
variable these tests skip, unless ``HERMES_PLUGINS_REQUIRE_HERMES`` is set, when they fail.
The whole round trip through the binary (install, exec, activate) is tests/it's."""

import json
import os
import subprocess

import pytest

from conftest import SOURCE

PYTHONS = [p for p in os.environ.get("HERMES_PLUGINS_TEST_PYTHONS", "").split(":") if p]

if not PYTHONS and os.environ.get("HERMES_PLUGINS_REQUIRE_HERMES"):
    raise RuntimeError("HERMES_PLUGINS_REQUIRE_HERMES is set, HERMES_PLUGINS_TEST_PYTHONS is not")

SKY = """
def register(ctx):
    ctx.register_tool(name="sky_tool", toolset="sky", schema={"name": "sky_tool",
        "description": "sky", "parameters": {"type": "object", "properties": {}}},
        handler=lambda args, **kw: "clear")
"""

OVERRIDE = """
def register(ctx):
    ctx.register_tool(name="web_search", toolset="web", schema={"name": "web_search",
        "description": "mine", "parameters": {"type": "object", "properties": {}}},
        handler=lambda args, **kw: "mine", override=True)
"""

NOTES = """
from agent.memory_provider import MemoryProvider

class Notes(MemoryProvider):
    pass

def register(ctx):
    ctx.register_memory_provider(Notes())
"""

PROBE = """
import json, sys
import hermes_plugins_generation
hermes_plugins_generation.install()
from hermes_cli.plugins import discover_plugins, get_plugin_manager
from tools.registry import registry
discover_plugins()
manager = get_plugin_manager()
loaded = {}
for key, plugin in manager._plugins.items():
    loaded[key] = {"enabled": bool(getattr(plugin, "enabled", False)),
                   "error": getattr(plugin, "error", None)}
from plugins.memory import list_memory_provider_names
print(json.dumps({
    "loaded": loaded,
    "sky_tool": registry.dispatch("sky_tool", {})
    if "sky_tool" in registry.get_all_tool_names() else None,
    "memory": sorted(list_memory_provider_names()),
}))
"""


#: Runs a test once per Hermes interpreter named (skipped when none is).
EACH_HERMES = pytest.mark.parametrize(
    "python",
    PYTHONS
    or [
        pytest.param(
            None,
            marks=pytest.mark.skip(
                reason="HERMES_PLUGINS_TEST_PYTHONS names no Hermes interpreter"
            ),
        )
    ],
)


def run_under_generation(python, home, directory, probe):
    """Runs ``probe`` in ``python`` as ``hermes-plugins exec`` would start it for the
    generation ``directory`` of ``home``, the package on its path; returns the JSON of its
    last line."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home.root,
        "HERMES_HOME": home.root,
        "PYTHONPATH": os.path.abspath(SOURCE),
        "HERMES_PLUGINS_GENERATION": directory,
        "HERMES_PLUGINS_PROFILE": "default",
        "HERMES_PLUGINS_AGENT_HOME": home.root,
    }
    done = subprocess.run(
        [python, "-c", probe], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def manifest(name, extra=""):
    return "name: %s\nversion: 1.0.0\ndescription: %s\n%s" % (name, name, extra)


@EACH_HERMES
def test_hermes_loads_exactly_the_generation(python, home):
    for name in ("stray", "memory-stray"):
        stray = os.path.join(home.root, "plugins", name)
        os.makedirs(stray)
        with open(os.path.join(stray, "plugin.yaml"), "w") as handle:
            handle.write(manifest(name))
        with open(os.path.join(stray, "__init__.py"), "w") as handle:
            handle.write(SKY.replace("sky_tool", "stray_tool") if name == "stray" else NOTES)
    directory = home.publish(
        plugins={
            "sky": {"files": {"plugin.yaml": manifest("sky"), "__init__.py": SKY}},
            "overrider": {"files": {"plugin.yaml": manifest("overrider"), "__init__.py": OVERRIDE}},
            "memory/notes": {"files": {"plugin.yaml": manifest("notes"), "__init__.py": NOTES}},
        },
    )
    seen = run_under_generation(python, home, directory, PROBE)
    assert seen["sky_tool"] == "clear", seen
    assert "stray" not in seen["loaded"], "what the generation does not run is not loaded"
    assert seen["loaded"]["sky"]["enabled"], seen
    overrider = seen["loaded"]["overrider"]
    assert "was not granted tools.override" in str(overrider["error"]), seen
    assert "notes" in seen["memory"] and "memory-stray" not in seen["memory"], seen


ENTRY_PROBE = """
import json
import hermes_plugins_generation
hermes_plugins_generation.install()
from hermes_cli.plugins import discover_plugins, get_plugin_manager
from tools.registry import registry
discover_plugins()
plugins = get_plugin_manager()._plugins
print(json.dumps({
    "loaded": {k: bool(getattr(p, "enabled", False)) for k, p in plugins.items()},
    "tools": sorted(n for n in registry.get_all_tool_names() if n.startswith("ep_")),
}))
"""


def entry_point_package(site, key):
    """A distribution installed in ``site`` that advertises plugin ``key`` through the
    ``hermes_agent.plugins`` entry point, as pip would leave it."""
    module = os.path.join(site, "ep_" + key)
    os.makedirs(module)
    with open(os.path.join(module, "__init__.py"), "w") as handle:
        handle.write(SKY.replace("sky_tool", "ep_%s_tool" % key))
    dist_info = os.path.join(site, "ep_%s-1.0.dist-info" % key)
    os.makedirs(dist_info)
    with open(os.path.join(dist_info, "METADATA"), "w") as handle:
        handle.write("Metadata-Version: 2.1\nName: ep-%s\nVersion: 1.0\n" % key)
    with open(os.path.join(dist_info, "entry_points.txt"), "w") as handle:
        handle.write("[hermes_agent.plugins]\n%s = ep_%s\n" % (key, key))


@EACH_HERMES
def test_entry_point_plugins_load_from_the_generation_as_enabled(python, home):
    """A plugin that is a Python distribution (installed into the generation's site-packages,
    never into Hermes's own) loads when the profile enables it and not otherwise."""
    directory = home.publish(
        plugins={"on": {"files": {}}, "off": {"files": {}}},
        enabled=["on"],
        python={"site_packages": "venv/site"},
    )
    site = os.path.join(directory, "venv", "site")
    for key in ("on", "off"):
        entry_point_package(site, key)
    seen = run_under_generation(python, home, directory, ENTRY_PROBE)
    assert seen["loaded"].get("on") is True, seen
    assert seen["loaded"].get("off") is False, seen
    assert seen["tools"] == ["ep_on_tool"], seen
