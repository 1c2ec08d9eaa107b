"""Compares the `validate --format json` report of the Windows build (run under Wine) with the
native one: every package must be reported the same, except packages that contain a Unix
symbolic link, which Wine shows to Windows programs as the file or directory it points to
(so the Windows build cannot see the link there; on Windows itself a link is a link).

Usage: compare-reports.py NATIVE.json WINDOWS.json  (paths in the reports relative to the cwd)
"""

import json
import os
import sys


def has_link(path):
    for root, dirs, files in os.walk(path):
        if any(os.path.islink(os.path.join(root, name)) for name in dirs + files):
            return True
    return False


native, windows = (json.load(open(p)) for p in sys.argv[1:3])
by_path = {p["path"]: p for p in windows["packages"]}
same, skipped, differ = 0, [], []
for package in native["packages"]:
    path = package["path"]
    if has_link(path):
        skipped.append(path)
        continue
    if json.dumps(package, sort_keys=True) == json.dumps(by_path.get(path), sort_keys=True):
        same += 1
    else:
        differ.append(path)
extra = sorted(set(by_path) - {p["path"] for p in native["packages"]})
links = ", ".join(skipped) or "none"
print(f"windows (wine): the native report for {same} packages; not compared (Unix links): {links}")
if differ or extra:
    print(f"differ: {differ}; only on windows: {extra}", file=sys.stderr)
    sys.exit(1)
