#!/usr/bin/env bash
# README command (b): install what is missing, build (Release, plus an ASan/UBSan build of the
# bad-input and plugin-lifetime suites), and run the whole test suite with ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
"$root/tools/setup-deps.sh"
# The aarch64 cross compiler, qemu-user and arm64 Highway/oneTBB for the NEON test; when they
# cannot be installed, that one test is left out (tests/cpu_aarch64/CMakeLists.txt says so).
"$root/tools/setup-aarch64.sh" || echo "setup: aarch64 cross tools unavailable; NEON test skipped"
echo "== build (Release)"
"$root/tools/build.sh" "$root/build"
echo "== test (Release)"
(cd "$root/build" && ctest --output-on-failure -j"$jobs" --timeout 1500)
echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer)"
san="$root/build-asan"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
[ -f "$san/build.ninja" ] || cmake -S "$root" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DTESSERA_SANITIZE=address,undefined -DTESSERA_BUILD_OPENCL=OFF "${launcher[@]}" >/dev/null
# The suites that feed bad input (models, plugins) and test unloading; their test plugins and
# the reference plugin are dependencies of the test targets.
san_targets=(tessera_import_tests tessera_plugin_tests)
TESSERA_BUILD_TARGETS="${san_targets[*]}" "$root/tools/build.sh" "$san"
echo "== test (sanitizers: ${san_targets[*]})"
regex=$(IFS='|'; echo "${san_targets[*]}")
(cd "$san" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" -L "$regex" --timeout 900)
