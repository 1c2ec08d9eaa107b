#!/usr/bin/env python3
"""What the REAL Hermes Agent loaders do with one third-party plugin.

Runs on every release the tests run (0.19.0 from PyPI, 0.22.2 from
../shared/hermes/make-hermes-venv.sh; 0.22 split hermes_cli/plugins.py and ships no PyYAML):
ruamel.yaml reads ``requires_env`` and config.yaml is written as JSON; ``tools.registry.
discover_builtin_tools()`` runs before ``discover_plugins()`` (the order ``model_tools`` uses) so
a tool named like a built-in is seen rejected; each ``register_tool`` records whether Hermes's
registry holds the plugin's handler; the context-engine and cron-provider category loaders are
observed; a corpus without INDEX.tsv (Hermes's own bundled tree) is indexed from its layout.

Adapted from the standalone ground-truth script of the loader investigation
(``corpus_truth.py``, which established how Hermes 0.19 finds each kind of plugin). Standard library only at module level;
everything that imports Hermes is inside :func:`observe`, which only ever runs in a Hermes
interpreter. ``run.py`` (the driver next to this file) imports this module for
:func:`bare_record` and :func:`surface`.

Two modes, one record shape (so the two can be compared field by field):

``bare``   (what a user gets without hermes-plugins)::

    <hermes python> truth.py bare --corpus DIR --line N [--python PY] [--timeout S] [--keep]

  For each INDEX.tsv line chosen, copies the plugin folder where a user would put it under a
  fresh ``HERMES_HOME/plugins`` (see :func:`placement`), enables it in ``config.yaml`` (plus
  ``memory.provider`` for a memory provider) and runs the real loaders in a child interpreter
  (``truth.py child ...``). Prints one JSON record per line.

``exec``   (what Hermes loads from a hermes-plugins generation)::

    hermes-plugins --home H exec -- <hermes python> truth.py exec --key KEY --role ROLE \\
        [--memory-name NAME] [--also KEY...]

  Runs in-process under the generation hermes-plugins published (``exec`` sets HERMES_HOME,
  PYTHONPATH and the generation; its sitecustomize redirects Hermes's discovery). Nothing is
  placed or configured here: ``install --enable`` wrote ``plugins.enabled`` and the driver
  wrote ``memory.provider``. Prints one JSON record. ``--also`` (the joint home) adds the
  general loader's verdict on other keys, the memory providers listed and the model providers
  registered.

What is observed, in both modes, by :func:`observe` (nothing of Hermes is reimplemented; the
only instrumentation is recording wrappers around ``PluginContext.register_*`` and
``providers.register_provider``, each calling the original):

* the general loader: ``hermes_cli.plugins.discover_plugins()``, then the plugin of the
  given key in the manager (tools, hooks, middleware, commands, CLI commands, skills, and the
  backends / platforms / context engine it registered, each checked in Hermes's own registry);
* the context engine the agent would get (``get_plugin_context_engine()``);
* memory providers: ``plugins.memory.list_memory_provider_names()``, ``find_provider_dir``,
  ``load_memory_provider(name)``, ``discover_plugin_cli_commands()``;
* model providers: ``providers.list_providers()`` and which user provider modules called
  ``register_provider``.

``requires_env``: Hermes 0.19 ignores it, but hermes-plugins holds a plugin back while a
variable it requires is set neither in the environment nor in ``<home>/.env``. A user answers
the install prompt, which writes ``<home>/.env``; so both homes get a ``.env`` binding every
``requires_env`` name to :data:`DUMMY_ENV_VALUE` (the bare child writes it, the driver writes
the exec home's before installing). Neither process loads ``.env`` into ``os.environ`` (only
Hermes's CLI entry points do), so plugin code sees the same environment in both modes -- a
dummy value in the environment would be parsed by plugins (``int(ENGRAM_PORT)``) and change
what they register.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: Value given to every ``requires_env`` variable in both modes.
DUMMY_ENV_VALUE = "hermes-plugins-real-plugins-test"

#: Directory names Hermes's bundled tree uses as categories; a corpus folder whose parent has
#: one of these names is placed as ``<home>/plugins/<category>/<dir>`` (key ``category/dir``).
CATEGORY_DIRS = {
    "image_gen", "video_gen", "web", "tts", "transcription", "browser", "platforms",
    "context_engine", "observability", "dashboard_auth", "cron_providers", "secret_sources",
}

IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc")

RESULT_MARKER = "@@RESULT@@"


# --------------------------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------------------------

def read_index(corpus: Path):
    """INDEX.tsv rows as dicts, each with its 1-based data ``line`` number. A corpus without
    INDEX.tsv (``hermes-0.19.0-bundled``: Hermes's own bundled tree) is indexed from its layout:
    every folder with a plugin.yaml at depth 1 or 2, ``kind_guess`` from its category folder
    (``memory`` -> memory-provider, ``model-providers`` -> model-provider) or manifest kind."""
    if not (corpus / "INDEX.tsv").exists():
        return _layout_index(corpus)
    with open(corpus / "INDEX.tsv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for number, row in enumerate(rows, 1):
        row["line"] = number
    return rows


def _layout_index(corpus: Path):
    rows = []
    found = sorted(p.parent for p in corpus.glob("*/plugin.yaml")) + \
        sorted(p.parent for p in corpus.glob("*/*/plugin.yaml"))
    for number, folder in enumerate(sorted(found, key=lambda f: str(f.relative_to(corpus))), 1):
        rel = folder.relative_to(corpus)
        parent = rel.parts[0] if len(rel.parts) == 2 else None
        kind = (manifest_field(folder, "kind") or "").lower()
        if parent == "memory":
            guess = "memory-provider"
        elif parent == "model-providers" or kind == "model-provider":
            guess = "model-provider"
        elif kind == "backend" and parent:
            guess = "backend/" + parent
        else:
            guess = kind or "other"
        rows.append({"repo": corpus.name, "commit": "", "subdir": str(rel), "kind_guess": guess,
                     "declares_deps": "", "requires_env": "", "license": "",
                     "repo_dir": str(corpus), "line": number})
    return rows


def plugin_id(row) -> str:
    """``owner/name#subdir`` (just ``owner/name`` for a repository-root plugin)."""
    subdir = row["subdir"].strip()
    return row["repo"] if subdir in ("", ".") else "%s#%s" % (row["repo"], subdir)


def manifest_field(plugin_dir: Path, field: str):
    """A top-level scalar of plugin.yaml, read without a YAML parser (stdlib only)."""
    for name in ("plugin.yaml", "plugin.yml"):
        path = plugin_dir / name
        if path.exists():
            for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if raw.startswith(field + ":"):
                    value = raw.split(":", 1)[1].split(" #", 1)[0].strip().strip("'\"")
                    return value or None
    return None


def placement(row, plugin_dir: Path):
    """(path relative to ``<home>/plugins``, role) where a user would put one INDEX row.

    * model provider (``kind: model-provider``, a ``model-providers`` parent, or guessed):
      ``model-providers/<dir>`` -- the only user directory ``providers`` scans;
    * memory provider: flat ``<dir>`` -- the only layout ``plugins.memory`` finds;
    * a folder in a category directory: ``<category>/<dir>``;
    * anything else: flat ``<dir>``.

    ``<dir>`` is the folder's own name; for a repository-root plugin it is the manifest
    ``name`` (what ``hermes plugins install <url>`` names the clone).
    """
    subdir = row["subdir"].strip()
    kinds = set(row["kind_guess"].split("+"))
    parts = [] if subdir in ("", ".") else Path(subdir).parts
    if parts:
        dirname = parts[-1]
    else:
        dirname = manifest_field(plugin_dir, "name") or row["repo"].split("/", 1)[1]
    parent = parts[-2] if len(parts) >= 2 else None
    manifest_kind = (manifest_field(plugin_dir, "kind") or "").lower()
    if manifest_kind == "model-provider" or parent == "model-providers" or "model-provider" in kinds:
        return "model-providers/" + dirname, "model-provider"
    if "memory-provider" in kinds:
        return dirname, "memory-provider"
    if parent in CATEGORY_DIRS or (parent and parent == "memory"):
        return parent + "/" + dirname, "category"
    return dirname, "flat"


# --------------------------------------------------------------------------------------------
# Observation: runs inside a Hermes interpreter (bare child, or under hermes-plugins exec)
# --------------------------------------------------------------------------------------------

def observe(resolve, role, out):
    """Runs the real loaders and fills ``out`` with what they did for one plugin.

    ``resolve(hp)`` is called once ``hermes_cli.plugins`` (``hp``) is imported and the
    wrappers are in place, before any loader runs; it returns ``(key, mem_name,
    expected_dir)``: the plugin key, the name ``plugins.memory`` would know the plugin by, and
    the directory its files are in (bare: where it was placed; exec: the generation's
    ``plugins/<key>``), used to tell our plugin from a bundled provider of the same name. The
    bare child computes the key there with Hermes's own scanner and writes config.yaml.

    The recording wrapper around ``providers.register_provider`` must be in place before
    ``hermes_cli.config`` is imported: that import runs ``providers.list_providers()``, which
    imports every model-provider plugin. So the caller imports nothing of Hermes before this
    (config.yaml is not read by that discovery, so writing it later in ``resolve`` is fine).
    """
    import logging
    import traceback

    records = []

    class Capture(logging.Handler):
        def emit(self, record):
            try:
                msg = record.getMessage()
            except Exception:
                msg = str(record.msg)
            if record.exc_info and record.exc_info[1] is not None:
                msg += " | " + "".join(traceback.format_exception_only(*record.exc_info[:2])).strip()
            records.append((record.name, record.levelname, msg))

    root = logging.getLogger()
    root.addHandler(Capture(level=logging.DEBUG))
    root.setLevel(logging.WARNING)
    for name in ("hermes_cli.plugins", "plugins.memory", "plugins.context_engine",
                 "plugins.cron_providers", "plugins.plugin_loader", "providers", "tools.registry"):
        logging.getLogger(name).setLevel(logging.DEBUG)

    def logs(prefixes, min_level="WARNING"):
        order = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}
        return [m for (n, lvl, m) in records
                if n.startswith(prefixes) and order.get(lvl, 0) >= order[min_level]]

    def short_exc(exc):
        return "%s: %s" % (type(exc).__name__, exc)

    # -- model providers: wrap register_provider before anything of Hermes is imported -----
    import providers as _providers
    provider_calls = []
    _orig_register_provider = _providers.register_provider

    def _register_provider(profile):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        provider_calls.append((caller, getattr(profile, "name", None), profile))
        return _orig_register_provider(profile)

    _providers.register_provider = _register_provider

    from hermes_cli import plugins as hp
    out["providers_discovered_at_import"] = bool(getattr(_providers, "_discovered", False))

    # -- recording wrappers around every PluginContext.register_* (each calls the original) -
    calls = []

    def _label(method, args, kwargs):
        if method in ("register_tool", "register_cli_command", "register_command",
                      "register_platform", "register_skill", "register_auxiliary_task"):
            v = kwargs.get("name", kwargs.get("key", args[0] if args else None))
            return v if isinstance(v, str) else repr(v)
        if method == "register_hook":
            return kwargs.get("hook_name", args[0] if args else None)
        if method == "register_middleware":
            return kwargs.get("kind", args[0] if args else None)
        obj = kwargs.get("provider", kwargs.get("engine", kwargs.get("source", args[0] if args else None)))
        name = getattr(obj, "name", None)
        if callable(name):
            try:
                name = name()
            except Exception:
                name = None
        return name if isinstance(name, str) else type(obj).__name__

    def _wrap(method):
        original = getattr(hp.PluginContext, method)

        def wrapper(self, *args, **kwargs):
            rec = {"plugin": getattr(self.manifest, "key", "") or self.manifest.name,
                   "method": method, "what": None, "error": None}
            try:
                rec["what"] = _label(method, args, kwargs)
            except Exception:
                pass
            calls.append(rec)
            rec["_obj"] = kwargs.get("provider", kwargs.get("engine", args[0] if args else None))
            if method == "register_tool":
                rec["_handler"] = kwargs.get("handler", args[3] if len(args) > 3 else None)
                rec["override"] = bool(kwargs.get("override", args[9] if len(args) > 9 else False))
            try:
                return original(self, *args, **kwargs)
            except Exception as exc:
                rec["error"] = short_exc(exc)
                raise

        wrapper.__name__ = method
        setattr(hp.PluginContext, method, wrapper)

    # Under exec, hermes-plugins has already wrapped register_tool (the tools.override
    # gate); our wrapper goes around theirs, so a refusal shows up as an error here too.
    for method in dir(hp.PluginContext):
        if method.startswith("register_") and callable(getattr(hp.PluginContext, method)):
            _wrap(method)

    key, mem_name, expected_dir = resolve(hp)
    # The name a category loader knows the plugin by is its directory's name where Hermes
    # sees it (a generation's entry, not the store directory it resolves to).
    expected_name = Path(expected_dir).name if expected_dir else None
    expected_dir = Path(expected_dir).resolve() if expected_dir else None
    try:
        import importlib.metadata as _md
        out["release"] = _md.version("hermes-agent")
    except Exception as exc:
        out["release"] = "unknown: %s" % exc

    # -- 0. built-in tools first, as model_tools does before discover_plugins() -------------
    try:
        from tools.registry import discover_builtin_tools, registry as _tool_registry
        out["builtin_tool_modules"] = len(discover_builtin_tools())
        out["builtin_tools"] = len(_tool_registry.get_all_tool_names())
    except BaseException as exc:
        out["builtin_tools_crash"] = short_exc(exc)

    # -- 1. the general plugin loader ---------------------------------------------------------
    try:
        hp.discover_plugins()
        manager = hp.get_plugin_manager()
        loaded = manager._plugins.get(key)
        if loaded is None:  # keyed by name in some paths; fall back to a match on key/name
            for k, lp in manager._plugins.items():
                if (lp.manifest.key or lp.manifest.name) == key:
                    loaded = lp
                    break
        if loaded is None:
            out["general"] = {"known": False}
        else:
            name = loaded.manifest.name
            general = {
                "known": True,
                "key": loaded.manifest.key or name,
                "kind": loaded.manifest.kind,
                "path": str(loaded.manifest.path) if loaded.manifest.path else None,
                "loaded": bool(loaded.enabled and loaded.error is None and loaded.module is not None),
                "enabled": bool(loaded.enabled),
                "error": loaded.error,
                "tools": sorted(loaded.tools_registered),
                "hooks": sorted(loaded.hooks_registered),
                "middleware": sorted(getattr(loaded, "middleware_registered", []) or []),
                "commands": sorted(loaded.commands_registered),
                "cli_commands": sorted(c for c, v in manager._cli_commands.items()
                                       if v.get("plugin") == name),
            }
            general["skills"] = sorted(q for q, v in manager._plugin_skills.items()
                                       if isinstance(v, dict) and v.get("plugin") in (name, general["key"]))
            mine_calls = [c for c in calls if c["plugin"] == general["key"]]

            #: The agent registry each backend registration lands in.
            BACKEND_REGISTRIES = {
                "register_%s_provider" % kind: "%s_registry" % kind
                for kind in ("image_gen", "video_gen", "web_search", "browser", "tts",
                             "transcription")
            }

            def _accepted(method, what, obj):
                """Whether Hermes's own registry holds what the plugin registered."""
                try:
                    if method in BACKEND_REGISTRIES:
                        import importlib
                        registry = importlib.import_module("agent." + BACKEND_REGISTRIES[method])
                        return registry.get_provider(what) is obj
                    if method == "register_platform":
                        from gateway.platform_registry import platform_registry
                        e = platform_registry.get(what)
                        return e is not None and e.source == "plugin"
                    if method == "register_context_engine":
                        return manager._context_engine is obj
                except Exception as exc:
                    return "check failed: " + short_exc(exc)
                return None

            backends, platforms, others = [], [], []
            for c in mine_calls:
                entry = {"method": c["method"], "what": c["what"]}
                if c["error"]:
                    entry["error"] = c["error"]
                if c["method"].endswith("_provider") or c["method"] == "register_secret_source":
                    entry["accepted"] = _accepted(c["method"], c["what"], c["_obj"])
                    backends.append(entry)
                elif c["method"] == "register_platform":
                    entry["accepted"] = _accepted(c["method"], c["what"], c["_obj"])
                    platforms.append(entry)
                elif c["method"] == "register_context_engine":
                    entry["accepted"] = _accepted(c["method"], c["what"], c["_obj"])
                    general["context_engine"] = entry
                elif c["method"] not in ("register_tool", "register_hook", "register_command",
                                         "register_cli_command", "register_middleware"):
                    others.append(entry)
            # Whether Hermes's tool registry holds the handler each register_tool call passed
            # (0.19's registry rejects a shadowing name by logging and returning; 0.22.2's ctx
            # refuses it before the registry): read from Hermes's registry, nothing recomputed.
            tool_calls = []
            try:
                from tools.registry import registry as _tool_registry
                for c in mine_calls:
                    if c["method"] != "register_tool":
                        continue
                    entry = _tool_registry.get_entry(c["what"]) if isinstance(c["what"], str) else None
                    tool_calls.append({
                        "name": c["what"], "override": c.get("override", False), "error": c["error"],
                        "accepted": entry is not None and entry.handler is c.get("_handler"),
                        "held_by_toolset": getattr(entry, "toolset", None),
                    })
            except Exception as exc:
                tool_calls.append({"check_failed": short_exc(exc)})
            general["tool_calls"] = tool_calls
            general["tools_rejected"] = sorted(t["name"] for t in tool_calls
                                               if "name" in t and not t["accepted"])
            general["deferred"] = bool(getattr(loaded, "deferred", False))
            general["backends"] = backends
            general["platforms"] = platforms
            general["other_registrations"] = others
            general["register_calls"] = len(mine_calls)
            general["refused_calls"] = [{"method": c["method"], "what": c["what"], "error": c["error"]}
                                        for c in mine_calls if c["error"]]
            general["warnings"] = logs(("hermes_cli.plugins",), "WARNING")[-5:]
            if (not general["loaded"] and loaded.error
                    and loaded.manifest.kind not in ("exclusive", "model-provider")
                    and "not enabled" not in loaded.error):
                # Diagnosis only (not what Hermes reports): import each sibling module of the
                # plugin package Hermes created, to surface an ImportError the plugin swallowed.
                import importlib
                pkg = "hermes_plugins." + general["key"].replace("/", "__").replace("-", "_")
                diag = []
                folder = Path(loaded.manifest.path) if loaded.manifest.path else None
                if pkg in sys.modules and folder is not None and folder.is_dir():
                    for p in sorted(folder.iterdir()):
                        if p.name.startswith(("_", ".")) or p.name in ("tests", "test", "setup.py", "conftest.py"):
                            continue
                        if p.suffix == ".py":
                            sub = p.stem
                        elif p.is_dir() and (p / "__init__.py").exists():
                            sub = p.name
                        else:
                            continue
                        try:
                            importlib.import_module(pkg + "." + sub)
                        except BaseException as exc:
                            diag.append("%s: %s" % (sub, short_exc(exc)))
                general["diagnosis"] = diag
            out["general"] = general
    except BaseException as exc:
        out["general"] = {"known": None, "crash": short_exc(exc), "tb": traceback.format_exc()[-1500:]}

    # -- 2. the context engine Hermes's agent would select -------------------------------------
    try:
        engine = hp.get_plugin_context_engine()
        if engine is not None:
            out["context_engine"] = {"name": getattr(engine, "name", None), "class": type(engine).__name__}
    except BaseException as exc:
        out["context_engine"] = {"crash": short_exc(exc)}

    # -- 2b. the context-engine category loader (plugins/context_engine: ``context.engine``) ----
    # 0.19 looks only at its bundled directory; 0.22.2 also at flat user plugin dirs.
    # Loaded only when the loader resolves the name to OUR directory.
    try:
        import plugins.context_engine as pce
        name = expected_name
        finder = getattr(pce, "find_engine_dir", None)
        found = finder(name) if (finder and name) else None
        mine = bool(found) and Path(found).resolve() == expected_dir
        cat = {"name": name, "finder": bool(finder), "resolves_to_ours": mine,
               "found": str(found) if found else None}
        if mine:
            engine = pce.load_context_engine(name)
            cat["loaded"] = engine is not None
            if engine is not None:
                cat["engine"] = getattr(engine, "name", None)
                cat["class"] = type(engine).__name__
        out["context_engine_category"] = cat
    except BaseException as exc:
        out["context_engine_category"] = {"crash": short_exc(exc)}

    # -- 2c. the cron-provider category loader (plugins/cron_providers: ``cron.provider``) ----
    try:
        import plugins.cron_providers as pcp
        name = expected_name
        found = pcp.find_provider_dir(name) if name else None
        mine = bool(found) and Path(found).resolve() == expected_dir
        cat = {"name": name, "resolves_to_ours": mine, "found": str(found) if found else None}
        if mine:
            sched = pcp.load_cron_scheduler(name)
            cat["loaded"] = sched is not None
            if sched is not None:
                cat["class"] = type(sched).__name__
        out["cron_category"] = cat
    except BaseException as exc:
        out["cron_category"] = {"crash": short_exc(exc)}

    # -- 3. memory providers (plugins/memory/__init__.py) ------------------------------------
    try:
        import plugins.memory as pm
        names = pm.list_memory_provider_names()
        found = pm.find_provider_dir(mem_name) if mem_name in names else None
        mine = bool(found) and expected_dir is not None and Path(found).resolve() == expected_dir
        mem = {"name": mem_name, "listed": mine}
        if role == "memory-provider" or mine:
            mem["find_provider_dir"] = str(found) if found else None
            before = len(records)
            prov = pm.load_memory_provider(mem_name) if mine else None
            mem["loaded"] = prov is not None
            if prov is not None:
                mem["provider_name"] = getattr(prov, "name", None)
                mem["class"] = type(prov).__name__
                try:
                    mem["is_available"] = bool(prov.is_available())
                except Exception as exc:
                    mem["is_available"] = "raised " + short_exc(exc)
            else:
                mem["why"] = [m for (n, l, m) in records[before:] if n.startswith("plugins.memory")][-4:]
            try:
                mem["cli_commands"] = sorted(c["name"] for c in pm.discover_plugin_cli_commands())
            except Exception as exc:
                mem["cli_commands"] = "raised " + short_exc(exc)
            out["memory"] = mem
    except BaseException as exc:
        out["memory"] = {"crash": short_exc(exc)}

    # -- 4. model providers (providers/__init__.py) -------------------------------------------
    try:
        _providers.list_providers()
        user_calls = [(mod, name, prof) for (mod, name, prof) in provider_calls
                      if mod.startswith("_hermes_user_provider_")]
        mp = {
            "registered": sorted({n for _, n, _ in user_calls if n}),
            "modules": sorted({m for m, _, _ in user_calls}),
        }
        mp["resolvable"] = {n: _providers.get_provider_profile(n) is p for _, n, p in user_calls if n}
        failed = [m for (n, l, m) in records if n == "providers" and "user provider plugin" in m]
        if failed:
            mp["errors"] = failed
        if role == "model-provider" or mp["registered"] or failed:
            out["model_provider"] = mp
    except BaseException as exc:
        out["model_provider"] = {"crash": short_exc(exc)}

    # ImportErrors anyone logged (a plugin that catches its own ImportError and logs it
    # registers less, without failing): tells "registers more with its dependencies".
    out["logged_missing_modules"] = sorted({m for (_, _, msg) in records
                                           for m in re.findall(r"No module named '([^']+)'", msg)})
    out["summary"] = summarise(out)
    return out


