#!/usr/bin/env python3
"""hermes-plugins against REAL third-party plugins and the REAL Hermes Agent.

    python3 tests/real-plugins/run.py --bin target/release/hermes-plugins \\
        --python ~/.cache/hermes-plugins/tools/hermes-agent-0.19.0/bin/python \\
        --corpus ../shared/corpus/github-2026-12 [--only N ...] [--jobs 2] [--json-out F] [--keep]

For every line of the corpus's INDEX.tsv (one plugin folder of a real GitHub repository):

a. **bare truth** -- what the real Hermes loaders do with the folder placed by hand in a fresh
   ``HERMES_HOME/plugins`` and enabled (``truth.py``, bare mode);
b. the repository folder is copied to a temporary directory and committed (``git init``,
   ``git add -A -f``, one commit: corpus README "Installing one from a git URL in a test");
c. in a fresh home, ``hermes-plugins --home H install file://REPO#SUBDIR --enable --yes-deps
   --core installed:<hermes python>`` from the real PyPI (index variables unset), with
   ``--grant tools.override`` only when the bare truth needed Hermes's override opt-in, and
   ``--allow-core-patch`` only when install refused naming it although Hermes loads the plugin
   (and ``--accept-finding ID`` for each finding a dangerous verdict names, likewise)
   (both printed). Before installing, the home gets what a user would already have there: a
   ``.env`` binding the plugin's ``requires_env`` names (what the install prompt writes), and
   for a memory provider a hand-written ``config.yaml`` with a comment and ``memory.provider``
   (the last segment of the key a ``--dry-run`` reports); install must leave both in place;
d. ``hermes-plugins --home H exec -- <hermes python> truth.py exec --key KEY ...`` records what
   Hermes registers from the published generation, compared with (a): same load status and
   the same registrations (``truth.surface``);
e. ``hermes-plugins validate --format json DIR``: does its load verdict for the release under
   test (``accepted``, ``compatibility.loads[<release>]``, no error of a load-gate check --
   docs/checks.md) agree with the real loader? (What is fair to ask of it: see :func:`validate_truth`.)

Then one home gets every plugin the real loader loads, installed (without ``--enable``) and
enabled together by one hand edit of ``plugins.enabled`` and one ``sync``: does the joint
resolution succeed, or which pair conflicts (the tool's own error)?

Output: a line per plugin, the details of every failure, and the figures::

    real loader loads N; installed N/N; same under exec N/N; validate's load verdict agrees M/M; joint home: ok|<conflict>

Improvements are reported separately and never fail the run: a plugin that fails bare only
for missing modules and loads under exec (its declared dependencies installed), or one that
loads bare but registers more under exec because a feature it skipped on an ImportError now
imports.

Exit status 1 when a plugin the real loader loads fails to install or registers differently
under exec, unless :data:`EXPECTED` names it with a reason; also when the joint home fails for
another reason than a dependency conflict between plugins, or loses a memory/model provider
that loads alone. 2 on bad arguments. Standard library only (Python 3.11); the Hermes
interpreter is only used as a child.

In CI (.ci/run, which has ``$bin``, ``$hermes_venv`` and ``$shared``)::

    python3 tests/real-plugins/run.py --bin "$bin" --python "$hermes_venv/bin/python" \
        --corpus "$shared/corpus/github-2026-12" --jobs 2
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import truth  # noqa: E402  (the sibling module: bare truth, surfaces)

TRUTH = str(Path(__file__).resolve().parent / "truth.py")

#: Plugins the real loader loads that may fail to install or differ under exec, each with the
#: reason it is not hermes-plugins' fault (a Hermes bug, a deliberate and correct refusal).
#: Key: ``owner/name#subdir`` (``owner/name`` for a repository root). Keep it short and
#: honest: a bug of ours never goes here, and an entry that is no longer needed is reported.
EXPECTED: dict[str, str] = {
    "chat4000/chat4000-hermes-plugin": (
        "its pyproject requires `chat4000-pyvodozemac>=0.1.0`, which PyPI does not have (pip "
        "finds no version either): install names it as a conflict; Hermes loads the plugin "
        "only because it imports that package lazily (its `dangerous` test strings are "
        "accepted per finding, --accept-finding)"
    ),
}


def load_gate_checks() -> set[str]:
    """Checks whose errors mean "Hermes would not load it": the "gate" column of
    docs/checks.md (the one table; a unit test holds it equal to ``CheckId::gate``)."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "checks.md"
    gates = set()
    for line in doc.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split(" | ")]
        if line.startswith("| `") and len(cells) > 3 and cells[3] == "load":
            gates.add(cells[0].strip("| `"))
    if not gates:
        raise SystemExit("docs/checks.md has no gate column: cannot tell load checks")
    return gates


