"""Which Hermes release an interpreter runs, found as Hermes itself finds it.

Prepended to the scripts hermes-plugins runs in an installed Hermes's interpreter
(``python -I -c``: ``activate``'s question, the installed core's facts). Standard library only,
and nothing of Hermes is imported: importing ``hermes_cli`` starts Hermes's own start-up work.

Hermes 0.22 (``hermes_cli/version_info.py``, ``hermes_cli/__init__.py``) takes its identity
from, in order:

1. the install stamp, ``install-stamp.json`` beside the source tree (or in
   ``$HERMES_INSTALL_ROOT``, where a Nix or desktop wrapper sets it): its ``baseVersion``,
   unless its ``commit`` is missing or all zeros (a placeholder);
2. in a git checkout, the newest stable ``vX.Y.Z`` tag merged into HEAD;
3. the distribution's own version.

Upstream's ``pyproject.toml`` says ``0.0.0`` since September 2026, so a source install's
``importlib.metadata.version("hermes-agent")`` is ``0.0.0`` and only steps 1–2 know the
release. A PyPI install (0.13.0 – 0.19.0) has no stamp and no ``.git``: step 3 is exact there.
"""

import json as _json
import os as _os
import re as _re
import subprocess as _subprocess

_STABLE_TAG = _re.compile(r"^v(?:0|[1-9]\d{0,2})\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)$")


def hermes_source_root():
    """The directory holding Hermes's top-level packages (``hermes_cli``'s parent), found
    without importing it; ``None`` when this interpreter has no Hermes."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("hermes_cli")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return _os.path.dirname(_os.path.realpath(list(spec.submodule_search_locations)[0]))


def _stamp_version(root):
    """``(version, stamp path)`` from the install stamp, or ``(None, stamp path)``."""
    base = _os.environ.get("HERMES_INSTALL_ROOT") or root
    path = _os.path.join(base, "install-stamp.json")
    try:
        with open(path, encoding="utf-8-sig") as f:
            data = _json.load(f)
    except (OSError, ValueError):
        return None, path
    if not isinstance(data, dict):
        return None, path
    commit = data.get("commit") or ""
    version = data.get("baseVersion")
    if not isinstance(commit, str) or not commit or set(commit) == {"0"}:
        return None, path
    if not isinstance(version, str) or not _STABLE_TAG.match("v" + version):
        return None, path
    # A checkout's stamp from before a pull no longer describes it (Hermes then asks git).
    if data.get("source") == "git" and _os.path.exists(_os.path.join(base, ".git")):
        if _git(base, "rev-parse", "HEAD") not in (None, commit):
            return None, path
    return version, path


def _git(root, *args):
    """What ``git ARGS`` prints in ``root``, or ``None``."""
    try:
        out = _subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              timeout=5, check=False)
    except (OSError, _subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _git_version(root):
    """The newest stable tag merged into the checkout's HEAD, or ``None``."""
    if not _os.path.exists(_os.path.join(root, ".git")):
        return None
    tags = [t[1:] for t in (_git(root, "tag", "--merged", "HEAD", "--list", "v[0-9]*") or "").split()
            if _STABLE_TAG.match(t)]
    if not tags:
        return None
    return max(tags, key=lambda v: tuple(int(p) for p in v.split(".")))


def hermes_version():
    """``{"version", "found_by", "files"}``: the release, how it was found (``install-stamp``,
    ``git``, ``metadata``), and the files the answer depends on (for a cache's stamps); or
    ``None`` when no ``hermes-agent`` is installed."""
    from importlib import metadata

    try:
        dist_version = metadata.version("hermes-agent")
    except metadata.PackageNotFoundError:
        return None
    root = hermes_source_root()
    files = []
    if root is not None:
        version, stamp = _stamp_version(root)
        files.append(stamp)
        if version is not None:
            return {"version": version, "found_by": "install-stamp", "files": files}
        git = _os.path.join(root, ".git")
        files.extend([git, _os.path.join(git, "HEAD"), _os.path.join(git, "packed-refs"),
                      _os.path.join(git, "refs", "tags"), _os.path.join(git, "refs", "heads")])
        version = _git_version(root)
        if version is not None:
            return {"version": version, "found_by": "git", "files": files}
    return {"version": dist_version, "found_by": "metadata", "files": files}
