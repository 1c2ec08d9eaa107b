#!/usr/bin/env python3
"""hermes-plugins against REAL plugins from the package index and the REAL Hermes Agent.

    python3 tests/pypi-plugins/run.py --bin target/release/hermes-plugins \\
        --python ~/.cache/hermes-plugins/tools/hermes-agent-0.19.0/bin/python \\
        [--only NAME ...] [--jobs 2] [--json-out F] [--keep]

For every distribution of ``DEVSET.tsv`` (name and version; fetched from the index now):

a. **bare truth** -- what a user gets with plain pip: a copy of the Hermes venv, ``pip install
   NAME==VERSION`` into it, and the real loaders run in that copy with a fresh
   ``HERMES_HOME`` whose ``config.yaml`` enables the distribution's ``hermes_agent.plugins``
   entry point (and names its ``hermes_agent.memory_providers`` one as ``memory.provider``).
   What is observed is ``truth.observe`` of tests/real-plugins (the same recording wrappers,
   the same surface). When pip replaced Hermes itself (a distribution that pins
   ``hermes-agent``), the truth is "pip replaces core": the release under test no longer runs;
   when pip moved another package of Hermes's own environment (a dependency pinned to a
   version that Hermes's installed one is not), "pip changes core's environment";
b. in a fresh home, ``hermes-plugins install pypi:NAME==VERSION --enable --yes-deps --core
   installed:<hermes python>`` (the real index; ``--grant tools.override`` only when the bare
   loader needed Hermes's override opt-in);
c. ``hermes-plugins exec -- <hermes python> run.py child ...`` records what Hermes registers
   from the published generation, compared with (a) by ``truth.surface``.

What must hold (exit 1 otherwise, unless :data:`EXPECTED` names the distribution):

* a distribution the real loader loads installs, keyed by its entry-point name, and registers
  the same under exec;
* one that declares no Hermes entry point is refused, saying what it is instead;
* one whose pip install replaces the Hermes under test is refused, naming the requirement on
  Hermes; one whose pip install changes another package of Hermes's environment is refused as
  a conflict, or installed with that environment as it is (other releases of its
  dependencies) and loads under exec -- a generation adds to Hermes's environment and never
  changes it.

Output: a line per distribution, details, and the figures::

    real loader loads N; installed N/N; same under exec N/N; not-a-plugin refused M/M;
    pip changes core: refused or installed beside it K/K

Standard library only (Python 3.11); the Hermes interpreter runs only as a child. In CI
(.ci/run)::

    python3 tests/pypi-plugins/run.py --bin "$bin" --python "$hermes_venv/bin/python" --jobs 2
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
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
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "real-plugins"))
import truth  # noqa: E402  (tests/real-plugins/truth.py: observe, surface)

PLUGINS_GROUP = "hermes_agent.plugins"
MEMORY_GROUP = "hermes_agent.memory_providers"

#: Distributions that may fail what must hold, each with the reason it is not hermes-plugins'
#: fault. A bug of ours never goes here; an entry no longer needed is reported.
EXPECTED: dict[str, str] = {}

USER_CONFIG_HEAD = "# written by hand (tests/pypi-plugins/run.py), as a user would\n"

PIP_TIMEOUT = 900
INSTALL_TIMEOUT = 900
CHILD_TIMEOUT = 180

log = truth.log


def read_devset(path: Path):
    """The rows of DEVSET.tsv (``#`` lines are comments)."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


run_cmd = truth.run_cmd


def error_text(stdout, stderr):
    """The tool's own error from --json (message and causes), else the tail of stderr."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
        e = doc["error"]
        return "[%s] %s" % (e.get("code"), e.get("message")) + "".join(
            "\n    Caused by: %s" % c for c in e.get("causes") or [])
    return (stderr or "").strip()[-2000:] or "(no output)"


# --------------------------------------------------------------------------------------------
# The child: runs in a Hermes interpreter (the pip copy, or the real one under exec)
# --------------------------------------------------------------------------------------------

def child_main(argv):
    """``run.py child --dist NAME [--write-config] [--grant G]``: observes the distribution's
    entry-point plugin with the real loaders and prints one record."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", required=True)
    ap.add_argument("--write-config", action="store_true",
                    help="bare mode: enable the plugin in HERMES_HOME/config.yaml first")
    ap.add_argument("--grant", action="append", default=[])
    args = ap.parse_args(argv)
    import importlib.metadata as md
    import importlib.util

    # Hermes's first import: under exec, that is where the generation's site-packages joins
    # sys.path (observe() imports it first too, before any loader runs).
    import providers  # noqa: F401

    out = {"dist": args.dist}
    try:
        dist = md.distribution(args.dist)
    except md.PackageNotFoundError:
        out["not_installed"] = True
        print("\n" + truth.RESULT_MARKER + json.dumps(out))
        return
    eps = [(e.group, e.name, e.value) for e in dist.entry_points]
    out["entry_points"] = eps
    out["console_scripts"] = sorted(n for g, n, _ in eps if g == "console_scripts")
    plugins = [(n, v) for g, n, v in eps if g == PLUGINS_GROUP]
    memory = [(n, v) for g, n, v in eps if g == MEMORY_GROUP]
    key = plugins[0][0] if plugins else None
    mem = memory[0][0] if memory else None
    out["key"], out["memory_name"] = key, mem
    role = "memory-provider" if mem else "flat"
    out["role"] = role
    if key is None and mem is None:
        print("\n" + truth.RESULT_MARKER + json.dumps(out))
        return
    if args.write_config:
        config = {"plugins": {"enabled": [key] if key else []}}
        if mem:
            config["memory"] = {"provider": mem}
        if key and args.grant:
            config["plugins"]["entries"] = {key: {g: True for g in args.grant}}
        home = Path(os.environ["HERMES_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        # JSON is YAML; 0.22.2 ships no PyYAML
        (home / "config.yaml").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

    def package_dir(value):
        """The directory of an entry point's package (found, not imported): how Hermes tells
        the provider apart from a bundled one of the same name."""
        module = value.split(":")[0].strip()
        try:
            spec = importlib.util.find_spec(module)
        except Exception:
            return None
        origin = getattr(spec, "origin", None) if spec else None
        return str(Path(origin).parent) if origin and origin.endswith("__init__.py") else None

    expected = package_dir(memory[0][1]) if memory else None
    # observe() looks the general plugin up by key; a memory provider alone has none.
    truth.observe(lambda hp: (key or "", mem or "", expected), role, out)
    print("\n" + truth.RESULT_MARKER + json.dumps(out, default=str))


# --------------------------------------------------------------------------------------------
# One distribution
# --------------------------------------------------------------------------------------------

def hermes_version(python):
    return subprocess.run(
        [python, "-I", "-c", "from importlib.metadata import version; print(version('hermes-agent'))"],
        capture_output=True, text=True).stdout.strip()


def installed_versions(python):
    """{normalised name: version} of every distribution the interpreter's environment holds."""
    out = subprocess.run(
        [python, "-I", "-c", "import importlib.metadata as m, json; print(json.dumps("
         "{d.metadata['Name']: d.version for d in m.distributions()}))"],
        capture_output=True, text=True, check=True).stdout
    return {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in json.loads(out).items()}


def bare_truth(args, row, tmp: Path, res):
    """Step (a): pip into a copy of the Hermes venv, then the real loaders there."""
    venv = tmp / "venv"
    shutil.copytree(args.venv, venv, symlinks=True)
    python = str(venv / "bin" / "python")
    env = truth.clean_env(HOME=str(tmp / "user"), PIP_CACHE_DIR=str(args.pip_cache),
                          PIP_DISABLE_PIP_VERSION_CHECK="1")
    spec = "%s==%s" % (row["name"], row["version"])
    rc, out, err = run_cmd([python, "-m", "pip", "install", "-q", spec], env, tmp, PIP_TIMEOUT)
    res["pip"] = {"rc": rc, "error": None if rc == 0 else (err.strip()[-1500:] or out[-1500:])}
    if rc != 0:
        return None
    after = hermes_version(python)
    if after != args.hermes_version:
        res["pip"]["replaced_core"] = after or "(removed)"
        return None
    changed = {name: (version, args.core_env.get(name)) for name, version in
               installed_versions(python).items()
               if name in args.core_env and args.core_env[name] != version}
    if changed:
        # pip moved a package of Hermes's own environment to make room for the plugin: the
        # Hermes under test is no longer what it was (a generation never does that).
        res["pip"]["changed_core_env"] = {n: "%s -> %s" % (b, a) for n, (a, b) in changed.items()}
        return None
    rec, grants = None, []
    for attempt in range(2):
        cargs = [python, str(HERE / "run.py"), "child", "--dist", row["name"], "--write-config"]
        for g in grants:
            cargs += ["--grant", g]
        home = tmp / ("bare-home-%d" % attempt)
        rc, out, err = run_cmd(cargs, truth.clean_env(HERMES_HOME=str(home), HOME=str(tmp / "user")),
                               tmp, CHILD_TIMEOUT)
        rec = truth.parse_result(out)
        if rec is None:
            return {"child_failed": "exit %s: %s" % (rc, err.strip()[-1500:])}
        if (rec.get("summary") or {}).get("cause") == "tool-override-not-granted" and not grants:
            grants = ["allow_tool_override"]
            continue
        break
    rec["grants_needed"] = ["tools.override"] if grants else []
    return rec


def run_one(args, row, work: Path):
    name, version = row["name"], row["version"]
    res = {"id": "%s==%s" % (name, version), "name": name, "notes": []}
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=name + "-", dir=work))
    (tmp / "user").mkdir()
    try:
        bare = bare_truth(args, row, tmp, res)
    finally:
        shutil.rmtree(tmp / "venv", ignore_errors=True)
    res["bare"] = bare
    if bare is None:
        res["truth"] = ("replaces-core" if res["pip"].get("replaced_core") else
                        "changes-core-env" if res["pip"].get("changed_core_env") else "pip-fails")
    elif "child_failed" in bare:
        res["truth"] = "child-failed"
    elif not bare.get("key") and not bare.get("memory_name"):
        res["truth"] = "not-a-plugin"
    else:
        res["truth"] = "loads" if bare["summary"]["status"] == "loads" else "fails"

    flags = ["--enable", "--yes-deps", "--core", "installed:" + args.python]
    for g in (bare or {}).get("grants_needed") or []:
        flags += ["--grant", g]
        res["notes"].append("--grant %s (the bare loader needed Hermes's override opt-in)" % g)
    home = tmp / "home"
    env = truth.clean_env(HOME=str(tmp / "user"), HERMES_PLUGINS_CATALOG="none")
    memory_name = (bare or {}).get("memory_name")
    config_written = None
    if memory_name:
        # As in the bare home (and as a user who chose this provider has it): config.yaml
        # names it as memory.provider, written by hand before installing; install keeps it.
        config_written = USER_CONFIG_HEAD + "memory:\n  provider: %s\n" % memory_name
        home.mkdir()
        (home / "config.yaml").write_text(config_written, encoding="utf-8")
    cmd = [args.bin, "--home", str(home), "--json", "--no-input", "install",
           "pypi:%s==%s" % (name, version), *flags]
    rc, out, err = run_cmd(cmd, env, tmp, INSTALL_TIMEOUT)
    if rc != 0 and "--allow-core-patch" in error_text(out, err) and res["truth"] == "loads":
        # Hermes loads it as it is; hermes-plugins asks consent to its patching of Hermes,
        # which a user answers yes to.
        res["notes"].append("--allow-core-patch (hermes-plugins asks; Hermes loads it): "
                            + error_text(out, err).splitlines()[0][:200])
        flags.append("--allow-core-patch")
        cmd = cmd[:7] + flags
        rc, out, err = run_cmd(cmd, env, tmp, INSTALL_TIMEOUT)
    if rc != 0 and "--accept-finding" in error_text(out, err) and res["truth"] == "loads":
        ids = list(dict.fromkeys(re.findall(r"--accept-finding (\S+)", error_text(out, err))))
        res["notes"].append("--accept-finding (a reviewer read the flagged code): " + ", ".join(ids))
        for finding in ids:
            flags += ["--accept-finding", finding]
        cmd = cmd[:7] + flags
        rc, out, err = run_cmd(cmd, env, tmp, INSTALL_TIMEOUT)
    res["install_flags"] = flags
    res["installed"] = rc == 0
    if rc != 0:
        res["install_error"] = "exit %s: %s" % (rc, error_text(out, err))
    else:
        doc = json.loads(out)
        res["key"] = (doc.get("installed") or {}).get("key")
        if config_written is not None and not (home / "config.yaml").read_text(
                encoding="utf-8").startswith(config_written.split("\n", 1)[0]):
            res["notes"].append("install lost the user's config.yaml lines")
        if (doc.get("generation") or {}).get("held_back"):
            res["notes"].append("held back: %s" % doc["generation"]["held_back"])

    if res["installed"] and res["truth"] in ("loads", "fails", "changes-core-env"):
        cargs = [args.bin, "--home", str(home), "exec", "--", args.python, str(HERE / "run.py"),
                 "child", "--dist", name]
        rc, out, err = run_cmd(cargs, env, tmp, CHILD_TIMEOUT)
        rec = truth.parse_result(out)
        if rec is None:
            res["exec_error"] = "exit %s: %s" % (rc, err.strip()[-2000:])
        else:
            res["exec"] = rec
            res["exec_summary"] = rec.get("summary")
            if bare is None:  # pip changed Hermes: nothing of this release to compare with
                res["log_exec"] = True
            else:
                res["diff"] = truth.diff_surfaces(truth.surface(bare), truth.surface(rec))
        if bare is not None and "exec" in res:
            expected_key = bare.get("key") or bare.get("memory_name")
            if res["key"] != expected_key:
                res["diff"].append("key: Hermes knows it as %r, hermes-plugins installed %r" % (
                    expected_key, res["key"]))
    res["seconds"] = round(time.monotonic() - started, 1)
    log("%-32s truth %-13s install %-6s %s (%.0f s)" % (
        res["id"], res["truth"], "ok" if res["installed"] else "FAILED",
        "" if "exec_summary" not in res else "exec %s" % (
            "loads" if res.get("log_exec") and res["exec_summary"].get("status") == "loads"
            else "same" if not res.get("diff") else "DIFFERENT"), res["seconds"]))
    if not args.keep:
        truth.remove_tree(tmp)
    return res


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def verdict(res):
    """(ok, what): whether what must hold for this distribution holds."""
    t = res["truth"]
    err = res.get("install_error") or ""
    if t == "loads":
        if not res["installed"]:
            return False, "the real loader loads it; install failed"
        if "exec" not in res:
            return False, "installed; exec failed"
        return (not res["diff"]), ("same under exec" if not res["diff"] else "DIFFERENT under exec")
    if t == "not-a-plugin":
        ok = not res["installed"] and "registers no Hermes plugin" in err
        return ok, "refused as not a plugin" if ok else "NOT refused as not a plugin"
    if t == "replaces-core":
        ok = not res["installed"] and "requires Hermes" in err
        return ok, "refused (pins Hermes)" if ok else "NOT refused though pip replaces core"
    if t == "changes-core-env":
        # Refused as a conflict, or installed with Hermes's environment as it is (the
        # resolution found other releases of the plugin's dependencies) and loading under exec.
        if not res["installed"]:
            ok = "[conflict]" in err
            return ok, ("refused (conflicts with Hermes's environment)" if ok else
                        "NOT refused as a conflict though pip changes Hermes's environment")
        ok = (res.get("exec_summary") or {}).get("status") == "loads"
        return ok, ("installed without changing Hermes; loads under exec" if ok else
                    "installed, but does NOT load under exec")
    return True, "the real loader does not load it (%s)" % t


