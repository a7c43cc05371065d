#!/usr/bin/env bash
# clang-tidy (the checks of .clang-tidy) over Loom's C++ sources.
#
#   scripts/tidy.sh                   files changed against HEAD (staged,
#                                     unstaged and new), before a commit
#   scripts/tidy.sh --since REV       files changed since REV (a branch's work)
#   scripts/tidy.sh --all             every source file (minutes per file
#                                     batch: MLIR's headers are heavy)
#   scripts/tidy.sh FILE...           those files
#
# Needs clang-tidy-22 (apt-get install clang-tidy-22) and a configured build
# (its compile_commands.json; LOOM_BUILD_DIR, default build). Exits non-zero
# when any file has a finding.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${LOOM_BUILD_DIR:-$root/build}"
tidy=/usr/lib/llvm-22/bin/clang-tidy
[ -x "$tidy" ] || { echo "tidy: $tidy not found (apt-get install clang-tidy-22)"; exit 2; }
[ -f "$build/compile_commands.json" ] ||
  { echo "tidy: no $build/compile_commands.json (configure the build first)"; exit 2; }
cd "$root"

sources='^(lib|tools|runtime/src|runtime/tools|runtime/tests|test/lib|test/Fuzz)/.*\.(cpp|c)$'
case "${1:-}" in
  --all) files=$(git ls-files | grep -E "$sources" || true) ;;
  --since) files=$(git diff --name-only --diff-filter=d "$2" -- | grep -E "$sources" || true) ;;
  "") files=$( (git diff --name-only --diff-filter=d HEAD; git ls-files --others --exclude-standard) |
           sort -u | grep -E "$sources" || true) ;;
  *) files="$*" ;;
esac
if [ -z "$files" ]; then
  echo "tidy: no C++ files to check"
  exit 0
fi
count=$(echo "$files" | wc -l)
echo "tidy: $count file(s)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Two at a time; --quiet leaves only the findings.
echo "$files" | xargs -P 2 -n 1 "$tidy" -p "$build" --quiet 2>/dev/null |
  tee "$log" | grep -E 'warning:|error:' || true
findings=$(grep -cE 'warning:|error:' "$log" || true)
echo "tidy: $findings finding(s)"
[ "$findings" = 0 ]
