#!/usr/bin/env bash
# Configures (once) and builds Loom incrementally in ./build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${LOOM_BUILD_DIR:-$root/build}"
export CCACHE_BASEDIR="$root"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@"
fi
# Targets are a space-separated list.
# shellcheck disable=SC2086
ninja -C "$build" ${LOOM_BUILD_TARGETS:-all}
