#!/bin/sh
# Minimises what fuzzing found into the corpus kept in the repository, fuzz/kept/<target>/:
# libFuzzer's merge keeps the smallest set of inputs that covers every feature of the kept
# corpus plus the grown one (fuzz/corpus/<target>/, not committed). run.sh reads the kept
# corpus as a second corpus directory, so every run starts where the last kept one ended.
#   fuzz/keep.sh                                  # every target (after fuzz/run.sh built them)
#   HERMES_PLUGINS_FUZZ_TARGETS="nar catalog" fuzz/keep.sh
# Inputs named regression-* are kept as they are. Inputs over 16 KiB are left out of the kept corpus: they are nearly all whole plugin trees
# seeded from fixtures/ and ../shared/corpus, which run.sh seeds again on every run, and
# they would be most of its size.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target_dir=${HERMES_PLUGINS_FUZZ_TARGET_DIR:-$HOME/.cache/hermes-plugins/fuzz-target}
bin="$target_dir/x86_64-unknown-linux-gnu/release"
all="located_yaml located_json config_edit env_file package catalog state_docs nar register security_bytes"
targets=${HERMES_PLUGINS_FUZZ_TARGETS:-$all}
cd "$here"
for target in $targets; do
  [ -x "$bin/$target" ] || { echo "$target is not built: run fuzz/run.sh first" >&2; exit 2; }
  mkdir -p "kept/$target" "corpus/$target"
  fresh=$(mktemp -d)
  "$bin/$target" -merge=1 -timeout=10 -rss_limit_mb=4096 "$fresh" "kept/$target" "corpus/$target" \
    > "$fresh.log" 2>&1 || { cat "$fresh.log" >&2; rm -rf "$fresh" "$fresh.log"; exit 1; }
  find "$fresh" -type f -size +16k -delete
  # Inputs that once failed (`regression-*`, copied from artifacts/ by hand) stay as they are
  # whether or not they add coverage: the smoke run in CI replays them.
  find "kept/$target" -maxdepth 1 -type f -name 'regression-*' -exec cp {} "$fresh/" \;
  rm -rf "kept/$target"
  mv "$fresh" "kept/$target"
  chmod 755 "kept/$target"
  echo "$target: $(ls "kept/$target" | wc -l) inputs, $(du -sh "kept/$target" | cut -f1)"
  rm -f "$fresh.log"
done
