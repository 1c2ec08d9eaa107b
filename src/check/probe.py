"""hermes-plugins --probe: import a plugin and call register(ctx) with a recording context.

Usage: python probe.py PLUGIN_DIR RESULT_JSON

Runs in a child interpreter with a throwaway HERMES_HOME. Network access through the socket
module is refused. The result is written to RESULT_JSON after each phase, so a plugin that
exits the interpreter or hangs still leaves a record of how far it got. This is not a sandbox:
the plugin's code runs with the user's rights.
"""

import importlib.util
import inspect
import json
import os
import socket
import sys
import traceback

plugin_dir, result_path = sys.argv[1], sys.argv[2]
result = {
    "phase": "setup",
    "tools": [],
    "hooks": [],
    "middleware": [],
    "commands": [],
    "cli_commands": [],
    "platforms": [],
    "other_calls": [],
    "network_attempts": [],
    "error": None,
}


def save(phase=None):
    if phase:
        result["phase"] = phase
    tmp = result_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    os.replace(tmp, result_path)


def _deny(what):
    def deny(*args, **kwargs):
        target = repr(args[1] if len(args) > 1 and what == "connect" else args[0] if args else "")
        result["network_attempts"].append(f"{what}({target[:80]})")
        raise OSError(f"network access is blocked by hermes-plugins --probe ({what})")
    return deny


for name in ("connect", "connect_ex", "bind", "sendto", "sendmsg"):
    setattr(socket.socket, name, _deny(name))
for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "create_server"):
    setattr(socket, name, _deny(name))


class _Anything:
    """Stands in for whatever an unknown ctx attribute returns."""

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getattr__(self, name):
        return _Anything()

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


def _accepts_kwargs(callback):
    try:
        return any(p.kind == inspect.Parameter.VAR_KEYWORD for p in inspect.signature(callback).parameters.values())
    except (TypeError, ValueError):
        return None


class RecordingContext:
    """A stand-in for Hermes' PluginContext that records registrations."""

    profile_name = "default"

    def __init__(self):
        self.state = _Anything()
        self.manifest = _Anything()

    def register_tool(self, name=None, toolset=None, schema=None, handler=None, *args, override=False, **kwargs):
        if name is None and isinstance(schema, dict):
            name = schema.get("name")
        result["tools"].append({"name": str(name), "override": bool(override)})

    def register_hook(self, name=None, callback=None, *args, **kwargs):
        result["hooks"].append({"name": str(name), "accepts_kwargs": _accepts_kwargs(callback) if callback else None})

    def register_middleware(self, kind=None, callback=None, *args, **kwargs):
        result["middleware"].append({"name": str(kind)})

    def register_command(self, name=None, *args, **kwargs):
        result["commands"].append(str(name))

    def register_cli_command(self, name=None, *args, **kwargs):
        result["cli_commands"].append(str(name))

    def register_platform(self, name=None, *args, **kwargs):
        result["platforms"].append(str(name))

    def get_config(self, key, default=None):
        return default

    def set_config(self, key, value):
        return None

    def has_capability(self, capability):
        return False

    def has_plugin(self, plugin_id):
        return False

    def __getattr__(self, name):
        def no_op(*args, **kwargs):
            result["other_calls"].append(name)
            return None
        return no_op


def main():
    save("import")
    init = os.path.join(plugin_dir, "__init__.py")
    package = "hermes_plugins_probe_target"
    spec = importlib.util.spec_from_file_location(package, init, submodule_search_locations=[plugin_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - report everything, including SystemExit
        result["error"] = "import failed: " + "".join(traceback.format_exception_only(type(exc), exc)).strip()
        save("done")
        return
    register = getattr(module, "register", None)
    if not callable(register):
        result["error"] = "the module has no callable register(ctx)"
        save("done")
        return
    save("register")
    try:
        register(RecordingContext())
    except BaseException as exc:  # noqa: BLE001
        result["error"] = "register(ctx) raised: " + "".join(traceback.format_exception_only(type(exc), exc)).strip()
    save("done")


main()