def report(results, wall):
    results = sorted(results, key=lambda r: r["name"])
    print("== per distribution ==")
    failing = []
    for res in results:
        ok, what = verdict(res)
        b = (res.get("bare") or {}).get("summary") or {}
        print("%-34s truth: %-13s %-40s %s" % (res["id"], res["truth"], what,
                                              ", ".join(b.get("provides") or []) or (b.get("why") or "")[:120]))
        if not ok:
            failing.append(res["id"])
    print("\n== details ==")
    for res in results:
        ok, _ = verdict(res)
        lines = []
        if res.get("pip", {}).get("error"):
            lines.append("pip failed: " + res["pip"]["error"])
        if res.get("pip", {}).get("changed_core_env"):
            lines.append("pip changed Hermes's own environment: %s" % ", ".join(
                "%s %s" % kv for kv in sorted(res["pip"]["changed_core_env"].items())))
        if res.get("pip", {}).get("replaced_core"):
            lines.append("pip replaced hermes-agent with %s" % res["pip"]["replaced_core"])
        if res.get("install_error"):
            lines.append("install: " + res["install_error"])
        if res.get("exec_error"):
            lines.append("exec failed: " + res["exec_error"])
        for d in res.get("diff") or []:
            lines.append("differs: " + d)
        if res["truth"] == "fails":
            lines.append("bare fails: %s" % (res["bare"]["summary"].get("why") or "")[:300])
        lines += res["notes"]
        if not ok and res["id"] in EXPECTED:
            lines.append("EXPECTED: " + EXPECTED[res["id"]])
        if lines:
            print("%s%s" % (res["id"], "  <-- FAILURE" if not ok and res["id"] not in EXPECTED else ""))
            for line in lines:
                print("    " + line.replace("\n", "\n    "))
    loads = [r for r in results if r["truth"] == "loads"]
    installed = [r for r in loads if r["installed"]]
    same = [r for r in loads if verdict(r)[0]]
    nap = [r for r in results if r["truth"] == "not-a-plugin"]
    pins = [r for r in results if r["truth"] in ("replaces-core", "changes-core-env")]
    # "changing core refused": refused, or (changes-core-env) installed without changing it
    print("\n== figures ==")
    print("Hermes %s: real loader loads %d; installed %d/%d; same under exec %d/%d; "
          "not-a-plugin refused %d/%d; pip changes core: refused or installed beside it %d/%d; other: %s" % (
              args_version, len(loads), len(installed), len(loads), len(same), len(loads),
              sum(verdict(r)[0] for r in nap), len(nap), sum(verdict(r)[0] for r in pins), len(pins),
              ", ".join("%s %s" % (r["name"], r["truth"]) for r in results
                        if r["truth"] in ("fails", "pip-fails", "child-failed")) or "none"))
    print("wall time: %.0f s" % wall)
    stale = [k for k in EXPECTED if k not in failing and any(r["id"] == k for r in results)]
    if stale:
        print("EXPECTED entries no longer needed (remove them): %s" % ", ".join(stale))
    unexpected = [i for i in failing if i not in EXPECTED]
    if unexpected:
        print("FAILED: %s" % ", ".join(unexpected))
        return 1
    return 0


