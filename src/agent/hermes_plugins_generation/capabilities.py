"""Capabilities a plugin holds in a running Hermes: only those the profile granted in the
generation, whatever Hermes's own configuration says.

* ``agent.plugin_llm`` (0.19+): ``_resolve_trust_policy`` gives a plugin's LLM overrides
  (:func:`patch_llm`).
* ``hermes_cli.plugin_capabilities`` (0.22+): ``plugin_capability_granted`` gates
  ``tools.override``, ``gateway.platform_actions`` and ``ctx.has_capability``
  (:func:`patch_capabilities`).
* ``tools.override`` on 0.13 - 0.19 is gated in ``register_tool`` (``loader.py``).
"""

import dataclasses
import sys

from . import hermes

#: Capability id -> the ``_TrustPolicy`` field of ``agent.plugin_llm`` it unlocks.
LLM_CAPABILITIES = {
    "llm.provider_override": "allow_provider_override",
    "llm.model_override": "allow_model_override",
    "llm.agent_id_override": "allow_agent_id_override",
    "llm.profile_override": "allow_profile_override",
    "llm.task_override": "allow_task_override",  # Hermes 0.22 (agent/plugin_llm.py _TrustPolicy)
}


def patch_capabilities(plugins_module, plan):
    """Hermes 0.22's ``plugin_capability_granted``, which ``hermes_cli.plugins``
    (``plugins_module``) imports by name: a plugin the generation manages keeps a capability
    only if the profile granted it in the generation too."""
    capabilities = sys.modules.get("hermes_cli.plugin_capabilities")
    if capabilities is None or not hasattr(capabilities, "plugin_capability_granted"):
        return  # Hermes 0.13 - 0.19: no such module
    granted = capabilities.plugin_capability_granted

    def plugin_capability_granted(plugin_id, capability, *args, **kwargs):
        allowed = granted(plugin_id, capability, *args, **kwargs)
        if allowed and plugin_id in plan.plugins and not plan.granted(plugin_id, capability):
            return False
        return allowed

    plugin_capability_granted.__wrapped__ = granted
    capabilities.plugin_capability_granted = plugin_capability_granted
    if getattr(plugins_module, "plugin_capability_granted", None) is granted:
        plugins_module.plugin_capability_granted = plugin_capability_granted


def patch_llm(module, plan, environ=None):
    """``agent.plugin_llm``: a managed plugin's trust policy keeps only the overrides the
    profile granted (:data:`LLM_CAPABILITIES`); unmanaged plugins keep Hermes's. (``environ``
    is unused: the signature every plan patch of ``hook.HOOKED`` has.)"""
    hermes.require(module, "_resolve_trust_policy")
    resolve = module._resolve_trust_policy

    def _resolve_trust_policy(plugin_id):
        policy = resolve(plugin_id)
        if plugin_id not in plan.plugins:
            return policy
        denied = {
            field: False
            for capability, field in LLM_CAPABILITIES.items()
            if hasattr(policy, field) and not plan.granted(plugin_id, capability)
        }
        return dataclasses.replace(policy, **denied) if denied else policy

    module._resolve_trust_policy = _resolve_trust_policy
