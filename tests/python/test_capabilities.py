"""Capabilities a managed plugin holds: only what the profile granted in the generation."""

import dataclasses

import pytest

from hermes_plugins_generation import capabilities, reader


@pytest.fixture
def plan(home):
    directory = home.publish(
        plugins={"keyed": {}, "other": {}}, grants={"keyed": ["llm.model_override"]}
    )
    return reader.read_plan(directory, "default")


@dataclasses.dataclass(frozen=True)
class TrustPolicy:
    plugin_id: str
    allow_provider_override: bool = False
    allow_model_override: bool = False


def test_an_llm_override_needs_the_grant(plan, stub_modules):
    def resolve(plugin_id):
        return TrustPolicy(plugin_id, True, True)

    llm = stub_modules("agent.plugin_llm", _resolve_trust_policy=resolve)
    capabilities.patch_llm(llm, plan)
    assert llm._resolve_trust_policy("keyed") == TrustPolicy("keyed", False, True)
    assert llm._resolve_trust_policy("other") == TrustPolicy("other", False, False)
    assert llm._resolve_trust_policy("unmanaged") == TrustPolicy("unmanaged", True, True)


def test_hermes_0_22_s_capability_gate_is_narrowed(plan, stub_modules):
    def granted(plugin_id, capability, config=None):
        return True

    gate = stub_modules("hermes_cli.plugin_capabilities", plugin_capability_granted=granted)
    plugins = stub_modules("hermes_cli.plugins", plugin_capability_granted=granted)
    capabilities.patch_capabilities(plugins, plan)
    for module in (gate, plugins):
        check = module.plugin_capability_granted
        assert check("keyed", "llm.model_override")
        assert not check("keyed", "tools.override")
        assert check("unmanaged", "tools.override", config={})
    assert gate.plugin_capability_granted.__wrapped__ is granted


def test_releases_without_the_gate_are_left_alone(plan, stub_modules, monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "hermes_cli.plugin_capabilities", raising=False)
    plugins = stub_modules("hermes_cli.plugins")
    capabilities.patch_capabilities(plugins, plan)
    assert not hasattr(plugins, "plugin_capability_granted")
