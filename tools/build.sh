#!/usr/bin/env bash
# Configures and builds Tessera into a build directory (default: build/, Release).
# Usage: tools/build.sh [BUILD_DIR] [extra cmake args...] ; TESSERA_BUILD_TARGETS limits targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja "${launcher[@]}" "$@" >/dev/null
fi
# Progress lines ([12/345] ...) are dropped; warnings, errors and the summary stay.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086
if ! ninja -C "$build" -j"$(nproc)" ${TESSERA_BUILD_TARGETS:-} >"$log" 2>&1; then
  grep -vE '^\[[0-9]+/[0-9]+\] ' "$log" | tail -n 200
  echo "build failed in $build" >&2
  exit 1
fi
grep -vE '^\[[0-9]+/[0-9]+\] |^ninja: (Entering|no work)' "$log" || true