# --------------------------------------------------------------------------------------------
# Summaries and the comparable surface (pure functions on records; no Hermes needed)
# --------------------------------------------------------------------------------------------

def summarise(r):
    """One line of what the real loaders did with it: status, via, provides, why, cause."""
    g = r.get("general") or {}
    loads, provides = [], []
    if g.get("loaded"):
        loads.append("general")
        for field in ("tools", "hooks", "middleware", "commands", "cli_commands", "skills"):
            if g.get(field):
                provides.append("%s=%d" % (field, len(g[field])))
        for b in g.get("backends") or []:
            provides.append("backend:%s:%s%s" % (b["method"][len("register_"):].replace("_provider", ""),
                                                b["what"], "" if b.get("accepted") else "(rejected)"))
        for p in g.get("platforms") or []:
            provides.append("platform:%s%s" % (p["what"], "" if p.get("accepted") else "(rejected)"))
    if r.get("context_engine") and r["context_engine"].get("name"):
        provides.append("context_engine:%s" % r["context_engine"].get("name"))
    m = r.get("memory") or {}
    if m.get("loaded"):
        loads.append("memory")
        provides.append("memory_provider:%s" % m.get("provider_name"))
    cec = r.get("context_engine_category") or {}
    if cec.get("loaded"):
        loads.append("context-engine-category")
        provides.append("context_engine_category:%s" % cec.get("engine"))
    cc = r.get("cron_category") or {}
    if cc.get("loaded"):
        loads.append("cron-category")
        provides.append("cron_scheduler:%s" % cc.get("class"))
    mp = r.get("model_provider") or {}
    if mp.get("registered"):
        loads.append("model-provider")
        provides.append("model_provider:%s" % ",".join(mp["registered"]))
    status = "loads" if loads else "fails"
    why, cause = None, None
    if not loads:
        texts = []
        if r.get("role") == "memory-provider" or (m and not g.get("error")):
            mw = m.get("why") or []
            texts += [t for t in mw if "exec_module" in t] + [t for t in mw if "submodule" in t] + mw[-1:]
        if r.get("role") == "model-provider":
            texts += mp.get("errors") or []
        if g.get("error") and "exclusive plugin" not in g["error"]:
            texts.insert(0, g["error"])
        if g.get("crash"):
            texts.insert(0, "loader crashed: " + g["crash"])
        if g.get("known") is False:
            texts.append("the general loader does not know the plugin")
        texts += g.get("diagnosis") or []
        if r.get("child_failed"):
            texts.append("child failed: %s" % r["child_failed"])
        why = texts[0] if texts else (g.get("error") or "nothing registered")
        cause = classify(texts)
    return {"status": status, "via": loads, "provides": provides, "why": why, "cause": cause}


