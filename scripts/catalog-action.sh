#!/usr/bin/env bash
# The catalog reviewer's pull-request job (run by action.yml; runnable anywhere with git):
#   1. `catalog check --format sarif` of the whole catalog → $OUT/catalog.sarif (for
#      github/codeql-action/upload-sarif);
#   2. `catalog review` of every entry the head adds or changes against the base ref →
#      Markdown in $OUT/review.md (for a PR comment) and in $GITHUB_STEP_SUMMARY;
#   3. `catalog resolve-all` → GitHub annotations on stdout (and in the step summary).
# Exits 1 when any of them found a problem, after running all three.
#
# Inputs (environment): CATALOG (directory, default `catalog`), BASE_REF (git ref or commit
# of the pull request's base; empty: every entry is reviewed as added), CORE (passed to
# `--core`; empty: resolve-all is skipped), FORMAT (`markdown` or `json` for the review,
# default markdown), OUT (default `hermes-plugins-review`), HERMES_PLUGINS_BIN (default
# `hermes-plugins` on PATH), GITHUB_STEP_SUMMARY and GITHUB_OUTPUT (set by Actions).
set -uo pipefail

catalog=${CATALOG:-catalog}
base=${BASE_REF:-}
core=${CORE:-}
format=${FORMAT:-markdown}
out=${OUT:-hermes-plugins-review}
bin=${HERMES_PLUGINS_BIN:-hermes-plugins}
summary=${GITHUB_STEP_SUMMARY:-/dev/null}

case $format in markdown|json) ;; *) echo "error: FORMAT must be markdown or json, not $format" >&2; exit 2 ;; esac
[ -d "$catalog" ] || { echo "error: the catalog $catalog is not a directory" >&2; exit 2; }
mkdir -p "$out" || exit 2
failed=0

# 1. The whole catalog, as SARIF.
"$bin" catalog check --format sarif "$catalog" > "$out/catalog.sarif"
status=$?
case $status in
  0) ;;
  1) failed=1 ;;
  *) echo "error: catalog check exited $status" >&2; exit "$status" ;;
esac
[ "$status" -eq 0 ] || "$bin" catalog check --format github "$catalog"

# 2. The entries the pull request adds or changes.
changed=$(mktemp)
if [ -n "$base" ]; then
  merge_base=$(git merge-base "$base" HEAD) || { echo "error: no merge base between $base and HEAD" >&2; exit 2; }
  git diff --name-only --diff-filter=AM "$merge_base" HEAD -- "$catalog" > "$changed" || exit 2
else
  merge_base=""
  git ls-files -- "$catalog" > "$changed" || exit 2
fi
review="$out/review.$( [ "$format" = json ] && echo json || echo md )"
: > "$review"
reviewed=0
while IFS= read -r entry; do
  case $entry in *.yaml|*.yml) ;; *) continue ;; esac
  [ "$(basename "$entry")" = removed.yaml ] && continue
  [ "$(basename "$entry" | cut -c1)" = . ] && continue
  args=(catalog review --format "$format" "$entry")
  old=""
  if [ -n "$merge_base" ] && git cat-file -e "$merge_base:$entry" 2>/dev/null; then
    old=$(mktemp --suffix=.yaml)
    git show "$merge_base:$entry" > "$old"
    args+=(--base "$old")
  fi
  "$bin" "${args[@]}" >> "$review"
  status=$?
  [ -n "$old" ] && rm -f "$old"
  case $status in
    0) ;;
    1) failed=1 ;;
    *) echo "error: catalog review of $entry exited $status" >&2; failed=1 ;;
  esac
  [ "$format" = markdown ] && printf '\n' >> "$review"
  reviewed=$((reviewed + 1))
done < "$changed"
rm -f "$changed"
if [ "$reviewed" -eq 0 ] && [ "$format" = markdown ]; then
  echo "No catalog entry was added or changed." > "$review"
fi
[ "$format" = markdown ] && cat "$review" >> "$summary"

# 3. Every entry resolved with core.
if [ -n "$core" ]; then
  "$bin" catalog resolve-all --format github --core "$core" "$catalog" | tee "$out/resolve-all.txt"
  status=${PIPESTATUS[0]}
  case $status in
    0) ;;
    1) failed=1 ;;
    *) echo "error: catalog resolve-all exited $status" >&2; failed=1 ;;
  esac
  if [ -s "$out/resolve-all.txt" ]; then
    { echo; echo '### catalog resolve-all'; echo; echo '```'; cat "$out/resolve-all.txt"; echo '```'; } >> "$summary"
  fi
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  { echo "sarif=$out/catalog.sarif"; echo "review=$review"; echo "reviewed=$reviewed"; } >> "$GITHUB_OUTPUT"
fi
echo "hermes-plugins: $reviewed entr$( [ "$reviewed" -eq 1 ] && echo y || echo ies) reviewed; SARIF in $out/catalog.sarif, review in $review" >&2
exit "$failed"
