"""Loads plugins through a real, unmodified Hermes Agent, the way a user's Hermes does, and
reports what happened — the ground truth `validate` is compared with.

Run with the Python of a venv where `hermes-agent` is installed (`HERMES_CONFORMANCE_PATH`
prepends entries to `sys.path`, e.g. a wheel the plugin imports; `HERMES_CONFORMANCE_DISPATCH`
= `{"tool": …, "args": {…}}` also calls that tool through Hermes's registry):

    venv/bin/python src/check/hermes_load.py KEY=[site:]DIR[#GRANT,…] … > out.json

(`site:DIR`: a pip-distributed plugin — DIR holds its modules and `*.dist-info` and goes on
`sys.path`, where Hermes's entry-point scan finds it; nothing is linked.)

For each plugin, in a child process of its own with a throwaway HERMES_HOME: the plugin is
linked at `$HERMES_HOME/plugins/<KEY>` (a category key `cat/name` nests one level), enabled in
`config.yaml` (`plugins.enabled: [KEY]`) with the legacy grant keys given after `#` set to true
under `plugins.entries.<KEY>` (what consent writes, e.g. `allow_tool_override`), and
`hermes_cli.plugins.discover_plugins()` runs.
The report per key: whether the manager knew the plugin, whether it was enabled, its error,
its kind, and the tools, hooks and middleware it registered. Stdlib only; nothing here
imports the plugin but Hermes itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, logging, os, sys
logging.disable(logging.CRITICAL)
key = sys.argv[1]
for extra in filter(None, os.environ.get("HERMES_CONFORMANCE_PATH", "").split(os.pathsep)):
    sys.path.insert(0, extra)
from hermes_cli import plugins
plugins.discover_plugins()
manager = plugins.get_plugin_manager()
loaded = manager._plugins.get(key)
if loaded is None:
    print(json.dumps({"known": False}))
else:
    report = {
        "known": True,
        "enabled": bool(loaded.enabled),
        "error": loaded.error,
        "kind": getattr(loaded.manifest, "kind", None),
        "tools": sorted(loaded.tools_registered),
        "hooks": sorted(loaded.hooks_registered),
        "middleware": sorted(getattr(loaded, "middleware_registered", []) or []),
    }
    call = os.environ.get("HERMES_CONFORMANCE_DISPATCH")
    if call:
        from tools.registry import registry
        request = json.loads(call)
        report["dispatch"] = registry.dispatch(request["tool"], request.get("args", {}))
    print(json.dumps(report))
"""


def config_text(key: str, grants: list[str]) -> str:
    """`config.yaml` enabling `key` with `grants` (dotted legacy keys) set to true."""
    lines = ["plugins:", "  enabled:", "    - " + json.dumps(key)]
    if grants:
        lines += ["  entries:", "    " + json.dumps(key) + ":"]
        nested: dict = {}
        for grant in grants:
            node = nested
            parts = grant.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = True

        def emit(node: dict, indent: int) -> None:
            for k, v in node.items():
                if isinstance(v, dict):
                    lines.append(" " * indent + f"{k}:")
                    emit(v, indent + 2)
                else:
                    lines.append(" " * indent + f"{k}: true")

        emit(nested, 6)
    return "\n".join(lines) + "\n"


def load(key: str, directory: Path, grants: list[str], timeout: float, site: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="hermes-conformance-") as home:
        home_path = Path(home)
        extra_path = os.environ.get("HERMES_CONFORMANCE_PATH", "")
        if site:
            # A pip-distributed plugin: its modules and *.dist-info on sys.path, found by
            # Hermes's entry-point scan (importlib.metadata), nothing linked.
            extra_path = os.pathsep.join(filter(None, [str(directory.resolve()), extra_path]))
        else:
            link = home_path / "plugins" / key
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(directory.resolve(), target_is_directory=True)
        (home_path / "config.yaml").write_text(config_text(key, grants), encoding="utf-8")
        env = dict(
            os.environ,
            HERMES_HOME=home,
            HOME=home,
            NO_COLOR="1",
            HERMES_CONFORMANCE_PATH=extra_path,
        )
        env.pop("HERMES_PLUGINS_DEBUG", None)
        try:
            done = subprocess.run(
                [sys.executable, "-c", CHILD, key],
                env=env,
                cwd=home,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return {"known": False, "harness_error": f"timed out after {timeout} s"}
        lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
        if done.returncode != 0 or not lines:
            return {
                "known": False,
                "harness_error": f"exit {done.returncode}: {done.stderr.strip()[-2000:]}",
            }
        return json.loads(lines[-1])


def main() -> int:
    timeout = float(os.environ.get("HERMES_CONFORMANCE_TIMEOUT", "60"))
    report = {}
    for arg in sys.argv[1:]:
        key, _, rest = arg.partition("=")
        directory, _, grants = rest.partition("#")
        site = directory.startswith("site:")
        directory = directory.removeprefix("site:")
        report[key] = load(
            key, Path(directory), [g for g in grants.split(",") if g], timeout, site
        )
    json.dump(report, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