def classify(texts):
    """A coarse cause for a failure, from Hermes's own messages (and the diagnosis)."""
    joined = " | ".join(texts)
    missing = re.findall(r"No module named '([^']+)'", joined)
    if "allow_tool_override" in joined or "tools.override" in joined:
        return "tool-override-not-granted"
    if "has no attribute 'register_" in joined:
        return "hermes-api-missing:" + re.search(r"attribute '([^']+)'", joined).group(1)
    if missing:
        return "missing-module:" + ",".join(sorted(set(missing)))
    if "no register() function" in joined:
        return "no-register"
    if "child failed" in joined:
        return "crash-or-timeout"
    return "other"


def surface(r):
    """What is compared between the bare loader and exec: load status and every registration
    Hermes accepted (tools, hooks, middleware, slash and CLI commands, skills, backends,
    platforms, context engine, memory provider, model provider). Not compared: keys and paths
    (a generation places plugins by key), log text, and the memory provider's configured name
    (hermes-plugins names a provider by the last segment of its key)."""
    s = r.get("summary") or summarise(r)
    g = r.get("general") or {}
    out = {"status": s["status"], "via": sorted(s["via"])}
    if g.get("loaded"):
        for field in ("tools", "hooks", "middleware", "commands", "cli_commands", "skills"):
            out[field] = sorted(g.get(field) or [])
        out["backends"] = sorted("%s:%s:%s" % (b["method"], b["what"], b.get("accepted"))
                                 for b in g.get("backends") or [])
        out["platforms"] = sorted("%s:%s" % (p["what"], p.get("accepted"))
                                  for p in g.get("platforms") or [])
        ce = g.get("context_engine")
        out["registered_context_engine"] = "%s:%s" % (ce["what"], ce.get("accepted")) if ce else None
        out["refused_calls"] = sorted("%s:%s" % (c["method"], c["what"]) for c in g.get("refused_calls") or [])
    ce = r.get("context_engine") or {}
    out["context_engine"] = ce.get("name")
    m = r.get("memory") or {}
    if m.get("loaded"):
        out["memory_provider"] = {k: m.get(k) for k in ("provider_name", "class", "is_available")}
        out["memory_cli_commands"] = m.get("cli_commands")
    mp = r.get("model_provider") or {}
    out["model_providers"] = sorted(mp.get("registered") or [])
    return out


