"""The hermes-plugins binary, installed from PyPI.

``find_bin()`` gives the path of the ``hermes-plugins`` executable this package installed;
``python -m hermes_plugins ARGS`` runs it. :mod:`hermes_plugins.generation` reads a
published generation (standard library only).
"""

import os
import sys
import sysconfig

__all__ = ["find_bin"]

NAME = "hermes-plugins" + (".exe" if sys.platform == "win32" else "")


def _user_scheme():
    if hasattr(sysconfig, "get_preferred_scheme"):  # Python 3.10+
        return sysconfig.get_preferred_scheme("user")
    return "nt_user" if os.name == "nt" else "posix_user"


def find_bin():
    """The path of the installed ``hermes-plugins`` executable.

    Looks where pip and uv put scripts (the environment's, the user's, and beside this
    package for ``--prefix`` installs); raises ``FileNotFoundError`` naming every place.
    """
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.path.join(sysconfig.get_path("scripts"), NAME),
        os.path.join(sysconfig.get_path("scripts", _user_scheme()), NAME),
        # <prefix>/lib/pythonX.Y/site-packages/hermes_plugins -> <prefix>/bin
        os.path.normpath(os.path.join(here, "..", "..", "..", "..", "bin", NAME)),
    ]
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        "the hermes-plugins executable is not installed; looked in: " + ", ".join(candidates)
    )