#: Checks whose errors mean "Hermes would not load it".
LOAD_GATE_CHECKS = load_gate_checks()

#: The release the Hermes interpreter runs (set in :func:`main`): validate's verdict for it is
#: the one compared (``compatibility.loads[<release>]``).
HERMES_VERSION = "0.19.0"

#: Per-command time limits (seconds). Installs fetch and install real wheels from PyPI.
INSTALL_TIMEOUT = 900
EXEC_TIMEOUT = 180
VALIDATE_TIMEOUT = 120

log = truth.log


# --------------------------------------------------------------------------------------------
# Running hermes-plugins
# --------------------------------------------------------------------------------------------

def base_env(user_home: Path):
    """A clean environment: nothing of the caller's HERMES_*/UV_*/PYTHON* (so the real PyPI
    is used: HERMES_PLUGINS_INDEX_URL, UV_INDEX_URL, UV_FIND_LINKS, UV_OFFLINE... are unset),
    HOME a throwaway directory, and no catalog (the plugins come from paths; the official one is
    not reachable from CI)."""
    return truth.clean_env(HOME=str(user_home), HERMES_PLUGINS_CATALOG="none")


run_cmd = truth.run_cmd


def json_doc(stdout):
    try:
        return json.loads(stdout)
    except ValueError:
        return None


def error_text(doc, stderr):
    """The tool's own error: message plus causes from --json, else the tail of stderr."""
    if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
        e = doc["error"]
        text = "[%s] %s" % (e.get("code"), e.get("message"))
        for cause in e.get("causes") or []:
            text += "\n    Caused by: %s" % cause
        if e.get("details"):
            text += "\n    details: %s" % json.dumps(e["details"])[:1500]
        return text
    return (stderr or "").strip()[-2000:] or "(no output)"


def hp(args, ctx, *argv, timeout=INSTALL_TIMEOUT):
    """Runs ``hermes-plugins --home <ctx home> --json --no-input ARGV``: (rc, doc, stderr)."""
    cmd = [args.bin, "--home", str(ctx["home"]), "--json", "--no-input", *argv]
    rc, out, err = run_cmd(cmd, base_env(ctx["user"]), ctx["tmp"], timeout)
    return rc, json_doc(out), err


# --------------------------------------------------------------------------------------------
# The repositories: one committed copy each (shared by the per-plugin homes and the joint one)
# --------------------------------------------------------------------------------------------

def make_repo(corpus: Path, repo: str, into: Path) -> Path:
    """Copies ``<corpus>/<owner>__<name>`` to ``into`` and commits it, as the corpus README
    says (``git add -A -f``: some repositories track files their .gitignore ignores)."""
    dest = into / repo.replace("/", "__")
    shutil.copytree(corpus / repo.replace("/", "__"), dest, symlinks=True)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@invalid",
           "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    env = truth.clean_env(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    for step in (["init", "-q"], ["add", "-A", "-f"], ["commit", "-qm", "snapshot"]):
        subprocess.run(git + step, cwd=dest, env=env, check=True, capture_output=True)
    return dest


def source_url(repo_dir: Path, subdir: str) -> str:
    url = "file://" + str(repo_dir)
    return url if subdir.strip() in ("", ".") else url + "#" + subdir.strip()


# --------------------------------------------------------------------------------------------
# validate
# --------------------------------------------------------------------------------------------

def validate_verdict(args, plugin_dir: Path, tmp: Path):
    """``hermes-plugins validate --format json DIR``: does validate say the Hermes release under
    test loads it? (accepted, ``compatibility.loads[<release>]``, no error-level finding of a
    load-gate check.) Returns a dict with the verdict and the reasons."""
    rc, out, err = run_cmd([args.bin, "validate", "--format", "json", str(plugin_dir)],
                           truth.clean_env(HOME=str(tmp)), tmp, VALIDATE_TIMEOUT)
    doc = json_doc(out)
    if not doc or not doc.get("packages"):
        return {"loads": None, "why": "validate gave no report (rc %s): %s" % (rc, err.strip()[-500:])}
    packages = doc["packages"]
    pkg = next((p for p in packages if Path(p["path"]).resolve() == plugin_dir.resolve()), packages[0])
    loads = (pkg.get("compatibility") or {}).get("loads") or {}
    gate_errors = sorted({f["check"] for f in pkg.get("findings") or []
                          if f.get("severity") == "error" and f.get("check") in LOAD_GATE_CHECKS})
    why = []
    if not pkg.get("accepted"):
        why.append("not accepted")
    reasons = ((pkg.get("compatibility") or {}).get("why_not") or {}).get(HERMES_VERSION) or []
    # An override of a built-in the manifest does not declare loads once the user grants
    # tools.override, as this run does where the bare loader needed it.
    granted = bool(reasons) and all(r["check"] == "builtin-collisions" for r in reasons)
    if loads.get(HERMES_VERSION) is not True and not granted:
        why.append("does not load on %s (%s)" % (
            HERMES_VERSION, "; ".join(r["message"] for r in reasons)
            or (pkg.get("compatibility") or {}).get("summary")))
    if gate_errors:
        why.append("load-gate errors: " + ", ".join(gate_errors))
    return {"loads": not why, "why": "; ".join(why) or None, "key": pkg.get("key"),
            "kind": pkg.get("kind"), "packages": len(packages)}


