#!/usr/bin/env python3
"""An unmodified Hermes from PyPI uses hermes-plugins with no wrapper (issue 27's acceptance).

    python3 tests/hermes-without-wrapper/run.py --bin target/release/hermes-plugins \\
        [--hermes 0.19.0] [--make-venv ../shared/hermes/make-hermes-venv.sh] [--runs 15] [--keep]

In a fresh venv, ``pip install hermes-agent==VERSION`` (from PyPI; pip's cache makes a second
run quick) — or, with ``--make-venv SCRIPT``, the venv ``SCRIPT VERSION VENV`` makes (the shared
script that installs a release PyPI's ``hermes-agent`` does not have, such as 0.22.2), its ``bin`` first on PATH as a user's would be, a fresh ``HERMES_HOME``, and never
``hermes-plugins exec``:

1. ``hermes --version`` start-up without the hook (median of ``--runs``), and ``hermes plugins
   list --plain`` as Hermes has it;
2. ``hermes-plugins activate --python <venv python>``;
3. ``hermes plugins install file://REPO --enable --yes-deps`` — Hermes's own command, served by
   this tool — publishes a generation with a plugin whose tool imports a PyPI package the
   Hermes venv does not have (``humanize``), resolved against the installed Hermes;
4. ``hermes plugins list --plain`` shows it (source ``hermes-plugins``);
5. a Python process started from the interpreter on the ``hermes`` console script's ``#!``
   line discovers it with Hermes's loader and dispatches its tool, the dependency coming from
   the generation;
6. a memory provider installed the same way (``file://REPO#memory/notes``), chosen with
   Hermes's own ``hermes config set memory.provider notes``: ``hermes memory status`` shows it
   installed and available;
7. a running process holds its generation: after ``hermes-plugins generations rollback`` a new
   ``hermes memory status`` no longer finds the provider, the running process (asked again)
   still does;
8. ``hermes --version`` start-up with the hook and a published home (median);
9. ``hermes-plugins deactivate``: ``hermes plugins list --plain`` is what it was in step 1.

Prints each step and the start-up figures; exit status 1 on the first step that does not hold
(with what was seen), 2 on bad arguments. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOL_PLUGIN = {
    "plugin.yaml": (
        "name: skyline\nversion: 1.0.0\ndescription: Says how long ago, with humanize\n"
        "manifest_version: 2\nprovides_tools:\n  - skyline_ago\n"
        "python_dependencies:\n  - \"humanize>=4,<5\"\n"
    ),
    "__init__.py": (
        "def _ago(args, **kwargs):\n"
        "    import datetime, humanize\n"
        "    return 'humanize %s: %s' % (humanize.__version__, humanize.naturaldelta(datetime.timedelta(seconds=90)))\n"
        "\n"
        "def register(ctx):\n"
        "    ctx.register_tool(name='skyline_ago', toolset='skyline', schema={'name': 'skyline_ago',"
        " 'description': 'How long ago', 'parameters': {'type': 'object', 'properties': {}}},"
        " handler=_ago)\n"
    ),
}

MEMORY_PLUGIN = {
    "memory/notes/plugin.yaml": "name: notes\nversion: 1.0.0\ndescription: A memory provider\n",
    "memory/notes/__init__.py": (
        "from agent.memory_provider import MemoryProvider\n\n"
        "class Notes(MemoryProvider):\n"
        "    @property\n"
        "    def name(self):\n"
        "        return 'notes'\n\n"
        "    def is_available(self):\n"
        "        return True\n\n"
        "    def initialize(self, session_id, **kwargs):\n"
        "        pass\n\n"
        "    def get_tool_schemas(self):\n"
        "        return []\n\n"
        "def register(ctx):\n"
        "    ctx.register_memory_provider(Notes())\n"
    ),
}

#: Started from the console script's interpreter: discovers plugins as Hermes does, prints
#: the user plugins, what the tool returns and whether the memory loader finds ``notes``;
#: on a line ``again`` on stdin, does it again (the process keeps its leased generation).
PROBE = r"""
import json, sys
from hermes_cli.plugins import discover_plugins, get_plugin_manager
from tools.registry import registry

def snapshot():
    import plugins.memory as memory
    discover_plugins(force=True)
    users = sorted(k for k, p in get_plugin_manager()._plugins.items() if p.manifest.source == "user")
    try:
        tool = registry.dispatch("skyline_ago", {})
    except Exception as error:
        tool = "error: %s" % error
    return {"plugins": users, "tool": tool, "notes": memory.find_provider_dir("notes") is not None}

print(json.dumps(snapshot()), flush=True)
if sys.stdin.readline().strip() == "again":
    print(json.dumps(snapshot()), flush=True)
