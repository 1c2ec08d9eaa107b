"""``python -m hermes_plugins ARGS``: runs the installed binary with ARGS."""

import os
import sys

from hermes_plugins import find_bin


def main():
    binary = find_bin()
    if sys.platform == "win32":
        import subprocess

        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
