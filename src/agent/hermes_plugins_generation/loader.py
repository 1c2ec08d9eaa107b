"""Hermes's general plugin loader, ``hermes_cli.plugins``, under a generation: it discovers
the generation's plugins in place of ``<home>/plugins``, enables exactly the profile's
selection, and lets a managed plugin override a built-in tool only with ``tools.override``
granted.

Releases, told apart by what their loader has rather than by number:

* 0.13 - 0.19: ``PluginManager._scan_directory(path, source)`` scans ``<home>/plugins`` with
  source ``"user"``.
* 0.22 and upstream main (read from source, commit 00067189): discovery lives in
  ``hermes_cli.plugins_discovery``; ``PluginManager._collect_directory_manifests()`` scans
  ``get_hermes_home()/plugins`` with that module's ``scan_directory``, and the
  ``_get_enabled_plugins``/``_get_disabled_plugins`` it re-exports are defined there. 0.22
  keeps ``_scan_directory`` for ``hermes plugins doctor <id>``, so both are patched.
"""

import inspect
import os
import sys

from . import capabilities, hermes


def patch(module, plan, environ):
    """Patches ``hermes_cli.plugins`` (``module``) right after it executed."""
    hermes.require(
        module,
        "PluginManager",
        "PluginContext",
        "_get_enabled_plugins",
        "_get_disabled_plugins",
        "get_hermes_home",
    )
    env_file = environ.get("HERMES_PLUGINS_ENV_FILE") or ""

    def user_manifests(scan, path):
        """The generation's plugins in place of ``path`` (``<home>/plugins``), then the
        profile's external plugins from ``path`` — nothing else of that directory is loaded
        (the generation decides what runs)."""
        hermes.check_home(module.get_hermes_home(), plan, environ)
        found = list(scan(type(path)(plan.plugins_dir)))
        if plan.external:
            keep = set(plan.external)
            found.extend(
                m
                for m in scan(path)
                if getattr(m, "key", None) in keep or getattr(m, "name", None) in keep
            )
        return found

    discovery = sys.modules.get("hermes_cli.plugins_discovery")
    if hasattr(module.PluginManager, "_collect_directory_manifests") and discovery is not None:
        _patch_discovery(module, discovery, user_manifests)
    else:
        hermes.require(module.PluginManager, "_scan_directory")
    if hasattr(module.PluginManager, "_scan_directory"):
        scan = module.PluginManager._scan_directory

        def _scan_directory(self, path, source=None, *args, **kwargs):
            if source != "user":
                return scan(self, path, source, *args, **kwargs)
            return user_manifests(lambda p: scan(self, p, source, *args, **kwargs), path)

        module.PluginManager._scan_directory = _scan_directory

    enabled_of_config = module._get_enabled_plugins
    disabled_of_config = module._get_disabled_plugins

    def _get_enabled_plugins():
        configured = enabled_of_config()
        chosen = set(plan.allowed(os.environ, env_file))
        if configured is None and not chosen:
            return None
        return {n for n in (configured or ()) if n not in plan.managed} | chosen

    def _get_disabled_plugins():
        return {n for n in disabled_of_config() if n not in plan.managed}

    module._get_enabled_plugins = _get_enabled_plugins
    module._get_disabled_plugins = _get_disabled_plugins
    if discovery is not None and hasattr(discovery, "_get_enabled_plugins"):
        # Main defines them there and re-exports them: patch both names.
        discovery._get_enabled_plugins = _get_enabled_plugins
        discovery._get_disabled_plugins = _get_disabled_plugins
    _gate_tool_override(module, plan)
    capabilities.patch_capabilities(module, plan)


def _patch_discovery(module, discovery, user_manifests):
    """0.22 and main: the generation's manifests as the user layer of
    ``_collect_directory_manifests``, in Hermes's precedence (bundled < user < project: a
    later manifest wins on a key)."""
    hermes.require(discovery, "scan_directory", "get_hermes_home")
    collect = module.PluginManager._collect_directory_manifests
    scan_directory = discovery.scan_directory

    def _collect_directory_manifests(self, *args, **kwargs):
        found = collect(self, *args, **kwargs)
        user_dir = discovery.get_hermes_home() / "plugins"
        ours = user_manifests(lambda p: scan_directory(p, "user"), user_dir)

        def source(manifest):
            return getattr(manifest, "source", None)

        return (
            [m for m in found if source(m) == "bundled"]
            + ours
            + [m for m in found if source(m) not in ("bundled", "user")]
        )

    module.PluginManager._collect_directory_manifests = _collect_directory_manifests


def _gate_tool_override(module, plan):
    """``register_tool(..., override=True)`` by a managed plugin needs ``tools.override``
    granted in the generation (0.22 also asks ``plugin_capability_granted``, patched in
    ``capabilities.py``; this gate is the only one on 0.13 - 0.19)."""
    register_tool = module.PluginContext.register_tool

    def _register_tool(self, *args, **kwargs):
        manifest = getattr(self, "manifest", None)
        key = getattr(manifest, "key", "") or getattr(manifest, "name", "")
        bound = inspect.signature(register_tool).bind_partial(self, *args, **kwargs)
        if (
            key in plan.plugins
            and bound.arguments.get("override")
            and not plan.granted(key, "tools.override")
        ):
            error = getattr(module, "PluginToolOverrideError", PermissionError)
            raise error(
                "plugin %r was not granted tools.override (hermes-plugins capabilities %s "
                "--grant tools.override)" % (key, key)
            )
        return register_tool(self, *args, **kwargs)

    module.PluginContext.register_tool = _register_tool