"""


class Failed(Exception):
    pass


def run(command, env, check=True, stdin=subprocess.DEVNULL):
    done = subprocess.run(command, env=env, stdin=stdin, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise Failed(
            "%s exited %s\nstdout:\n%s\nstderr:\n%s"
            % (" ".join(map(str, command)), done.returncode, done.stdout, done.stderr)
        )
    return done


def expect(condition, what, seen):
    if not condition:
        raise Failed("%s\nseen:\n%s" % (what, seen))
    print("  ok:", what)


def git_repo(path: Path, files: dict) -> str:
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    for command in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                    ["git", "commit", "-q", "-m", "init"]):
        subprocess.run(command, cwd=path, env=env, check=True)
    return path.resolve().as_uri()


def startup(hermes: Path, env, runs: int) -> float:
    """Median wall time of ``hermes --version`` in milliseconds (one warm-up run first)."""
    times = []
    for i in range(runs + 1):
        started = time.perf_counter()
        run([hermes, "--version"], env)
        if i:
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, type=Path)
    parser.add_argument("--hermes", default="0.19.0")
    parser.add_argument("--make-venv", type=Path,
                        help="a script run as `SCRIPT VERSION VENV` that makes the Hermes venv")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    binary = args.bin.resolve()
    if not os.access(binary, os.X_OK):
        print("error: %s is not an executable" % binary, file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="hermes-without-wrapper-"))
    try:
        return scenario(binary, args, work)
    except Failed as failure:
        print("FAILED:", failure, file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def scenario(binary: Path, args, work: Path) -> int:
    venv = work / "venv"
    home = work / "home"
    home.mkdir()
    started = time.monotonic()
    if args.make_venv:
        print("== hermes-agent %s in a fresh venv (%s)" % (args.hermes, args.make_venv))
        run(["bash", args.make_venv, args.hermes, venv], os.environ)
    else:
        print("== hermes-agent %s from PyPI in a fresh venv" % args.hermes)
        run([sys.executable, "-m", "venv", venv], os.environ)
        run([venv / "bin/pip", "install", "--quiet", "--disable-pip-version-check",
             "hermes-agent==%s" % args.hermes], os.environ)
    print("  installed in %.0f s" % (time.monotonic() - started))
    python = venv / "bin/python"
    hermes = venv / "bin/hermes"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HERMES_", "PYTHON", "UV_INDEX", "VIRTUAL_ENV"))}
    env.update(HERMES_HOME=str(home), NO_COLOR="1", COLUMNS="200", HERMES_PLUGINS_CATALOG="none",
               PATH="%s:%s" % (venv / "bin", os.environ.get("PATH", "")))
    bare = run([python, "-c", "import humanize"], env, check=False)
    expect(bare.returncode != 0, "the Hermes venv itself has no humanize", bare.stderr)
    tool = [binary, "--home", home]

    print("== 1. Hermes as it is")
    without = startup(hermes, env, args.runs)
    before = run([hermes, "plugins", "list", "--plain"], env).stdout
    print("  hermes --version without the hook: median %.0f ms (%d runs)" % (without, args.runs))

    print("== 2. activate")
    doc = json.loads(run(tool + ["--json", "activate", "--python", python], env).stdout)
    expect(doc["active"] is True and doc["hermes"] == args.hermes, "activated", doc)
    empty = startup(hermes, env, args.runs)
    print("  hermes --version with the hook, nothing published: median %.0f ms" % empty)

    print("== 3. hermes plugins install (served by hermes-plugins)")
    url = git_repo(work / "skyline", TOOL_PLUGIN)
    done = run([hermes, "plugins", "install", url, "--enable", "--yes-deps"], env)
    listed = json.loads(run(tool + ["--json", "list"], env).stdout)
    expect(
        [(p["key"], p["status"].get("default")) for p in listed["plugins"]] == [("skyline", "enabled")],
        "published, enabled, resolved with the installed Hermes (%s)" % listed["core"],
        json.dumps(listed, indent=1) + done.stderr,
    )

    print("== 4. hermes plugins list")
    plain = run([hermes, "plugins", "list", "--plain", "--no-bundled"], env).stdout
    expect(any(line.split()[:2] == ["enabled", "hermes-plugins"] and line.endswith(" skyline")
               for line in plain.splitlines()), "Hermes's own list shows it", plain)

    print("== 5. a process of the console script's interpreter runs its tool")
    shebang = hermes.read_text().splitlines()[0][2:].strip()
    probe = work / "probe.py"
    probe.write_text(PROBE)
    seen = json.loads(run([shebang, probe], env).stdout.splitlines()[0])
    expect(seen["plugins"] == ["skyline"] and seen["tool"].startswith("humanize 4."),
           "discovered; its dependency comes from the generation", seen)

    print("== 6. a memory provider, and hermes memory status")
    memory = git_repo(work / "notes-repo", MEMORY_PLUGIN)
    run([hermes, "plugins", "install", memory + "#memory/notes", "--enable", "--yes-deps"], env)
    run([hermes, "config", "set", "memory.provider", "notes"], env)
    status = run([hermes, "memory", "status"], env).stdout
    expect("Provider:  notes" in status and "installed ✓" in status and "available ✓" in status,
           "hermes memory status shows the provider installed through hermes-plugins", status)

    print("== 7. rollback: new processes see the old set, a running one keeps its generation")
    running = subprocess.Popen([shebang, probe], env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = json.loads(running.stdout.readline() or "null")
    expect(first and first["notes"] and "skyline" in first["plugins"],
           "the running process sees both", first)
    run(tool + ["generations", "rollback"], env)
    status = run([hermes, "memory", "status"], env).stdout
    expect("NOT installed" in status, "a new hermes memory status: the provider is gone", status)
    again, errors = running.communicate("again\n", timeout=120)
    second = json.loads(again.splitlines()[0])
    expect(second == first, "the running process still sees its generation", (second, errors))

    with_hook = startup(hermes, env, args.runs)
    print("  hermes --version with the hook, a published home: median %.0f ms" % with_hook)

    print("== 9. deactivate")
    run(tool + ["deactivate", "--python", python], env)
    after = run([hermes, "plugins", "list", "--plain"], env).stdout
    expect(after == before, "hermes plugins list is Hermes's own again", after)

    print("start-up of `hermes --version` (median of %d): without the hook %.0f ms; with it, "
          "nothing published %.0f ms; with it, a published home %.0f ms"
          % (args.runs, without, empty, with_hook))
    return 0


if __name__ == "__main__":
    sys.exit(main())
