#!/usr/bin/env bash
# Before tagging a release: build here what the release workflow builds elsewhere, as far as
# these machines can — the Linux aarch64 manylinux wheel and a static x86_64 musl binary,
# both cross-built with maturin and zig — run each on the fixtures (aarch64 under qemu-user)
# and require byte for byte the `validate --format json` report of the native build. Prints
# the wheel sizes. Needs: rustup targets aarch64-unknown-linux-gnu and
# x86_64-unknown-linux-musl, Debian's qemu-user and libc6-arm64-cross, PyPI (maturin,
# ziglang). A maintainer runs it; CI does not (it takes two full release builds).
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

step "tools"
rustup target add aarch64-unknown-linux-gnu x86_64-unknown-linux-musl >/dev/null
if [ ! -x "$tools/bin/maturin" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check maturin==1.16.0 ziglang==0.17.1
fi
command -v qemu-aarch64 >/dev/null || { echo "error: qemu-aarch64 missing (Debian: qemu-user)" >&2; exit 1; }
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || { echo "error: the aarch64 C library is missing (Debian: libc6-arm64-cross)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"

step "aarch64 manylinux_2_28 wheel (zig)"
# 64 KiB jemalloc pages serve 4, 16 and 64 KiB page kernels (the release workflow does the same).
JEMALLOC_SYS_WITH_LG_PAGE=16 CARGO_TARGET_DIR="$target_dir" PATH="$tools/bin:$PATH" \
  maturin build --release --locked --zig --target aarch64-unknown-linux-gnu \
  --compatibility manylinux_2_28 --out "$out/aarch64"
step "x86_64 musllinux wheel, a static binary (zig)"
CARGO_TARGET_DIR="$target_dir" PATH="$tools/bin:$PATH" \
  maturin build --release --locked --zig --target x86_64-unknown-linux-musl --out "$out/musl"

# The binary inside each wheel.
unpack() {
  local wheel dir=$2
  wheel=$(ls "$1"/hermes_plugins-*.whl)
  mkdir -p "$dir"
  python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name = next(n for n in z.namelist() if n.endswith("/scripts/hermes-plugins"))
open(sys.argv[2], "wb").write(z.read(name))' "$wheel" "$dir/hermes-plugins"
  chmod +x "$dir/hermes-plugins"
  echo "$(basename "$wheel"): $(du -h "$wheel" | cut -f1)"
}
step "wheel sizes"
unpack "$out/aarch64" "$out/bin-aarch64"
unpack "$out/musl" "$out/bin-musl"
file "$out/bin-aarch64/hermes-plugins" "$out/bin-musl/hermes-plugins"
file "$out/bin-musl/hermes-plugins" | grep -q 'statically linked' || { echo "error: the musl binary is not static" >&2; exit 1; }

step "the same report on the fixtures: native, aarch64 (qemu), musl"
# The native build last: a CI run sharing its target directory may still be producing it.
[ -x "$native" ] || cargo build --locked --release
fixtures=(fixtures/plugins fixtures/bad-native fixtures/portable fixtures/ctx-calls fixtures/pip)
report() { HERMES_PLUGINS_CATALOG=none "$@" validate --no-cache --format json "${fixtures[@]}" || true; }
report "$native" > "$out/native.json"
report qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/bin-aarch64/hermes-plugins" > "$out/aarch64.json"
report "$out/bin-musl/hermes-plugins" > "$out/musl.json"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("native report:", r["summary"])' "$out/native.json"
cmp "$out/native.json" "$out/aarch64.json" && echo "aarch64 (qemu): the native report, byte for byte"
cmp "$out/native.json" "$out/musl.json" && echo "musl (static): the native report, byte for byte"
step "ok"
