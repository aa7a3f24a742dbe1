#!/usr/bin/env bash
# README command (b): install what is missing, build (Release, plus an ASan/UBSan build of the
# bad-input and plugin-lifetime suites), and run the whole test suite with ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
"$root/tools/setup-deps.sh"
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
san_targets=(tessera_import_tests tessera_plugin_tests)
existing=()
for t in "${san_targets[@]}"; do
  ninja -C "$san" -t targets all 2>/dev/null | grep -q "^$t:" && existing+=("$t")
done
ninja -C "$san" -j"$jobs" "${existing[@]}" all-plugins 2>/dev/null | grep -vE '^\[[0-9]+/' || \
  ninja -C "$san" -j"$jobs" "${existing[@]}" | grep -vE '^\[[0-9]+/'
echo "== test (sanitizers: ${existing[*]})"
regex=$(IFS='|'; echo "${existing[*]}")
(cd "$san" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" -L "$regex" --timeout 900)
