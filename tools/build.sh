#!/usr/bin/env bash
# Configures and builds Tessera into a build directory (default: build/, Release).
# Usage: tools/build.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja "${launcher[@]}" "$@" >/dev/null
fi
ninja -C "$build" -j"$(nproc)" | grep -vE '^\[[0-9]+/[0-9]+\]' || true
test "${PIPESTATUS[0]}" -eq 0
