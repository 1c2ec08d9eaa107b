#!/usr/bin/env python3
"""Generates src/known/hermes_environments.json: what a plugin of each Hermes release can import
without declaring it — the standard library of its Python, and the top-level modules of a real Hermes install of that release (its
site-packages: Hermes's own packages and every distribution its requirements brought), for the
per-release import judgement of ``validate`` (a plugin importing ``yaml`` loads on 0.19.0, whose
requirements bring PyYAML, and fails on 0.22.2, whose do not).

Each release is a venv made by ``../shared/hermes/make-hermes-venv.sh VERSION VENV`` (0.13.0 –
0.19.0 from PyPI; 0.22.2 the MIT packaging fork of upstream v0.22.2), or any venv holding that
release — nothing is imported from it, its site-packages are listed:

    python3 scripts/hermes_environments.py --venv 0.19.0=VENV --venv 0.22.2=VENV
    python3 scripts/hermes_environments.py --make ../shared/hermes/make-hermes-venv.sh 0.19.0 0.22.2
    python3 scripts/hermes_environments.py --check     # the committed file parses and is sorted

A release given again replaces its entry; the others are kept. Releases read from source only
(0.23.x, main: they need Python 3.14) have no entry: ``validate`` says their imports were not
judged. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "src" / "known" / "hermes_environments.json"

# Run inside the release's interpreter (-I): its site-packages' top-level modules and its
# distributions. Nothing of Hermes is imported.
LIST = r"""
import json, pkgutil, sys, sysconfig
from importlib import metadata
paths = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
modules = sorted({m.name for m in pkgutil.iter_modules(paths)
                  if not m.name.startswith("_") or m.name in ("_yaml",)})
dists = sorted({"%s==%s" % (d.metadata["Name"], d.version) for d in metadata.distributions()
                if d.metadata["Name"]})
print(json.dumps({"python": "%d.%d" % sys.version_info[:2], "modules": modules,
                  "distributions": dists,
                  "stdlib": sorted(set(sys.stdlib_module_names) | set(sys.builtin_module_names))}))
"""


def listed(venv: Path) -> dict:
    python = venv / "bin" / "python"
    out = subprocess.run([str(python), "-I", "-c", LIST], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout)


def version_key(v: str) -> tuple:
    return tuple(int(p) for p in v.split(".") if p.isdigit())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", action="append", default=[], metavar="VERSION=VENV")
    parser.add_argument("--make", type=Path, metavar="SCRIPT",
                        help="make each VERSION's venv with SCRIPT VERSION VENV")
    parser.add_argument("versions", nargs="*", help="with --make: the releases to make")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    current = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {
        "generated_by": "scripts/hermes_environments.py", "releases": {}}
    if args.check:
        releases = current["releases"]
        ok = list(releases) == sorted(releases, key=version_key) and all(
            r["modules"] == sorted(r["modules"]) and r["python"] in current.get("stdlib", {})
            for r in releases.values())
        print("ok" if ok else f"{OUT} is not as the script writes it", file=sys.stderr)
        return 0 if ok else 1
    venvs: dict[str, Path] = {}
    for item in args.venv:
        version, _, path = item.partition("=")
        if not path:
            parser.error(f"--venv takes VERSION=VENV, not {item!r}")
        venvs[version] = Path(path)
    with tempfile.TemporaryDirectory() as tmp:
        for version in args.versions:
            if args.make is None:
                parser.error("releases to make need --make SCRIPT")
            venv = Path(tmp, version)
            subprocess.run(["bash", str(args.make), version, str(venv)], check=True)
            venvs[version] = venv
        for version, venv in venvs.items():
            entry = listed(venv)
            # The standard library's modules, once per Python version (every release's own).
            current.setdefault("stdlib", {})[entry["python"]] = entry.pop("stdlib")
            current["releases"][version] = entry
            print(f"{version}: Python {entry['python']}, {len(entry['modules'])} modules, "
                  f"{len(entry['distributions'])} distributions", file=sys.stderr)
    current["stdlib"] = dict(sorted(current.get("stdlib", {}).items()))
    current["releases"] = dict(sorted(current["releases"].items(), key=lambda kv: version_key(kv[0])))
    OUT.write_text(json.dumps(current, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
