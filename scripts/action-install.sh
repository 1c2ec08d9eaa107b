#!/usr/bin/env bash
# Installs hermes-plugins for the catalog reviewers' action (action.yml), from what exists:
#
#   1. the release of the action's ref (`uses: OWNER/REPO@v0.1.0`): the release workflow
#      attaches every wheel and `wheels.txt`, their names; pip picks the one wheel for this
#      platform from a find-links page of their URLs (downloading that one only) — nothing
#      comes from PyPI;
#   2. no release of that ref (a branch or a commit): the binary built from the action's own
#      checkout with cargo (the workflow caches its target directory).
#
# Usage: action-install.sh check   → `release=true|false` in $GITHUB_OUTPUT
#        action-install.sh install → the binary in $INSTALL_DIR/bin (Scripts\ on Windows, whose
#                                    venvs have that layout), added to $GITHUB_PATH
#
# Inputs (environment): ACTION_REPOSITORY (owner/repo), ACTION_REF (tag, branch or commit),
# ACTION_PATH (the action's checkout), RELEASES_BASE (default https://github.com; tests serve
# a release from loopback), INSTALL_DIR (default $RUNNER_TEMP/hermes-plugins), PYTHON
# (default python3, or python where there is none: Windows runners), GITHUB_OUTPUT and
# GITHUB_PATH (set by Actions).
set -euo pipefail

mode=${1:-install}
repository=${ACTION_REPOSITORY:?ACTION_REPOSITORY is required (owner/repo)}
ref=${ACTION_REF:?ACTION_REF is required}
action_path=${ACTION_PATH:?ACTION_PATH is required}
base=${RELEASES_BASE:-https://github.com}
install_dir=${INSTALL_DIR:-${RUNNER_TEMP:-/tmp}/hermes-plugins}
python=${PYTHON:-$(command -v python3 >/dev/null && echo python3 || echo python)}
release_url="$base/$repository/releases/download/$ref"

# The release's wheel names, one per line, each checked to be a wheel of this project (the
# list is data from the network: nothing else reaches the find-links page).
release_wheels() {
  local list
  list=$(curl -fsSL --retry 2 --max-time 60 "$release_url/wheels.txt" 2>/dev/null) || return 1
  printf '%s\n' "$list" | tr -d '\r' | grep -E '^hermes_plugins-[A-Za-z0-9_.+!-]+\.whl$' || return 1
}

case $mode in
  check)
    if release_wheels >/dev/null; then has=true; else has=false; fi
    echo "release=$has" >> "${GITHUB_OUTPUT:-/dev/stdout}"
    ;;
  install)
    rm -rf "$install_dir"
    "$python" -m venv "$install_dir"
    # A venv's programs are in bin/ on Unix, Scripts\ (with .exe) on Windows.
    bin=bin exe=
    if [ -d "$install_dir/Scripts" ]; then bin=Scripts exe=.exe; fi
    if wheels=$(release_wheels); then
      echo "hermes-plugins: the $ref release of $repository"
      page="$install_dir/release-wheels.html"
      {
        echo "<!DOCTYPE html><html><body>"
        while read -r wheel; do echo "<a href=\"$release_url/$wheel\">$wheel</a>"; done <<< "$wheels"
        echo "</body></html>"
      } > "$page"
      "$install_dir/$bin/python$exe" -m pip install --disable-pip-version-check --quiet --no-index --find-links "$page" hermes-plugins
    else
      echo "hermes-plugins: $repository has no release $ref; building the action's checkout"
      command -v cargo >/dev/null || { echo "error: no release $ref and no cargo to build it: pin the action to a release tag" >&2; exit 1; }
      target=${CARGO_TARGET_DIR:-$action_path/target}
      CARGO_TARGET_DIR="$target" cargo build --release --locked --manifest-path "$action_path/Cargo.toml"
      cp "$target/release/hermes-plugins$exe" "$install_dir/$bin/hermes-plugins$exe"
    fi
    "$install_dir/$bin/hermes-plugins$exe" --version
    echo "$install_dir/$bin" >> "${GITHUB_PATH:-/dev/null}"
    ;;
  *)
    echo "usage: $0 check|install" >&2
    exit 2
    ;;
esac