def registers_more_with_deps(bare, rec):
    """A plugin that loads bare but registers more under exec, only because its declared
    dependencies are installed there: same status, every bare registration also under exec,
    and the bare run logged a missing module that the exec run did not (the plugin caught its
    own ImportError, logged it and skipped a feature). That is an improvement, not a
    difference to fix."""
    a, b = truth.surface(bare), truth.surface(rec)
    if a["status"] != b["status"]:
        return False
    for k in set(a) | set(b):
        va, vb = a.get(k), b.get(k)
        if isinstance(va, list) and isinstance(vb, list):
            if not set(map(str, va)) <= set(map(str, vb)):
                return False
        elif va != vb:
            return False
    gone = set(bare.get("logged_missing_modules") or []) - set(rec.get("logged_missing_modules") or [])
    return bool(gone)


#: Hermes's category loaders (0.22: context engines and cron providers are found by name in
#: flat ``<home>/plugins/<name>`` directories).
CATEGORY_LOADERS = {"context-engine-category", "cron-category"}


def found_by_category_view(bare, rec):
    """A category-keyed plugin (``context_engine/lcm``) that the release's category loader
    finds under exec and not placed by hand: everything else equal, exec adds only category
    loaders to ``via``. The generation shows every enabled plugin to the category loaders by
    its key's last segment, as they expect (docs/integration.md); by hand, the user would have
    had to move it flat. An improvement, not a difference to fix."""
    a, b = truth.surface(bare), truth.surface(rec)
    bare_via, exec_via = set(a.pop("via")), set(b.pop("via"))
    extra = exec_via - bare_via
    return a == b and bare_via <= exec_via and bool(extra) and extra <= CATEGORY_LOADERS


def validate_truth(res, plugin_dir: Path):
    """What validate should say, to be fair to it: (expected_loads, why, excusable).

    * the real loader loads it: validate should say it loads;
    * it fails only for missing modules and loads under exec (its declared dependencies
      installed): it loads -- validate cannot see the bare venv;
    * a missing module that is inside the plugin folder (an absolute import of a sibling,
      which Hermes's package import cannot resolve): a real failure validate can see: fails;
    * a missing module found nowhere in the plugin folder and not brought by its declared
      dependencies (an undeclared third-party package, or code elsewhere in the repository):
      fails, but excusably -- validate does not model the interpreter's site-packages, so a
      "loads" verdict is excluded from the comparison (a "fails" verdict still agrees);
    * any other failure (missing Hermes API, refused override, no register()): fails.
    """
    bare = res["bare"]["summary"]
    if bare["status"] == "loads":
        return True, "the real loader loads it", False
    cause = bare.get("cause") or ""
    if cause.startswith("missing-module:"):
        if (res.get("exec_summary") or {}).get("status") == "loads":
            return True, "fails bare only for missing modules; loads with its dependencies installed", False
        missing = sorted({m.split(".")[0] for m in cause.split(":", 1)[1].split(",")})
        local = [m for m in missing if module_in_dir(plugin_dir, m)]
        if local:
            return False, "imports %s absolutely: in the plugin folder, but not importable as Hermes imports the plugin" % ", ".join(local), False
        return False, "missing module(s) %s: not in the plugin folder nor brought by its declared dependencies" % ", ".join(missing), True
    return False, "the real loader fails: %s" % cause, False


def module_in_dir(plugin_dir: Path, module: str) -> bool:
    """Whether ``module`` exists as ``<module>.py`` or a ``<module>/`` package (regular or
    namespace) anywhere in the plugin folder."""
    return any(True for _ in plugin_dir.rglob(module + ".py")) or any(
        p.is_dir() for p in plugin_dir.rglob(module))


# --------------------------------------------------------------------------------------------
# One plugin
# --------------------------------------------------------------------------------------------

USER_CONFIG_HEAD = "# written by hand (tests/real-plugins/run.py), as a user would\n"


