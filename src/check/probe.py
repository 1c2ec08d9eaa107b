"""hermes-plugins --probe: import a plugin and call register(ctx) with a recording context.

Usage: python probe.py PLUGIN_DIR RESULT_JSON API_JSON

API_JSON is one release's PluginContext (methods with their parameters, properties), from the
table hermes-plugins keeps of every Hermes release.

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

plugin_dir, result_path, api_path = sys.argv[1], sys.argv[2], sys.argv[3]
with open(api_path, encoding="utf-8") as _api_file:
    API = json.load(_api_file)
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


def _signature(params):
    """An inspect.Signature from the hermes_api.json form of a parameter list."""
    kinds = {
        "positional_only": inspect.Parameter.POSITIONAL_ONLY,
        "positional_or_keyword": inspect.Parameter.POSITIONAL_OR_KEYWORD,
        "var_positional": inspect.Parameter.VAR_POSITIONAL,
        "keyword_only": inspect.Parameter.KEYWORD_ONLY,
        "var_keyword": inspect.Parameter.VAR_KEYWORD,
    }
    out = []
    for p in params:
        kind = kinds[p["kind"]]
        fixed = kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        default = inspect.Parameter.empty if (fixed or not p["default"]) else None
        out.append(inspect.Parameter(p["name"], kind, default=default))
    return inspect.Signature(out)


def _record(method, bound):
    """Records what a call registers, from its bound arguments."""
    a = bound.arguments
    if method == "register_tool":
        name = a.get("name")
        if name is None and isinstance(a.get("schema"), dict):
            name = a["schema"].get("name")
        result["tools"].append({"name": str(name), "override": bool(a.get("override", False))})
    elif method == "register_hook":
        callback = a.get("callback")
        result["hooks"].append({
            "name": str(a.get("hook_name")),
            "accepts_kwargs": _accepts_kwargs(callback) if callback else None,
        })
    elif method == "register_middleware":
        result["middleware"].append({"name": str(a.get("kind"))})
    elif method == "register_command":
        result["commands"].append(str(a.get("name")))
    elif method == "register_cli_command":
        result["cli_commands"].append(str(a.get("name")))
    elif method == "register_platform":
        result["platforms"].append(str(next(iter(a.values()), None)))
    else:
        result["other_calls"].append(method)


class RecordingContext:
    """A stand-in for Hermes' PluginContext with the real release's methods and signatures
    (from hermes_api.json): a call the real context would reject raises the same TypeError,
    a method it lacks raises AttributeError; accepted calls are recorded."""

    def __init__(self, api):
        self._api = api
        for prop in api.get("properties", []):
            if prop == "profile_name":
                setattr(self, prop, "default")
            else:
                setattr(self, prop, _Anything())

    def __getattr__(self, name):
        params = self._api["methods"].get(name)
        if params is None:
            raise AttributeError(f"'PluginContext' object has no attribute '{name}'")
        signature = _signature(params)

        def method(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"PluginContext.{name}() {exc}") from None
            _record(name, bound)
            if name in ("has_capability", "has_plugin"):
                return False
            if name == "get_config":
                return bound.arguments.get("default")
            return None

        method.__name__ = name
        return method


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
        register(RecordingContext(API))
    except BaseException as exc:  # noqa: BLE001
        result["error"] = "register(ctx) raised: " + "".join(traceback.format_exception_only(type(exc), exc)).strip()
    save("done")


main()
