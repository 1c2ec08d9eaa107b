"""``hermes plugins list`` under a generation: Hermes's own listing, of the generation's
plugins (source ``hermes-plugins``) in place of ``<home>/plugins``, then the profile's
external plugins, then what hermes-plugins installed but enabled nowhere."""

import json
import os
import subprocess
from pathlib import Path

from .reader import home_of, published


def installed(find_tool):
    """``(key, version)`` of every plugin hermes-plugins has installed for this home (the
    generation holds only enabled ones): from ``hermes-plugins list --json`` (``find_tool()``
    gives the binary); empty when it cannot be asked."""
    try:
        binary = find_tool()
    except SystemExit:
        return []
    root, profile, _ = home_of(os.environ)
    try:
        done = subprocess.run(
            [binary, "--home", root, "--profile", profile, "--json", "list"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
        doc = json.loads(done.stdout.decode("utf-8"))
        return [(p["key"], p.get("version") or "") for p in doc.get("plugins") or []]
    except Exception:
        return []


def patch_plugin_list(module, find_tool):
    """``hermes_cli.plugins_cmd._discover_all_plugins`` (0.19+), whose entries are tuples
    ``(name, version, description, source, path[, key])``."""
    discover = module._discover_all_plugins
    plugins_dir = module._plugins_dir

    def _discover_all_plugins():
        plan = published(os.environ)
        if plan is None:
            return discover()
        generation = Path(plan.plugins_dir)
        module._plugins_dir = lambda: generation
        try:
            entries = discover()
        finally:
            module._plugins_dir = plugins_dir
        listed = []
        for found in entries:
            entry = list(found)
            if str(entry[4]).startswith(str(generation) + os.sep):
                entry[3] = "hermes-plugins"
            listed.append(tuple(entry))
        if plan.external:
            keep = set(plan.external)
            names = {e[0] for e in listed}
            listed.extend(
                e
                for e in discover()
                if e[3] in ("user", "git")
                and e[0] not in names
                and (e[0] in keep or (len(e) > 5 and e[5] in keep))
            )
        # Installed but enabled nowhere: not in the generation, still listed (Hermes gives
        # them their status from config.yaml, as it does for its own).
        shape = len(listed[0]) if listed else 6
        known = {e[0] for e in listed} | {e[5] for e in listed if len(e) > 5}
        for key, version in installed(find_tool):
            if key not in known:
                entry = (key, version, "", "hermes-plugins", Path(os.devnull), key)
                listed.append(entry[:shape])
        return listed

    module._discover_all_plugins = _discover_all_plugins