def run_plugin(args, row, repo_dir: Path, work: Path):
    """Steps (a)-(e) for one INDEX row. Returns a result dict (see report())."""
    pid = truth.plugin_id(row)
    res = {"line": row["line"], "id": pid, "notes": []}
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="p%02d-" % row["line"], dir=work))
    ctx = {"tmp": tmp, "home": tmp / "home", "user": tmp / "user"}
    ctx["user"].mkdir()
    res["tmp"] = str(tmp)

    # (a) bare truth
    bare = truth.bare_record(row, args.corpus, args.python)
    res["bare"] = bare
    role = bare.get("role", "flat")
    env_names = bare.get("env_set") or []
    if env_names:
        res["notes"].append("requires_env bound in <home>/.env of both homes: " + ", ".join(env_names))

    # (e) validate (independent of the rest)
    plugin_dir = (args.corpus / row["repo"].replace("/", "__") / row["subdir"]).resolve()
    res["validate"] = validate_verdict(args, plugin_dir, tmp)

    # (c) install
    src = source_url(repo_dir, row["subdir"])
    flags = ["--enable", "--yes-deps", "--core", "installed:" + args.python]
    for grant in bare.get("grants_needed") or []:
        flags += ["--grant", grant]
        res["notes"].append("--grant %s (the bare loader needed Hermes's override opt-in)" % grant)
    config_written = None
    dotenv = truth.dotenv_text(env_names)
    if dotenv:
        # What the install prompt would have written (the variables are "already set").
        ctx["home"].mkdir(parents=True, exist_ok=True)
        (ctx["home"] / ".env").write_text(dotenv, encoding="utf-8")
    if role == "memory-provider":
        # The key decides the provider name (last segment of the key): ask a dry run, then
        # write config.yaml by hand before installing, as a user who already chose it would.
        rc, doc, err = hp(args, ctx, "install", src, *flags, "--dry-run")
        key = ((doc or {}).get("installed") or {}).get("key") if rc == 0 else None
        if key:
            config_written = USER_CONFIG_HEAD + "memory:\n  provider: %s\n" % key.rsplit("/", 1)[-1]
            ctx["home"].mkdir(parents=True, exist_ok=True)
            (ctx["home"] / "config.yaml").write_text(config_written, encoding="utf-8")
            res["memory_provider_config"] = key.rsplit("/", 1)[-1]
    rc, doc, err = hp(args, ctx, "install", src, *flags)
    hermes_would_load = bare["summary"]["status"] == "loads" or (
        bare["summary"].get("cause") or "").startswith("missing-module:")
    if rc != 0 and "--allow-core-patch" in error_text(doc, err) and hermes_would_load:
        # Hermes loads it as it is (or would, with its dependencies); hermes-plugins asks for
        # consent to its core patching, which a user answers yes to.
        res["notes"].append("--allow-core-patch (hermes-plugins asks; Hermes loads it): "
                            + error_text(doc, err).splitlines()[0][:200])
        flags.append("--allow-core-patch")
        rc, doc, err = hp(args, ctx, "install", src, *flags)
    if rc != 0 and "--accept-finding" in error_text(doc, err) and hermes_would_load:
        # A dangerous verdict, answered per finding as a reviewer who read the flagged code
        # would: each finding the refusal names is accepted by its id (printed).
        ids = re.findall(r"--accept-finding (\S+)", error_text(doc, err))
        res["notes"].append("--accept-finding (read, accepted for this plugin): " + ", ".join(ids))
        for finding in dict.fromkeys(ids):
            flags += ["--accept-finding", finding]
        rc, doc, err = hp(args, ctx, "install", src, *flags)
    res["install_flags"] = flags
    res["installed"] = rc == 0
    if rc != 0:
        res["install_error"] = "exit %s: %s" % (rc, error_text(doc, err))
    else:
        inst = (doc or {}).get("installed") or {}
        res["key"] = inst.get("key")
        res["requirements"] = inst.get("requirements") or []
        gen = (doc or {}).get("generation") or {}
        if gen.get("held_back"):
            res["notes"].append("held back: %s" % [h.get("reason") for h in gen["held_back"]])
        warnings = [w for w in (doc or {}).get("warnings") or [] if "held back" not in w]
        if warnings:  # validation warnings and admission findings; not failures
            res["notes"].append("install printed %d warning(s), e.g. %s" % (len(warnings), warnings[0][:200]))
        if dotenv and (ctx["home"] / ".env").read_text(encoding="utf-8") != dotenv:
            res["notes"].append("install changed the user's .env:\n" + (ctx["home"] / ".env").read_text(encoding="utf-8"))
        if config_written is not None:
            now = (ctx["home"] / "config.yaml").read_text(encoding="utf-8")
            res["config_preserved"] = now.startswith(USER_CONFIG_HEAD) and (
                "memory:\n  provider: %s\n" % res["memory_provider_config"]) in now
            if not res["config_preserved"]:
                res["notes"].append("config.yaml edit lost the user's lines:\n" + now)

    # (d) exec
    if res["installed"] and res.get("key"):
        cmd = [args.bin, "--home", str(ctx["home"]), "exec", "--", args.python, TRUTH, "exec",
               "--key", res["key"], "--role", role]
        rc, out, err = run_cmd(cmd, base_env(ctx["user"]), tmp, EXEC_TIMEOUT)
        rec = truth.parse_result(out)
        if rec is None:
            res["exec_error"] = "exit %s: %s" % (rc, err.strip()[-2000:])
        else:
            res["exec"] = rec
            res["exec_summary"] = rec["summary"]
            res["diff"] = truth.diff_surfaces(truth.surface(bare), truth.surface(rec))
            res["more_with_deps"] = bool(res["diff"]) and registers_more_with_deps(bare, rec)
            res["category_view"] = bool(res["diff"]) and found_by_category_view(bare, rec)

    res["validate_expected"], res["validate_truth_why"], excusable = validate_truth(res, plugin_dir)
    if excusable and res["validate"]["loads"]:
        res["validate_expected"] = None  # excluded: see validate_truth
    res["seconds"] = round(time.monotonic() - started, 1)
    log("[%2d] %-60s bare %-5s install %-4s exec %s (%ss)" % (
        row["line"], pid, bare["summary"]["status"], "ok" if res["installed"] else "FAIL",
        (res.get("exec_summary") or {}).get("status", "-") + ("" if not res.get("diff") else " DIFF"),
        res["seconds"]))
    return res


