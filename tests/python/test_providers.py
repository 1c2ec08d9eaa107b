"""The provider loaders that read ``<home>/plugins`` themselves, under a generation."""

import os
from pathlib import Path

import pytest

from hermes_plugins_generation import providers, reader


@pytest.fixture
def plan(home, stub_modules, monkeypatch):
    monkeypatch.setattr(os, "environ", {})
    stub_modules("hermes_constants", get_hermes_home=lambda: Path(home.root))
    for name in ("local-memory", "model-providers/local-model"):
        os.makedirs(os.path.join(home.root, "plugins", *name.split("/")))
    directory = home.publish(
        plugins={
            "engram": {},
            "memory/engram": {},
            "context_engine/engram": {},
            "model-providers/alpha": {},
            "beta": {"files": {"plugin.yaml": "name: beta\nkind: model-provider # x\n"}},
            "gamma": {"files": {"__init__.py": "register_provider(ProviderProfile())\n"}},
            "keyed": {"requires_env": ["NEVER_SET"]},
        },
        external=["local-memory", "model-providers/local-model"],
    )
    return reader.read_plan(directory, "default")


def test_a_view_lists_only_what_it_was_given(tmp_path):
    (tmp_path / "a").mkdir()
    view = providers.DirView("label", [("a", tmp_path / "a"), ("b", tmp_path / "missing")])
    assert list(view.iterdir()) == [tmp_path / "a"]
    assert view / "a" == tmp_path / "a"
    assert not (view / "other").exists()
    assert str(view) == os.fspath(view) == "label" and view.is_dir()


def test_each_category_loader_sees_its_own_category_first(plan):
    memory = providers.flat_view(plan, {}, "memory/")
    engram = memory / "engram"
    assert str(engram).endswith(os.path.join("plugins", "memory", "engram"))
    assert str(providers.flat_view(plan, {}, "") / "engram").endswith(
        os.path.join("plugins", "engram")
    )
    assert str(memory / "context_engine/engram").endswith("context_engine/engram")
    names = [p.name for p in memory.iterdir()]
    assert "local-memory" in names, "the profile's external plugins come after"
    assert "keyed" not in names, "a plugin missing its requires_env does not run"


def test_0_19_memory_loader_is_given_the_view(plan, stub_modules):
    memory = stub_modules(
        "plugins.memory",
        _get_user_plugins_dir=lambda: None,
        _iter_provider_dirs=None,
        find_provider_dir=None,
    )
    providers.patch_flat_providers(memory, plan, {})
    assert memory._get_user_plugins_dir()._label == plan.plugins_dir


def test_0_22_loaders_call_the_shared_user_plugins_dir(plan, stub_modules):
    loader = stub_modules("plugins.plugin_loader", user_plugins_dir=None, iter_plugin_dirs=None)
    cron = stub_modules("plugins.cron_providers", _loader=loader)
    with pytest.raises(reader.GenerationError, match="could not patch"):
        providers.patch_flat_providers(cron, plan, {})
    providers.patch_plugin_loader(loader, plan, {})
    providers.patch_flat_providers(cron, plan, {})
    code = compile("view = loader.user_plugins_dir()", "<cron>", "exec")
    scope = {"__name__": "plugins.memory", "loader": loader}
    exec(code, scope)
    assert str(scope["view"] / "engram").endswith(os.path.join("memory", "engram"))


def test_model_providers_are_told_as_hermes_tells_them(plan, stub_modules):
    def path(key):
        return Path(plan.plugins_dir, *key.split("/"))

    assert providers.is_model_provider("model-providers/alpha", path("model-providers/alpha"))
    assert providers.is_model_provider("beta", path("beta"))
    assert providers.is_model_provider("gamma", path("gamma"))
    assert not providers.is_model_provider("engram", path("engram"))
    module = stub_modules(
        "providers",
        _discover_providers=None,
        _user_plugins_dir=None,
        _import_plugin_dir=None,
        register_provider=None,
        _installed_plugins_dir=None,
    )
    providers.patch_model_providers(module, plan, {})
    assert sorted(p.name for p in module._user_plugins_dir().iterdir()) == [
        "alpha",
        "beta",
        "gamma",
        "local-model",
    ]
    assert module._installed_plugins_dir() is not None, "local-memory is flat and external"


def test_another_providers_package_is_left_alone(plan, stub_modules):
    other = stub_modules("providers", _user_plugins_dir="theirs")
    providers.patch_model_providers(other, plan, {})
    assert other._user_plugins_dir == "theirs"
