#!/usr/bin/env bash
# README command (a): install what is missing, build the CLI and plugins if needed, then run the
# default deployment (configs/default.yaml) on a zoo network: nodes per plugin, latency, top-5.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup-deps.sh"
# The command line and its plugins only; README (b) builds the rest (the tests).
TESSERA_BUILD_TARGETS=tessera_main_job "$root/tools/build.sh" "$root/build"
exec "$root/build/tools/tessera" run "$root/configs/default.yaml" --repeat 20 "$@"
