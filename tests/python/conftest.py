"""Tests of the Python package that goes into Hermes (src/agent/hermes_plugins_generation).

The pure parts run against stand-ins of Hermes's modules; ``test_real_hermes.py`` runs the
patches inside the real Hermes releases named by ``HERMES_PLUGINS_TEST_PYTHONS``.
"""

import json
import os
import sys
import types

import pytest

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..", "src", "agent")
sys.path.insert(0, os.path.abspath(SOURCE))


class Home:
    """A Hermes home with hermes-plugins' layout: ``publish()`` writes a generation and points
    ``pm/current`` at it, as the binary does (docs/generations.md)."""

    def __init__(self, root):
        self.root = str(root)
        os.makedirs(os.path.join(self.root, "pm", "generations"), exist_ok=True)

    def publish(self, number=1, plugins=(), enabled=None, grants=None, external=(), python=None):
        """``plugins``: ``{key: {"files": {name: text}, **entry}}`` or keys."""
        directory = os.path.join(self.root, "pm", "generations", str(number))
        os.makedirs(os.path.join(directory, "plugins"))
        entries = []
        for key in plugins:
            spec = dict(plugins[key]) if isinstance(plugins, dict) else {}
            files = spec.pop("files", {"__init__.py": "def register(ctx):\n    pass\n"})
            plugin_dir = os.path.join(directory, "plugins", *key.split("/"))
            os.makedirs(plugin_dir)
            for name, text in files.items():
                with open(os.path.join(plugin_dir, name), "w") as handle:
                    handle.write(text)
            entries.append(dict({"key": key, "name": key.rsplit("/", 1)[-1]}, **spec))
        doc = {
            "format": 1,
            "number": number,
            "plugins": entries,
            "profiles": {
                "default": {
                    "enabled": list(plugins) if enabled is None else list(enabled),
                    "grants": grants or {},
                    "external": list(external),
                }
            },
        }
        if python is not None:
            doc["python"] = python
        with open(os.path.join(directory, "generation.json"), "w") as handle:
            json.dump(doc, handle)
        link = os.path.join(self.root, "pm", "current")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.path.join("generations", str(number)), link)
        return directory


@pytest.fixture
def home(tmp_path):
    return Home(tmp_path / "home")


@pytest.fixture
def stub_modules(monkeypatch):
    """Registers stand-in modules in ``sys.modules`` for one test: ``stub("a.b", x=1)``."""

    def stub(name, **attributes):
        module = types.ModuleType(name)
        for key, value in attributes.items():
            setattr(module, key, value)
        monkeypatch.setitem(sys.modules, name, module)
        return module

    return stub
