#!/usr/bin/env python3
"""Generates src/known/hermes_api.json: the plugin API (``PluginContext``) of every Hermes Agent
release on PyPI, and of upstream main, as data for the ``ctx-call`` check.

For each release it downloads the ``hermes-agent`` wheel (no dependencies, nothing is installed
or imported), reads ``hermes_cli/plugins.py`` from it, and records for every public method of
``class PluginContext``: its parameters in order (name, kind, whether it has a default), and for
every property its name. Parsing with ``ast`` gives exactly what ``inspect.signature`` would,
without importing the agent and its dependencies.

    python3 scripts/hermes_api.py                     # every release on PyPI, then write the file
    python3 scripts/hermes_api.py --main plugins.py   # also upstream main, from a copy of the file
                                                      # (a COMMIT file next to it names the commit)
    python3 scripts/hermes_api.py --read 0.23.5=DIR   # a release read from upstream source: DIR holds
                                                      # hermes_cli/plugins.py (and plugins/memory/
                                                      # __init__.py if it has one) and a COMMIT file
    python3 scripts/hermes_api.py --check             # compare with the committed file, exit 1 if stale

Releases after 0.19.0 are not on PyPI as ``hermes-agent``. Where a packaging fork of an upstream
release is on PyPI (:data:`FORKS`: its plugin loader is upstream's), its wheel is read as that
release and recorded as ``"source": "fork"``; releases read from source are ``"source": "read"``
with the commit. A later ``--read`` or ``--main`` run keeps the entries it is not given.

Stdlib only. Releases come from PyPI's JSON API (``pip download`` fetches the wheels).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "src" / "known" / "hermes_api.json"
OLDEST = (0, 13, 0)

# Upstream releases served on PyPI by a packaging fork under another name: the version as
# upstream numbers it -> the fork's requirement (one list, scripts/hermes_releases.py's).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hermes_releases import FORKS as _FORKS  # noqa: E402

FORKS = {f["version"]: f["requirement"] for f in _FORKS}


def version_key(v: str) -> tuple:
    return tuple(int(p) for p in v.split(".") if p.isdigit())


def releases() -> list[str]:
    with urllib.request.urlopen("https://pypi.org/pypi/hermes-agent/json", timeout=60) as r:
        data = json.load(r)
    found = [
        v
        for v, files in data["releases"].items()
        if files
        and all(p.isdigit() for p in v.split("."))
        and version_key(v) >= OLDEST
        and any(f["packagetype"] == "bdist_wheel" and not f.get("yanked") for f in files)
    ]
    return sorted(found, key=version_key)


def sources(version: str, work: Path) -> tuple[str, str | None, dict]:
    """`hermes_cli/plugins.py` and `plugins/memory/__init__.py` (if the release has it), and
    where they came from."""
    dest = work / version
    requirement = FORKS.get(version, f"hermes-agent=={version}")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
         "-d", str(dest), requirement],
        check=True,
    )
    wheel = next(dest.glob("*.whl"))
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    origin = {"source": "fork" if version in FORKS else "pypi", "wheel": wheel.name, "sha256": digest}
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        memory = "plugins/memory/__init__.py"
        files = {n: z.read(n).decode("utf-8") for n in names if n.startswith("hermes_cli/")
                 and n.endswith(".py")}
        origin["read"] = lambda module: files[module.replace(".", "/") + ".py"]
        return (
            z.read("hermes_cli/plugins.py").decode("utf-8"),
            z.read(memory).decode("utf-8") if memory in names else None,
            origin,
        )


def read_sources(directory: Path) -> tuple[str, str | None, dict]:
    """The same files from a directory laid out as the upstream repository, read at the
    commit its ``COMMIT`` file names."""
    memory = directory / "plugins" / "memory" / "__init__.py"
    commit = directory / "COMMIT"
    return (
        (directory / "hermes_cli" / "plugins.py").read_text(encoding="utf-8"),
        memory.read_text(encoding="utf-8") if memory.exists() else None,
        {"source": "read", "commit": commit.read_text().strip() if commit.exists() else None,
         "read": lambda module: (directory / (module.replace(".", "/") + ".py")).read_text(
             encoding="utf-8")},
    )


def release_entry(version: str, plugins: str, memory: str | None, origin: dict) -> dict:
    read = origin.pop("read", None)
    api = api_of(plugins, read=read)
    entry = {"version": version, **origin, **api}
    # Memory providers (kind `exclusive`) are loaded by plugins/memory with a collector of
    # its own, not PluginContext.
    if memory is not None and "class _ProviderCollector" in memory:
        entry["memory_collector"] = api_of(memory, "_ProviderCollector")["methods"]
    print(f"{version} ({origin['source']}): {len(api['methods'])} methods, "
          f"{len(api['properties'])} properties", file=sys.stderr)
    return entry


def params_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict]:
    a = fn.args
    out: list[dict] = []
    positional = list(a.posonlyargs) + list(a.args)
    defaults_from = len(positional) - len(a.defaults)
    for i, arg in enumerate(positional):
        kind = "positional_only" if i < len(a.posonlyargs) else "positional_or_keyword"
        out.append({"name": arg.arg, "kind": kind, "default": i >= defaults_from})
    if a.vararg is not None:
        out.append({"name": a.vararg.arg, "kind": "var_positional", "default": True})
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append({"name": arg.arg, "kind": "keyword_only", "default": default is not None})
    if a.kwarg is not None:
        out.append({"name": a.kwarg.arg, "kind": "var_keyword", "default": True})
    # Drop `self`.
    return out[1:] if out and out[0]["name"] == "self" else out


def is_property(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for d in fn.decorator_list:
        name = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
        if name in {"property", "cached_property"}:
            return True
    return False


def api_of(source: str, class_name: str = "PluginContext", read=None) -> dict:
    """``read(module)`` gives another module's source (``hermes_cli.plugins_content``), for
    methods a class body imports (0.22: ``from hermes_cli.plugins_content import register_skill``
    inside ``class PluginContext``)."""
    tree = ast.parse(source)
    cls = next(
        (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name),
        None,
    )
    if cls is None:
        raise SystemExit(f"no class {class_name}")
    methods: dict[str, list[dict]] = {}
    properties: list[str] = []
    for node in cls.body:
        if isinstance(node, ast.ImportFrom) and node.module and read is not None:
            imported = ast.parse(read(node.module))
            for alias in node.names:
                fn = next((n for n in imported.body
                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and n.name == alias.name), None)
                name = alias.asname or alias.name
                if fn is not None and not name.startswith("_"):
                    methods[name] = params_of(fn)
            continue
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.name.startswith("_"):
            continue
        if is_property(node):
            properties.append(node.name)
        elif not any(
            isinstance(d, ast.Attribute) and d.attr in {"setter", "deleter"}
            for d in node.decorator_list
        ):
            methods[node.name] = params_of(node)
    # Attributes set in __init__ (self.manifest = …) are readable too.
    init = next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
    )
    if init is not None:
        for stmt in ast.walk(init):
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == "self"
                        and not t.attr.startswith("_")
                    ):
                        properties.append(t.attr)
    methods.update(generated_methods(tree))
    return {
        "methods": dict(sorted(methods.items())),
        "properties": sorted(set(properties)),
    }


def generated_methods(tree: ast.Module) -> dict[str, list[dict]]:
    """Methods attached after the class body, as newer Hermes does for its provider registrars:

        ROWS = (("register_x_provider", …, {options}), …)
        for _row in ROWS:
            setattr(PluginContext, _row[0], _make_registrar(*_row))

    Each generated method takes one parameter: ``source`` when the row's options say
    ``"param": "source"``, else ``provider``.
    """
    literals: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            literals[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            literals[node.target.id] = node.value
    out: dict[str, list[dict]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Name)):
            continue
        sets_context = any(
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and getattr(s.value.func, "id", "") == "setattr"
            and s.value.args
            and getattr(s.value.args[0], "id", "") == "PluginContext"
            for s in node.body
        )
        rows = literals.get(node.iter.id)
        if not sets_context or not isinstance(rows, ast.Tuple):
            continue
        for row in rows.elts:
            if not (isinstance(row, ast.Tuple) and row.elts and isinstance(row.elts[0], ast.Constant)):
                continue
            options = row.elts[-1]
            param = "provider"
            if isinstance(options, ast.Dict):
                for k, v in zip(options.keys, options.values):
                    if getattr(k, "value", None) == "param" and getattr(v, "value", None) == "source":
                        param = "source"
            out[row.elts[0].value] = [
                {"name": param, "kind": "positional_or_keyword", "default": False}
            ]
    return out


def generate(main: Path | None, read: dict[str, Path]) -> dict:
    out = {"generated_by": "scripts/hermes_api.py", "releases": []}
    previous = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for v in releases() + sorted(FORKS, key=version_key):
            out["releases"].append(release_entry(v, *sources(v, Path(tmp))))
    for v, directory in read.items():
        out["releases"].append(release_entry(v, *read_sources(directory)))
    # Releases read from source earlier and not given this time are kept as recorded.
    have = {r["version"] for r in out["releases"]}
    out["releases"].extend(
        r for r in previous.get("releases", [])
        if r.get("source") == "read" and r["version"] not in have
    )
    out["releases"].sort(key=lambda r: version_key(r["version"]))
    if main is not None:
        api = api_of(main.read_text(encoding="utf-8"))
        commit = main.parent / "COMMIT"
        out["main_commit"] = commit.read_text().strip() if commit.exists() else None
        out["main"] = api
        print(f"main: {len(api['methods'])} methods, {len(api['properties'])} properties",
              file=sys.stderr)
    elif previous:
        # Keep the recorded main when only the releases are refreshed.
        if "main" in previous:
            out["main_commit"] = previous.get("main_commit")
            out["main"] = previous["main"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--main", type=Path, help="a copy of upstream main's hermes_cli/plugins.py")
    parser.add_argument("--read", action="append", default=[], metavar="VERSION=DIR",
                        help="a release read from upstream source laid out in DIR (with COMMIT)")
    parser.add_argument("--check", action="store_true", help="compare with the committed file")
    args = parser.parse_args()
    read = {}
    for item in args.read:
        version, _, directory = item.partition("=")
        if not directory or not all(p.isdigit() for p in version.split(".")):
            parser.error(f"--read takes VERSION=DIR, not {item!r}")
        read[version] = Path(directory)
    data = generate(args.main, read)
    text = json.dumps(data, indent=1, sort_keys=False) + "\n"
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run scripts/hermes_api.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