args_version = "?"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        return child_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--python", required=True, help="the interpreter of a Hermes Agent venv")
    ap.add_argument("--devset", type=Path, default=HERE / "DEVSET.tsv")
    ap.add_argument("--only", nargs="+", help="distribution names")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--keep", action="store_true", help="keep the temporary homes")
    ap.add_argument("--pip-cache", type=Path,
                    default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                    / "hermes-plugins" / "pypi-plugins-pip")
    args = ap.parse_args()
    args.bin = str(Path(args.bin).resolve())
    args.python = os.path.abspath(args.python)  # a venv's python is a symlink: keep the path
    for what, path in (("--bin", args.bin), ("--python", args.python)):
        if not os.access(path, os.X_OK):
            ap.error("%s %s is not executable" % (what, path))
    args.venv = Path(args.python).parent.parent
    if not (args.venv / "pyvenv.cfg").is_file():
        ap.error("--python must be a venv's bin/python (its venv is copied for the pip truth)")
    args.hermes_version = hermes_version(args.python)
    args.core_env = installed_versions(args.python)
    global args_version
    args_version = args.hermes_version
    args.pip_cache.mkdir(parents=True, exist_ok=True)
    rows = read_devset(args.devset)
    if args.only:
        rows = [r for r in rows if r["name"] in args.only]
    log("Hermes %s (%s): %d distributions" % (args.hermes_version, args.python, len(rows)))
    work = Path(tempfile.mkdtemp(prefix="hermes-pypi-plugins-"))
    started = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda r: run_one(args, r, work), rows))
        if args.json_out:
            with open(args.json_out, "w", encoding="utf-8") as handle:
                for res in results:
                    handle.write(json.dumps(res, default=str) + "\n")
        return report(results, time.monotonic() - started)
    finally:
        if args.keep:
            print("kept: %s" % work)
        else:
            truth.remove_tree(work)


if __name__ == "__main__":
    sys.exit(main())