# --------------------------------------------------------------------------------------------
# The joint home
# --------------------------------------------------------------------------------------------

def joint_home(args, results, repos, work: Path):
    """Every plugin the real loader loads (and hermes-plugins installed), in one home:
    ``install`` each without ``--enable``, then a hand edit of ``plugins.enabled`` listing
    them all and one ``sync --yes-deps`` (one joint resolution). If that fails, ``enable``
    them one by one to name the plugin whose addition breaks it. Returns (verdict, lines)."""
    tmp = Path(tempfile.mkdtemp(prefix="joint-", dir=work))
    ctx = {"tmp": tmp, "home": tmp / "home", "user": tmp / "user"}
    ctx["user"].mkdir()
    lines = []
    chosen, seen = [], {}
    for res in sorted(results, key=lambda r: r["line"]):
        if res["bare"]["summary"]["status"] != "loads" or not res.get("key"):
            continue
        if res["key"] in seen:
            lines.append("joint: skipped %s: same key `%s` as %s" % (res["id"], res["key"], seen[res["key"]]))
            continue
        seen[res["key"]] = res["id"]
        chosen.append(res)
    # every requires_env name, bound in .env as the install prompts would have
    names = sorted({n for res in chosen for n in res["bare"].get("env_set") or []})
    dotenv = truth.dotenv_text(names)
    for home in (ctx["home"], tmp / "home-seq"):
        home.mkdir(parents=True)
        (home / ".env").write_text(dotenv, encoding="utf-8")
    installed = []
    for res in chosen:
        row_repo, subdir = res["id"].split("#", 1) if "#" in res["id"] else (res["id"], ".")
        flags = [f for f in res["install_flags"] if f != "--enable"]
        rc, doc, err = hp(args, ctx, "install", source_url(repos[row_repo], subdir), *flags)
        if rc != 0:
            lines.append("joint: install of %s failed: exit %s: %s" % (res["id"], rc, error_text(doc, err)))
        else:
            installed.append(res)
    keys = [r["key"] for r in installed]
    memory = next((r for r in installed if r.get("memory_provider_config")), None)
    config = ctx["home"] / "config.yaml"
    before = config.read_text(encoding="utf-8") if config.exists() else ""
    # A hand edit: replace whatever plugins block is there by one listing every key.
    text = USER_CONFIG_HEAD + "plugins:\n  enabled:\n" + "".join("    - %s\n" % k for k in keys)
    if memory:
        text += "memory:\n  provider: %s\n" % memory["memory_provider_config"]
    config.write_text(text, encoding="utf-8")
    lines.append("joint: %d plugins installed; config.yaml before the hand edit had %d lines" % (
        len(keys), len(before.splitlines())))
    t0 = time.monotonic()
    rc, doc, err = hp(args, ctx, "sync", "--yes-deps")
    lines.append("joint: sync of %d enabled plugins: exit %s (%.0fs)" % (len(keys), rc, time.monotonic() - t0))
    if rc == 0:
        gen = (doc or {}).get("generation") or {}
        lines.append("joint: generation %s publishes %d plugins" % (gen.get("generation"), len(gen.get("plugins") or [])))
        after = config.read_text(encoding="utf-8")
        if not after.startswith(USER_CONFIG_HEAD) or (memory and "provider: %s" % memory["memory_provider_config"] not in after):
            lines.append("joint: config.yaml lost the user's lines after sync:\n" + after)
        lines += joint_exec(args, ctx, installed)
        return "ok", lines, ctx
    error = error_text(doc, err)
    lines.append("joint: sync failed: " + error)
    code = ((doc or {}).get("error") or {}).get("code")
    # Locate it: a fresh home, enabling one by one.
    ctx2 = {"tmp": tmp, "home": tmp / "home-seq", "user": ctx["user"]}
    for res in installed:
        row_repo, subdir = res["id"].split("#", 1) if "#" in res["id"] else (res["id"], ".")
        flags = [f for f in res["install_flags"] if f != "--enable"]
        hp(args, ctx2, "install", source_url(repos[row_repo], subdir), *flags)
    for res in installed:
        grant_args = []
        flags = res["install_flags"]
        for i, f in enumerate(flags):
            if f == "--grant":
                grant_args += ["--grant", flags[i + 1]]
        rc2, doc2, err2 = hp(args, ctx2, "enable", res["key"], "--yes-deps", *grant_args)
        if rc2 != 0:
            msg = error_text(doc2, err2)
            lines.append("joint: enabling %s after the ones before it failed: %s" % (res["key"], msg))
            return "%s (%s)" % (code or "failed", msg.splitlines()[0][:300]), lines, ctx
    return "%s (sync failed, but enabling one by one succeeded: %s)" % (code, error.splitlines()[0][:300]), lines, ctx


