#!/bin/sh
# Runs every fuzz target for a while each with cargo fuzz on the nightly toolchain, seeded from
# fixtures/, ../shared/corpus, fuzz/seeds and fuzz/findings/<target>-regression-* (the inputs
# a target failed on). Crashes land in fuzz/artifacts/<target>/ (turn each into a regression
# test and copy it to fuzz/findings/<target>-regression-<what>). The corpus lives outside the
# repository, in $HERMES_PLUGINS_FUZZ_CORPUS/<target>/ (default ~/.cache/hermes-plugins/fuzz-corpus): each
# run grows it, then minimises it with libFuzzer's merge (the smallest set of inputs covering
# every feature).
#   fuzz/run.sh 60          # an hour per target
#   fuzz/run.sh 20s         # twenty seconds per target (the smoke run .ci/run does)
#   HERMES_PLUGINS_FUZZ_TARGETS="config_edit env_file" fuzz/run.sh 5
#   HERMES_PLUGINS_FUZZ_CORPUS=DIR HERMES_PLUGINS_FUZZ_MINIMISE=0 fuzz/run.sh 15s
# The library is built without its `manager` feature (no uv, no git2): a cold build takes
# minutes, not the half hour the whole crate takes under AddressSanitizer.
set -eu
time=${1:-1}
case $time in
  *s) seconds=${time%s} ;;
  *) seconds=$((time * 60)) ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
target_dir=${HERMES_PLUGINS_FUZZ_TARGET_DIR:-$HOME/.cache/hermes-plugins/fuzz-target}
corpus=${HERMES_PLUGINS_FUZZ_CORPUS:-$HOME/.cache/hermes-plugins/fuzz-corpus}
bin="$target_dir/x86_64-unknown-linux-gnu/release"
all="located_yaml located_json config_edit env_file package catalog state_docs nar register security_bytes"
targets=${HERMES_PLUGINS_FUZZ_TARGETS:-$all}
sources="$repo/fixtures $repo/../shared/corpus"

# seed TARGET PREFIX FIND-EXPRESSION...: files under the sources matching the expression, each
# with PREFIX (a byte some targets read first) in front.
seed() {
  name=$1 prefix=$2
  shift 2
  dir="$corpus/$name"
  mkdir -p "$dir"
  # What the target failed on once is replayed as it is (`<target>-regression-*`; a slow unit
  # such as `config_edit-slow-unit-*` is replayed by its unit test, not under the fuzzer's
  # timeout).
  find "$here/findings" -maxdepth 1 -type f -name "$name-regression-*" -exec cp {} "$dir/" \;
  find $sources "$here/seeds/$name" -type f -size -64k \( "$@" \) 2>/dev/null |
    while read -r file; do
      out="$dir/seed-$(printf '%s' "$prefix" | cat - "$file" | sha256sum | cut -c1-16)"
      [ -e "$out" ] || { printf '%b' "$prefix"; cat "$file"; } > "$out"
    done
}

# seed_trees: every plugin directory as one input in fuzz_targets/tree.rs's format — its text
# files (under 32 KiB, at most 4 deep), each after a `#%% <path>` line.
seed_trees() {
  dir="$corpus/package"
  mkdir -p "$dir"
  find $sources -maxdepth 6 \( -name plugin.yaml -o -name plugin.yml -o -name plugin.json \) \
    -not -path '*/.claude-plugin/*' 2>/dev/null | while read -r manifest; do
    plugin=$(dirname "$manifest")
    tmp=$(mktemp)
    (cd "$plugin" && find . -mindepth 1 -maxdepth 4 -type f -size -32k | sort | while read -r f; do
      grep -Iq . "$f" 2>/dev/null || continue
      printf '#%%%% %s\n' "${f#./}"
      cat "$f"
      [ -z "$(tail -c1 "$f")" ] || echo
    done) > "$tmp"
    out="$dir/seed-$(sha256sum "$tmp" | cut -c1-16)"
    if [ -s "$tmp" ] && [ ! -e "$out" ]; then mv "$tmp" "$out"; else rm -f "$tmp"; fi
  done
}

# A small tree for the NAR target: a directory entered, files (one executable), a symlink.
seed_nar() {
  mkdir -p "$corpus/nar"
  printf '\013pkg\000\000\000plugin.yaml\000name: x\n\000\001run.sh\000#!/bin/sh\n\000\002link\000../plugin.yaml\000\023top\000\000' \
    > "$corpus/nar/seed-tree"
}

cd "$here"
status=0
for target in $targets; do
  case $target in
    located_yaml) seed "$target" "" -name '*.yaml' -o -name '*.yml' ;;
    located_json) seed "$target" "" -name '*.json' ;;
    config_edit) seed "$target" '\000' -name 'config.yaml' -o -name '*.yaml' ;;
    env_file) seed "$target" 'va"l${ue\001' -name '.env' -o -name '*.env' ;;
    package) seed_trees ;;
    catalog)
      seed "$target" '\000' -path '*/catalog/*' -name '*.yaml' -not -name removed.yaml
      seed "$target" '\001' -name removed.yaml ;;
    state_docs)
      seed "$target" '\000' -name generation.json
      seed "$target" '\001' -name installed.json
      seed "$target" '\002' -name lock.json ;;
    nar) seed_nar ;;
    register) seed "$target" "" -name '__init__.py' ;;
    security_bytes) seed "$target" "" -name '*.sh' -o -name '*.py' -o -name '*.js' ;;
    *) echo "unknown fuzz target $target (known: $all)" >&2; exit 2 ;;
  esac
  mkdir -p "artifacts/$target"
  echo "== $target: ${seconds}s"
  # A crash ends that target's run; the others still run, and the script fails at the end.
  cargo +nightly fuzz run --target-dir "$target_dir" "$target" "$corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="artifacts/$target/" -print_final_stats=1 || { status=1; continue; }
  # Minimised in place: a fresh directory gets the smallest covering set, then replaces it
  # (HERMES_PLUGINS_FUZZ_MINIMISE=0 skips it: the CI smoke run adds little to merge).
  [ "${HERMES_PLUGINS_FUZZ_MINIMISE:-1}" = 1 ] || continue
  fresh=$(mktemp -d "$corpus/.merge-$target.XXXXXX")
  if "$bin/$target" -merge=1 -timeout=10 -rss_limit_mb=4096 "$fresh" "$corpus/$target" \
       > "$fresh.log" 2>&1; then
    echo "== $target: corpus minimised to $(find "$fresh" -type f | wc -l) inputs"
    rm -rf "$corpus/$target" && mv "$fresh" "$corpus/$target"
  else
    tail -n 20 "$fresh.log" >&2
    rm -rf "$fresh"
    status=1
  fi
  rm -f "$fresh.log"
done
exit $status
