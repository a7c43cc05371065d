#!/usr/bin/env bash
# Checks that every C and C++ source in the repository is formatted as
# .clang-format says (LLVM style), with the clang-format of the toolchain
# (clang-format-22: another version formats differently). Prints the files
# that are not and exits 1; `--fix` formats them instead.
#   scripts/check_format.sh [--fix]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
format="${CLANG_FORMAT:-/usr/lib/llvm-22/bin/clang-format}"
if [ ! -x "$format" ]; then
  echo "error: $format not found (scripts/install-deps.sh installs clang-format-22)"
  exit 1
fi
cd "$root"
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' | grep -v '/Inputs/')
if [ "${1:-}" = "--fix" ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$format" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "format: $f is not formatted (scripts/check_format.sh --fix)"
    bad=$((bad + 1))
  fi
done
echo "format: ${#files[@]} files, $bad not formatted"
[ "$bad" -eq 0 ]
