"""``hermes_cli.plugins`` under a generation, against stand-ins shaped like each release's
loader (the real ones: ``test_real_hermes.py``)."""

import os
import types
from pathlib import Path

import pytest

from hermes_plugins_generation import loader, reader


class ToolOverrideError(Exception):
    pass


def manifests(path, source):
    if not os.path.isdir(path):
        return []
    return [
        types.SimpleNamespace(key=name, name=name, source=source, path=os.path.join(path, name))
        for name in sorted(os.listdir(path))
    ]


def loader_module(stub, agent_home, enabled=None, disabled=()):
    class PluginManager:
        def _scan_directory(self, path, source=None):
            return manifests(path, source)

    class PluginContext:
        def __init__(self, key):
            self.manifest = types.SimpleNamespace(key=key, name=key)

        def register_tool(self, name, handler=None, override=False):
            return name

    return stub(
        "hermes_cli.plugins",
        PluginManager=PluginManager,
        PluginContext=PluginContext,
        PluginToolOverrideError=ToolOverrideError,
        _get_enabled_plugins=lambda: enabled,
        _get_disabled_plugins=lambda: set(disabled),
        get_hermes_home=lambda: Path(agent_home),
    )


@pytest.fixture
def world(home, monkeypatch):
    """A generation managing ``sky`` (enabled, granted nothing) and ``moon`` (not enabled),
    and ``<home>/plugins`` holding ``mine`` (external) and ``stray``."""
    for name in ("mine", "stray"):
        os.makedirs(os.path.join(home.root, "plugins", name))
    directory = home.publish(plugins={"sky": {}, "moon": {}}, enabled=["sky"], external=["mine"])
    environ = {"HERMES_PLUGINS_AGENT_HOME": home.root}
    monkeypatch.setattr(os, "environ", {})
    return reader.read_plan(directory, "default"), environ, home.root


def test_0_19_discovers_the_generation_in_place_of_the_home(world, stub_modules, monkeypatch):
    plan, environ, root = world
    monkeypatch.delitem(__import__("sys").modules, "hermes_cli.plugins_discovery", raising=False)
    module = loader_module(stub_modules, root, enabled={"moon", "bundled-one"}, disabled={"sky"})
    loader.patch(module, plan, environ)
    user = module.PluginManager()._scan_directory(Path(root, "plugins"), "user")
    assert [m.key for m in user] == ["moon", "sky", "mine"]
    assert all(m.path.startswith(plan.plugins_dir) for m in user[:2])
    bundled = module.PluginManager()._scan_directory(Path(root, "plugins"), "bundled")
    assert [m.key for m in bundled] == ["mine", "stray"], "other sources are Hermes's"
    assert module._get_enabled_plugins() == {"bundled-one", "sky"}
    assert module._get_disabled_plugins() == set()


def test_nothing_configured_and_nothing_chosen_stays_none(home, stub_modules):
    plan = reader.read_plan(home.publish(plugins={"sky": {}}, enabled=[]), "default")
    module = loader_module(stub_modules, home.root)
    loader.patch(module, plan, {})
    assert module._get_enabled_plugins() is None


def test_a_tool_override_needs_the_grant(world, stub_modules):
    plan, environ, root = world
    module = loader_module(stub_modules, root)
    loader.patch(module, plan, environ)
    with pytest.raises(ToolOverrideError, match=r"tools\.override"):
        module.PluginContext("sky").register_tool("web_search", None, override=True)
    assert module.PluginContext("sky").register_tool("sky_tool", override=False) == "sky_tool"
    assert module.PluginContext("else").register_tool("web_search", override=True)
    plan.grants["sky"] = {"tools.override"}
    assert module.PluginContext("sky").register_tool(name="web_search", override=True)


def test_another_home_than_the_one_prepared_is_refused(world, stub_modules, tmp_path):
    plan, environ, _ = world
    module = loader_module(stub_modules, tmp_path / "elsewhere")
    loader.patch(module, plan, environ)
    with pytest.raises(reader.GenerationError, match="prepared profile 'default'"):
        module.PluginManager()._scan_directory(Path(tmp_path, "elsewhere", "plugins"), "user")


def test_0_22_collects_the_generation_as_the_user_layer(world, stub_modules):
    plan, environ, root = world
    module = loader_module(stub_modules, root, enabled=set())

    def collect(self):
        return [
            *manifests(Path(root, "plugins"), "user"),
            types.SimpleNamespace(key="b", source="bundled"),
            types.SimpleNamespace(key="p", source="project"),
        ]

    module.PluginManager._collect_directory_manifests = collect
    discovery = stub_modules(
        "hermes_cli.plugins_discovery",
        scan_directory=manifests,
        get_hermes_home=lambda: Path(root),
        _get_enabled_plugins=module._get_enabled_plugins,
        _get_disabled_plugins=module._get_disabled_plugins,
    )
    loader.patch(module, plan, environ)
    found = module.PluginManager()._collect_directory_manifests()
    assert [m.key for m in found] == ["b", "moon", "sky", "mine", "p"]
    assert discovery._get_enabled_plugins() == {"sky"}


def test_a_loader_without_what_the_patch_needs_is_refused(world, stub_modules):
    plan, environ, root = world
    module = loader_module(stub_modules, root)
    del module._get_disabled_plugins
    with pytest.raises(reader.GenerationError, match="lacks _get_disabled_plugins"):
        loader.patch(module, plan, environ)