def joint_exec(args, ctx, installed):
    """Informational: what Hermes loads under exec in the joint home, per plugin, against what
    it loaded alone. Plugins may legitimately interfere here (one context engine per process,
    one active memory provider, tools of the same name), so differences are listed, not
    failures."""
    first = installed[0]
    cmd = [args.bin, "--home", str(ctx["home"]), "exec", "--", args.python, TRUTH, "exec",
           "--key", first["key"], "--role", first["bare"].get("role", "flat"),
           "--also", *[r["key"] for r in installed]]
    rc, out, err = run_cmd(cmd, base_env(ctx["user"]), ctx["tmp"], EXEC_TIMEOUT)
    rec = truth.parse_result(out)
    if rec is None or "also" not in rec:
        return ["joint: exec failed: exit %s: %s" % (rc, err.strip()[-1500:])]
    also = rec["also"]
    lines = []
    alone_general = [r for r in installed if (r["bare"].get("general") or {}).get("loaded")]
    together = [r for r in alone_general if also["general"].get(r["key"]) == "loaded"]
    lines.append("joint exec: general loader loads %d/%d of the plugins it loads alone" % (
        len(together), len(alone_general)))
    for r in alone_general:
        if also["general"].get(r["key"]) != "loaded":
            lines.append("    %s: %s" % (r["key"], also["general"].get(r["key"])))
    listed = also.get("memory_providers") if isinstance(also.get("memory_providers"), list) else []
    mem = [r for r in installed if (r["bare"].get("memory") or {}).get("loaded")]
    lines.append("joint exec: memory providers listed: %s (loaded alone: %s)" % (
        ", ".join(listed) or also.get("memory_providers"), ", ".join(r["key"] for r in mem)))
    for r in mem:
        name = r["key"].rsplit("/", 1)[-1]
        if name not in listed:
            lines.append("    MISSING: memory provider `%s` is not listed under exec here, though it loads alone" % r["key"])
        shadows = [o["key"] for o in installed if o is not r and o["key"].rsplit("/", 1)[-1] == name]
        if shadows:
            lines.append("    `%s` shares its provider name `%s` with %s (the flat provider view names plugins by the last key segment)" % (
                r["key"], name, ", ".join("`%s`" % k for k in shadows)))
    mps = sorted({n for r in installed for n in ((r["bare"].get("model_provider") or {}).get("registered") or [])})
    lines.append("joint exec: model providers registered: %s (alone: %s)" % (
        ", ".join(also.get("model_providers") or []), ", ".join(mps)))
    for n in mps:
        if n not in (also.get("model_providers") or []):
            lines.append("    MISSING: model provider `%s`" % n)
    lines.append("joint exec: context engine the agent gets: %s" % also.get("context_engine"))
    return lines


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def one_line(res):
    b = res["bare"]["summary"]
    parts = ["[%2d] %s" % (res["line"], res["id"])]
    parts.append("bare: %s%s" % (b["status"], " (%s)" % ", ".join(b["provides"]) if b["provides"]
                                 else " (%s)" % (b.get("cause") or "")))
    if res["installed"]:
        parts.append("install: ok as `%s`%s" % (res.get("key"), " [%s]" % " ".join(
            f for f in res["install_flags"][4:]) if res["install_flags"][4:] else ""))
    else:
        parts.append("install: FAILED")
    if "exec_summary" in res:
        e = res["exec_summary"]
        if not res.get("diff"):
            verdict = "same"
        elif b["status"] != "loads" and e["status"] == "loads":
            verdict = "IMPROVEMENT (its dependencies installed)"
        elif res.get("more_with_deps"):
            verdict = "registers MORE (its dependencies installed)"
        elif res.get("category_view"):
            verdict = "found by a category loader too (the generation's view)"
        else:
            verdict = "DIFFERENT"
        parts.append("exec: %s, %s" % (e["status"], verdict))
    elif res["installed"]:
        parts.append("exec: ERROR")
    v = res["validate"]
    exp = res["validate_expected"]
    if exp is None:
        parts.append("validate: excluded")
    elif v["loads"] is None:
        parts.append("validate: no verdict")
    else:
        parts.append("validate: %s (%s)" % ("agrees" if v["loads"] == exp else "DISAGREES",
                                            "loads" if v["loads"] else "fails"))
    return "  ".join(parts)


