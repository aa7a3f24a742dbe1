#!/usr/bin/env bash
# Configures and builds Tessera into a build directory (default: build/, Release).
# Usage: tools/build.sh [BUILD_DIR] [extra cmake args...] ; TESSERA_BUILD_TARGETS limits targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Configure every time (a second or two): a tool installed after the first configure (the aarch64
# cross tools, OpenCL, Python) registers its suites now instead of staying NOTFOUND in the cache.
# The summary shows which optional suites are registered and, for the others, what they need.
if ! cmake -S "$root" -B "$build" -G Ninja "${launcher[@]}" "$@" >"$log" 2>&1; then
  cat "$log"
  echo "configure failed in $build" >&2
  exit 1
fi
echo "configure: $build"
grep -E '^-- (suite |.*plugin|OpenCL)' "$log" | sed 's/^-- /  /' || true
grep -iE 'warning|error' "$log" || true
# Progress shows as one line per 10% of the build steps ("build: 120/410 steps (29%)"), so a
# first build of several minutes is not silent; ninja's own step lines go to the log, which is
# shown (warnings and errors) afterwards or on failure.
progress() {
  awk -v shown=-1 '/^\[[0-9]+\/[0-9]+\] / {
         split(substr($1, 2), f, "/"); step = int(100 * f[1] / f[2] / 10) * 10
         if (step > shown) { printf "  build: %d/%d steps (%d%%)\n", f[1], f[2], step; shown = step
                             fflush() } }'
}
# shellcheck disable=SC2086
if ! ninja -C "$build" -j"$(nproc)" ${TESSERA_BUILD_TARGETS:-} 2>&1 | tee "$log" | progress; then
  grep -vE '^\[[0-9]+/[0-9]+\] ' "$log" | tail -n 200
  echo "build failed in $build" >&2
  exit 1
fi
grep -vE '^\[[0-9]+/[0-9]+\] |^ninja: (Entering|no work)' "$log" || true