def diff_surfaces(a, b):
    """Human-readable differences between two surfaces (empty when equal)."""
    out = []
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k), b.get(k)
        if va == vb or (va in (None, []) and vb in (None, [])):
            continue
        if isinstance(va, list) and isinstance(vb, list):
            only_a = [x for x in va if x not in vb]
            only_b = [x for x in vb if x not in va]
            out.append("%s: bare only %s, exec only %s" % (k, only_a, only_b))
        else:
            out.append("%s: bare %r, exec %r" % (k, va, vb))
    return out


# --------------------------------------------------------------------------------------------
# Shared by the drivers (tests/real-plugins/run.py, tests/pypi-plugins/run.py)
# --------------------------------------------------------------------------------------------

_print_lock = threading.Lock()


def log(msg):
    """Progress on stderr, one line at a time from any thread (the drivers' reports go to
    stdout at the end)."""
    with _print_lock:
        print(msg, file=sys.stderr, flush=True)


def run_cmd(argv, env, cwd, timeout):
    """(returncode, stdout, stderr) of one command; a timeout is rc None."""
    try:
        proc = subprocess.run(argv, env=env, cwd=str(cwd), capture_output=True, text=True,
                              timeout=timeout, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return None, out, err + "\n[timed out after %ss]" % timeout


def remove_tree(path: Path):
    """Removes a work directory, store trees included (hermes-plugins makes them read-only)."""
    def writable_then_retry(function, name, _):
        os.chmod(os.path.dirname(name), 0o700)
        if os.path.isdir(name) and not os.path.islink(name):
            os.chmod(name, 0o700)
        function(name)

    shutil.rmtree(path, onerror=writable_then_retry)


# --------------------------------------------------------------------------------------------
# bare mode: place the folder in a fresh home and run the child
# --------------------------------------------------------------------------------------------

def clean_env(**extra):
    """The environment for a Hermes child: nothing of ours (HERMES_*, PYTHON*, a venv) leaks."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HERMES_", "PYTHON", "UV_")) and k not in ("VIRTUAL_ENV",)}
    env.update({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"})
    env.update(extra)
    return env


def parse_result(stdout):
    marker = stdout.rfind(RESULT_MARKER)
    if marker < 0:
        return None
    return json.loads(stdout[marker + len(RESULT_MARKER):].splitlines()[0])


def bare_record(row, corpus: Path, python: str, timeout: float = 120, keep: bool = False):
    """The bare loader's record for one INDEX row. If Hermes refuses a built-in tool override,
    runs again as if the operator granted it (``plugins.entries.<key>.allow_tool_override``,
    which is what ``hermes plugins enable`` writes on yes); the record is then the granted
    run, with ``grants_needed: ["tools.override"]`` and the first attempt's summary."""
    record = _bare_child(row, corpus, python, timeout, keep, [])
    record["grants_needed"] = []
    if (record.get("summary") or {}).get("cause") == "tool-override-not-granted":
        again = _bare_child(row, corpus, python, timeout, keep, ["allow_tool_override"])
        again["grants_needed"] = ["tools.override"]
        again["first_attempt"] = record.get("summary")
        record = again
    return record


def _bare_child(row, corpus: Path, python: str, timeout: float, keep: bool, grants):
    repo_dir = Path(row["repo_dir"]) if row.get("repo_dir") else corpus / row["repo"].replace("/", "__")
    plugin_dir = (repo_dir / row["subdir"]).resolve()
    rel, role = placement(row, plugin_dir)
    base = Path(tempfile.mkdtemp(prefix="hermes-truth-"))
    home = base / "hermes"
    target = home / "plugins" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(plugin_dir, target, symlinks=True, ignore=IGNORE)
    (base / "user").mkdir()
    env = clean_env(HERMES_HOME=str(home), HOME=str(base / "user"))
    record = {
        "mode": "bare", "line": row["line"], "repo": row["repo"], "subdir": row["subdir"],
        "id": plugin_id(row), "kind_guess": row["kind_guess"], "declares_deps": row["declares_deps"],
        "requires_env": row["requires_env"], "placed_at": "plugins/" + rel, "role": role,
    }
    try:
        proc = subprocess.run(
            [python, os.path.abspath(__file__), "child", str(target), role, json.dumps(grants)],
            cwd=str(base), env=env, capture_output=True, text=True, timeout=timeout,
        )
        result = parse_result(proc.stdout)
        if result is not None:
            record.update(result)
        else:
            record["child_failed"] = {"rc": proc.returncode, "stderr": proc.stderr[-2000:]}
    except subprocess.TimeoutExpired:
        record["child_failed"] = {"timeout": timeout}
    finally:
        if keep:
            record["home"] = str(home)
        else:
            shutil.rmtree(base, ignore_errors=True)
    record["summary"] = summarise(record)
    return record


def child_main(argv):
    """``truth.py child PLACED ROLE GRANTS_JSON``: the bare child (Hermes interpreter)."""
    placed = Path(argv[0]).resolve()
    role = argv[1]
    grants = json.loads(argv[2]) if len(argv) > 2 else []
    names = required_env_names(placed)
    if names:  # as the install prompt would have written them (see the module docstring)
        home = Path(os.environ["HERMES_HOME"])
        (home / ".env").write_text(dotenv_text(names), encoding="utf-8")
    out = {"env_set": names}

    def resolve(hp):
        return _prepare_bare_home(hp, placed, role, grants, out)

    observe(resolve, role, out)
    print("\n" + RESULT_MARKER + json.dumps(out, default=str))


def required_env_names(placed: Path):
    """The ``requires_env`` names of the manifest, read as Hermes reads them
    (``data.get("requires_env")``, items a name or a mapping with ``name``). Needs PyYAML
    (the Hermes interpreter has it). 0.22.2 ships no PyYAML: ruamel.yaml (in both venvs)."""
    from ruamel.yaml import YAML
    yaml = YAML(typ="safe", pure=True)
    names = []
    for manifest in ("plugin.yaml", "plugin.yml"):
        path = placed / manifest
        if not path.exists():
            continue
        try:
            data = yaml.load(path.read_text(encoding="utf-8")) or {}
        except Exception:
            data = {}
        items = data.get("requires_env") if isinstance(data, dict) else None
        for item in items if isinstance(items, list) else []:
            name = item.get("name") if isinstance(item, dict) else item
            if isinstance(name, str) and name:
                names.append(name)
        break
    return names


def dotenv_text(names):
    """``<home>/.env`` lines binding ``names`` as Hermes's own .env writer quotes values."""
    return "".join('%s="%s"\n' % (n, DUMMY_ENV_VALUE) for n in names)


def _prepare_bare_home(hp, placed: Path, role, grants, out):
    """Computes the key with Hermes's own scanner (``_scan_directory``) and writes
    config.yaml as a user would: ``plugins.enabled: [key]``, ``memory.provider: <dir>`` for a
    memory provider, and ``plugins.entries.<key>.<grant>: true`` for a granted override."""
    from hermes_constants import get_hermes_home
    home = get_hermes_home()
    user_dir = home / "plugins"
    scanned = hp.PluginManager()._scan_directory(user_dir, source="user")
    mine = [m for m in scanned if Path(m.path).resolve() == placed]
    manifest = mine[0] if mine else None
    out["manifest"] = None if manifest is None else {
        "key": manifest.key or manifest.name, "name": manifest.name, "kind": manifest.kind,
        "version": manifest.version,
    }
    key = (manifest.key or manifest.name) if manifest else None
    config = {"plugins": {"enabled": [key] if key else []}}
    if role == "memory-provider":
        config["memory"] = {"provider": placed.name}
    if key and grants:
        config["plugins"]["entries"] = {key: {g: True for g in grants}}
    # JSON is YAML; no PyYAML on 0.22.2
    (home / "config.yaml").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    out["config"] = config
    return key, placed.name, placed


# --------------------------------------------------------------------------------------------
# exec mode
# --------------------------------------------------------------------------------------------

def exec_main(args):
    """Under ``hermes-plugins exec``: observe the plugin ``args.key`` of the leased generation."""
    out = {"mode": "exec", "role": args.role, "key": args.key}
    generation = os.environ.get("HERMES_PLUGINS_GENERATION") or ""
    out["generation"] = generation
    if not generation:
        out["exec_problem"] = "HERMES_PLUGINS_GENERATION is not set: not run under hermes-plugins exec?"
    expected = Path(generation, "plugins", *args.key.split("/")) if generation else None
    mem_name = args.memory_name or args.key.rsplit("/", 1)[-1]
    observe(lambda hp: (args.key, mem_name, expected), args.role, out)
    if args.also:
        out["also"] = _others(args.also, out)
    print("\n" + RESULT_MARKER + json.dumps(out, default=str))


def _others(keys, record):
    """For the joint home: after observe() ran the loaders, the general loader's verdict on
    each of ``keys`` (loaded, or its error), the memory providers Hermes lists and the model
    providers user plugins registered. Read from Hermes's own state; loads nothing more."""
    from hermes_cli import plugins as hp
    manager = hp.get_plugin_manager()
    general = {}
    for key in keys:
        lp = manager._plugins.get(key)
        if lp is None:
            general[key] = "unknown to the general loader"
        elif lp.enabled and lp.error is None and lp.module is not None:
            general[key] = "loaded"
        else:
            general[key] = "kind %s: %s" % (lp.manifest.kind, lp.error or ("enabled" if lp.enabled else "disabled"))
    out = {"general": general}
    try:
        import plugins.memory as pm
        out["memory_providers"] = sorted(pm.list_memory_provider_names())
    except BaseException as exc:
        out["memory_providers"] = "raised %s: %s" % (type(exc).__name__, exc)
    # observe() recorded every register_provider call from a user provider module
    out["model_providers"] = (record.get("model_provider") or {}).get("registered", [])
    out["context_engine"] = (record.get("context_engine") or {}).get("name")
    return out


# --------------------------------------------------------------------------------------------

def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "child":
        return child_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    b = sub.add_parser("bare", help="the real loader on a user-placed folder in a fresh home")
    b.add_argument("--corpus", type=Path, required=True)
    b.add_argument("--line", type=int, action="append", default=[],
                   help="INDEX.tsv data line (1 = first plugin); repeatable; default all")
    b.add_argument("--python", default=sys.executable, help="the Hermes interpreter")
    b.add_argument("--timeout", type=float, default=120)
    b.add_argument("--keep", action="store_true", help="keep the temporary homes")
    e = sub.add_parser("exec", help="inside hermes-plugins exec: what Hermes registers for KEY")
    e.add_argument("--key", required=True, help="the plugin key hermes-plugins installed")
    e.add_argument("--role", default="flat",
                   choices=["flat", "category", "memory-provider", "model-provider"])
    e.add_argument("--memory-name", help="memory.provider name (default: last segment of the key)")
    e.add_argument("--also", nargs="*", default=[],
                   help="other keys: report the general loader's verdict on each (joint home)")
    args = ap.parse_args(argv)
    if args.mode == "exec":
        return exec_main(args)
    rows = read_index(args.corpus)
    if args.line:
        rows = [r for r in rows if r["line"] in args.line]
    for row in rows:
        print(json.dumps(bare_record(row, args.corpus, args.python, args.timeout, args.keep),
                         default=str), flush=True)


if __name__ == "__main__":
    main()