def report(results, joint, joint_lines, wall):
    """Prints per-plugin lines, details and the figures; returns the exit status."""
    results = sorted(results, key=lambda r: r["line"])
    print("== per plugin ==")
    for res in results:
        print(one_line(res))
    loads = [r for r in results if r["bare"]["summary"]["status"] == "loads"]
    installed = [r for r in loads if r["installed"]]
    same = [r for r in loads if "exec_summary" in r and not r.get("diff")]
    judged = [r for r in results if r["validate_expected"] is not None and r["validate"]["loads"] is not None]
    agrees = [r for r in judged if r["validate"]["loads"] == r["validate_expected"]]
    improved = [r for r in results if r["bare"]["summary"]["status"] != "loads"
                and (r.get("exec_summary") or {}).get("status") == "loads"]
    more = [r for r in loads if r.get("more_with_deps")]

    print("\n== details ==")
    failing = []
    for res in results:
        lines = []
        bare_loads = res["bare"]["summary"]["status"] == "loads"
        if res.get("install_error"):
            lines.append("install failed: " + res["install_error"])
        if res.get("exec_error"):
            lines.append("exec failed: " + res["exec_error"])
        if res.get("diff"):
            if not bare_loads:
                lines.append("loads under exec only (an improvement: its dependencies are installed there):")
            elif res.get("more_with_deps"):
                lines.append("registers more under exec, its dependencies installed (bare logged missing %s):" % (
                    ", ".join(res["bare"].get("logged_missing_modules") or [])))
            elif res.get("category_view"):
                lines.append("found by the release's category loader under exec too (an improvement: the "
                             "generation shows it by its key's last segment):")
            else:
                lines.append("differs under exec:")
            lines += ["    " + d for d in res["diff"]]
            ew = (res.get("exec_summary") or {}).get("why")
            if ew:
                lines.append("    exec why: " + ew)
        if not bare_loads:
            lines.append("bare fails (%s): %s" % (res["bare"]["summary"].get("cause"), (res["bare"]["summary"].get("why") or "")[:300]))
        v = res["validate"]
        if res["validate_expected"] is not None and v["loads"] is not None and v["loads"] != res["validate_expected"]:
            lines.append("validate disagrees: says %s (%s); expected %s: %s" % (
                "loads" if v["loads"] else "fails", v.get("why") or "no load-gate error",
                "loads" if res["validate_expected"] else "fails", res["validate_truth_why"]))
        elif res["validate_expected"] is None:
            lines.append("validate " + res["validate_truth_why"])
        lines += res["notes"]
        broken = bare_loads and (not res["installed"] or "exec_summary" not in res
                                 or (res.get("diff") and not res.get("more_with_deps")
                                     and not res.get("category_view")))
        if broken:
            failing.append(res["id"])
            if res["id"] in EXPECTED:
                lines.append("EXPECTED: " + EXPECTED[res["id"]])
        if lines:
            print("[%2d] %s%s" % (res["line"], res["id"], "  <-- FAILURE" if broken and res["id"] not in EXPECTED else ""))
            for line in lines:
                print("    " + line.replace("\n", "\n    "))

    print("\n== joint home ==")
    for line in joint_lines:
        print(line)

    print("\n== figures ==")
    if improved:
        print("improvements (fail bare, load under exec with dependencies installed): %d: %s" % (
            len(improved), ", ".join(r["id"] for r in improved)))
    if more:
        print("improvements (load bare, register more under exec with dependencies installed): %d: %s" % (
            len(more), ", ".join(r["id"] for r in more)))
    expected_hit = [r["id"] for r in loads if r["id"] in EXPECTED and r["id"] in failing]
    if expected_hit:
        print("EXPECTED exceptions used: %s" % ", ".join(expected_hit))
    ran = {r["id"] for r in results}
    stale = [k for k in EXPECTED if k in ran and k not in expected_hit]
    if stale:
        print("EXPECTED entries no longer needed (remove them): %s" % ", ".join(stale))
    print("real loader loads %d; installed %d/%d; same under exec %d/%d; validate's load verdict agrees %d/%d; joint home: %s" % (
        len(loads), len(installed), len(loads), len(same), len(loads), len(agrees), len(judged), joint))
    print("wall time: %.0f s" % wall)
    unexpected = [i for i in failing if i not in EXPECTED]
    # The joint home fails the run when the tool, not the plugins, is at fault: a failure
    # other than a genuine dependency conflict, or a provider that loads alone but silently
    # disappears next to the others (see joint_exec).
    if joint not in ("ok", "skipped") and not joint.startswith("conflict"):
        unexpected.append("joint home (%s)" % joint)
    lost = [line.strip() for line in joint_lines if line.strip().startswith("MISSING:")]
    unexpected += ["joint home: " + line for line in lost]
    if unexpected:
        print("FAILED: %s" % "; ".join(unexpected))
        return 1
    return 0


# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="the hermes-plugins binary")
    ap.add_argument("--python", required=True,
                    help="the interpreter of a Hermes Agent venv (0.19.0 from PyPI, 0.22.2 from "
                         "../shared/hermes/make-hermes-venv.sh)")
    ap.add_argument("--corpus", required=True, type=Path, help="the corpus (INDEX.tsv)")
    ap.add_argument("--only", type=int, nargs="+", help="INDEX.tsv data lines (1 = first plugin)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json-out", type=Path, help="write every record here (JSON lines)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary homes and repositories")
    ap.add_argument("--no-joint", action="store_true", help="skip the joint home")
    args = ap.parse_args()
    args.bin = str(Path(args.bin).resolve())
    args.corpus = args.corpus.resolve()
    # not resolved: a venv's bin/python is a symlink, and the venv is found through its path
    args.python = os.path.abspath(args.python)
    for what, path in (("--bin", args.bin), ("--python", args.python)):
        if not os.access(path, os.X_OK):
            ap.error("%s %s is not executable" % (what, path))
    if not (args.corpus / "INDEX.tsv").is_file():
        ap.error("--corpus %s has no INDEX.tsv" % args.corpus)
    global HERMES_VERSION
    HERMES_VERSION = subprocess.run(
        [args.python, "-I", "-c", "from importlib.metadata import version; print(version('hermes-agent'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    log("Hermes %s (%s)" % (HERMES_VERSION, args.python))

    started = time.monotonic()
    rows = truth.read_index(args.corpus)
    if args.only:
        rows = [r for r in rows if r["line"] in args.only]
    work = Path(tempfile.mkdtemp(prefix="hermes-real-plugins-"))
    log("work directory: %s" % work)
    try:
        return run_all(args, rows, work, started)
    finally:
        if args.keep:
            print("kept: %s" % work)
        else:
            remove_tree(work)


remove_tree = truth.remove_tree


def run_all(args, rows, work: Path, started: float) -> int:
    """Every plugin, the joint home, the report; returns the exit status."""
    (work / "repos").mkdir()
    repos = {}
    for row in rows:
        if row["repo"] not in repos:
            repos[row["repo"]] = make_repo(args.corpus, row["repo"], work / "repos")
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_plugin, args, row, repos[row["repo"]], work): row for row in rows}
        for fut in concurrent.futures.as_completed(futures):
            row = futures[fut]
            try:
                results.append(fut.result())
            except Exception as exc:  # a bug of this script: report it as a failure of the row
                import traceback
                log("[%2d] crashed: %s" % (row["line"], traceback.format_exc()))
                raise
    if args.no_joint:
        joint, joint_lines = "skipped", ["joint: skipped (--no-joint)"]
    else:
        log("joint home ...")
        joint, joint_lines, _ = joint_home(args, results, repos, work)
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as handle:
            for res in sorted(results, key=lambda r: r["line"]):
                handle.write(json.dumps(res, default=str) + "\n")
    return report(results, joint, joint_lines, time.monotonic() - started)


if __name__ == "__main__":
    sys.exit(main())
