#!/bin/sh
# Runs every fuzz target for MINUTES each (default 1) with cargo fuzz on the nightly toolchain,
# seeded from fixtures/ and ../shared/corpus. Crashes land in fuzz/artifacts/<target>/ (turn
# each into a regression test); the corpus grows in fuzz/corpus/<target>/.
#   fuzz/run.sh 60          # an hour per target
#   HERMES_PLUGINS_FUZZ_TARGETS="config_edit env_file" fuzz/run.sh 5
set -eu
minutes=${1:-1}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
target_dir=${HERMES_PLUGINS_FUZZ_TARGET_DIR:-$HOME/.cache/hermes-plugins/fuzz-target}
targets=${HERMES_PLUGINS_FUZZ_TARGETS:-"located_yaml located_json config_edit env_file"}

# seed TARGET PREFIX FIND-EXPRESSION...: files under fixtures/ and the shared corpus matching
# the expression, each with PREFIX (a byte some targets read first) in front.
seed() {
  name=$1 prefix=$2
  shift 2
  dir="$here/corpus/$name"
  mkdir -p "$dir"
  find "$repo/fixtures" "$repo/../shared/corpus" -type f -size -64k \( "$@" \) 2>/dev/null |
    while read -r file; do
      out="$dir/seed-$(sha256sum "$file" | cut -c1-16)"
      [ -e "$out" ] || { printf '%b' "$prefix"; cat "$file"; } > "$out"
    done
}

cd "$here"
status=0
for target in $targets; do
  case $target in
    located_yaml) seed "$target" "" -name '*.yaml' -o -name '*.yml' ;;
    located_json) seed "$target" "" -name '*.json' ;;
    config_edit) seed "$target" '\000' -name 'config.yaml' -o -name '*.yaml' ;;
    env_file) seed "$target" 'va"l${ue\001' -name '.env' -o -name '*.env' ;;
  esac
  mkdir -p "artifacts/$target"
  echo "== $target: $minutes min"
  # A crash ends that target's run; the others still run, and the script fails at the end.
  cargo +nightly fuzz run --target-dir "$target_dir" "$target" "corpus/$target" -- \
    -max_total_time=$((minutes * 60)) -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="artifacts/$target/" -print_final_stats=1 || status=1
done
exit $status
