"""The import hook: patches Hermes's modules as they execute, and only when a generation is
there to load (a stand-in ``hermes_cli`` package on disk, imported through the hook)."""

import os
import sys

import pytest

import hermes_plugins_generation as package
from hermes_plugins_generation import hook

STUB_LOADER = """
from pathlib import Path
import os

class PluginManager:
    def _scan_directory(self, path, source=None):
        return sorted(os.listdir(path)) if os.path.isdir(path) else []

class PluginContext:
    def register_tool(self, name, handler=None, override=False):
        return name

def _get_enabled_plugins():
    return None

def _get_disabled_plugins():
    return set()

def get_hermes_home():
    return Path(os.environ["HERMES_HOME"])
"""


@pytest.fixture
def fake_hermes(tmp_path, monkeypatch):
    """A ``hermes_cli`` package with a 0.19-shaped ``plugins`` module on ``sys.path``; the
    hooks and modules a test adds are taken away after it."""
    (tmp_path / "fake" / "hermes_cli").mkdir(parents=True)
    (tmp_path / "fake" / "hermes_cli" / "__init__.py").write_text("")
    (tmp_path / "fake" / "hermes_cli" / "plugins.py").write_text(STUB_LOADER)
    monkeypatch.syspath_prepend(str(tmp_path / "fake"))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    for name in ("hermes_cli", "hermes_cli.plugins"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield
    for name in ("hermes_cli", "hermes_cli.plugins"):
        sys.modules.pop(name, None)


def scan(home_root):
    from hermes_cli.plugins import PluginManager

    return PluginManager()._scan_directory(os.path.join(home_root, "plugins"), "user")


def test_install_does_nothing_without_exec(monkeypatch):
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    before = list(sys.meta_path)
    package.install({})
    assert sys.meta_path == before
    package.activate({"HERMES_PLUGINS_GENERATION": "/prepared/by/exec"})
    assert sys.meta_path == before, "under exec the .pth line defers to exec's copy"


def test_only_hermes_s_plugin_modules_are_hooked(fake_hermes):
    import hermes_cli

    finder = hook.Hook({})
    assert finder.find_spec("json") is None
    spec = finder.find_spec("hermes_cli.plugins", hermes_cli.__path__)
    assert isinstance(spec.loader, hook.PatchingLoader)
    assert finder.find_spec("hermes_cli.absent", hermes_cli.__path__) is None


def test_exec_s_generation_is_loaded_in_place_of_the_home(home, fake_hermes, monkeypatch):
    os.makedirs(os.path.join(home.root, "plugins", "stray"))
    directory = home.publish(plugins={"sky": {}}, python={"site_packages": "site"})
    os.makedirs(os.path.join(directory, "site"))
    monkeypatch.setenv("HERMES_HOME", home.root)
    package.install(
        {
            "HERMES_PLUGINS_GENERATION": directory,
            "HERMES_PLUGINS_PROFILE": "default",
            "HERMES_PLUGINS_AGENT_HOME": home.root,
        }
    )
    assert scan(home.root) == ["sky"]
    assert os.path.join(directory, "site") in sys.path, "the generation's site-packages last"
    sys.path.remove(os.path.join(directory, "site"))


def test_an_activated_home_with_nothing_published_is_left_alone(home, fake_hermes, monkeypatch):
    os.makedirs(os.path.join(home.root, "plugins", "stray"))
    monkeypatch.setenv("HERMES_HOME", home.root)
    package.activate({"HERMES_HOME": home.root}, binary="/bin/true")
    assert scan(home.root) == ["stray"]


def test_an_activated_home_holds_a_lease_on_what_it_loads(home, fake_hermes, monkeypatch):
    home.publish(plugins={"sky": {}})
    monkeypatch.setenv("HERMES_HOME", home.root)
    monkeypatch.setattr(hook, "_ACTIVATED_LEASE", None)
    package.activate({"HERMES_HOME": home.root}, binary="/bin/true")
    assert scan(home.root) == ["sky"]
    assert hook._ACTIVATED_LEASE is not None and not hook._ACTIVATED_LEASE.closed
    hook._ACTIVATED_LEASE.close()


def test_an_activated_profile_reads_its_own_env_file(home, monkeypatch):
    """A profile's process is handed the profile's own ``.env`` (the file Hermes reads for
    that profile), the default profile ``<root>/.env``."""
    home.publish(plugins={"sky": {}})
    monkeypatch.setattr(hook, "_ACTIVATED_LEASE", None)
    work = os.path.join(home.root, "profiles", "work")
    os.makedirs(work)
    prepared = hook.lease_for({"HERMES_HOME": work})
    assert prepared["HERMES_PLUGINS_PROFILE"] == "work"
    assert prepared["HERMES_PLUGINS_ENV_FILE"] == os.path.join(work, ".env")
    hook._ACTIVATED_LEASE.close()
    prepared = hook.lease_for({"HERMES_HOME": home.root})
    assert prepared["HERMES_PLUGINS_ENV_FILE"] == os.path.join(home.root, ".env")
    hook._ACTIVATED_LEASE.close()
