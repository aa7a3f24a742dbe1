#!/usr/bin/env bash
# README command (b): install what is missing, build (Release, plus an ASan/UBSan build of the
# bad-input and plugin-lifetime suites), check that every suite of tests/expected_suites.txt is
# registered, run the test suite with ctest, and end with a table per suite: tests run, skipped
# (with the reasons) and failed (tools/test_summary.py).
#   tools/run-tests.sh          every test but those labelled `slow` (what .ci/run runs)
#   tools/run-tests.sh --slow   only the `slow` ones (networks that take minutes on the naive
#                               reference kernels): a nightly-style run
# With CI=true, a suite or test whose tool (PoCL, the cross compiler, qemu, ONNX Runtime, Python)
# is absent fails instead of being skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
slow=()
labels=(-LE '^slow$')
if [ "${1:-}" = "--slow" ]; then
  slow=(--slow)
  labels=(-L '^slow$')
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--slow]" >&2
  exit 2
fi
"$root/tools/setup-deps.sh"
# The aarch64 cross compiler, qemu-user and arm64 Highway/oneTBB for the NEON test; when they
# cannot be installed, the check below reports the cpu_aarch64 suite as skipped (CI: failed).
"$root/tools/setup-aarch64.sh" || echo "setup: aarch64 cross tools unavailable"
echo "== build (Release)"
"$root/tools/build.sh" "$root/build"
echo "== suites registered (tests/expected_suites.txt)"
summary=(python3 "$root/tools/test_summary.py")
"${summary[@]}" registered "$root/build" "$root/tests/expected_suites.txt" "${slow[@]}"
echo "== test (Release${slow:+, slow set})"
results="$root/build/test-results"
rm -rf "$results"
mkdir -p "$results"
status=0
(cd "$root/build" && ctest --output-on-failure -j"$jobs" --timeout 1500 "${labels[@]}" \
   --output-junit "$results/junit.xml") || status=1
"${summary[@]}" results "$root/build" "$root/tests/expected_suites.txt" "$results/junit.xml" \
  "${slow[@]}" || status=1
[ "$status" -eq 0 ] || exit 1
[ ${#slow[@]} -eq 0 ] || exit 0
echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer)"
san="$root/build-asan"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
[ -f "$san/build.ninja" ] || cmake -S "$root" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DTESSERA_SANITIZE=address,undefined -DTESSERA_BUILD_OPENCL=OFF "${launcher[@]}" >/dev/null
# The suites that feed bad input (models, plugins, files, YAML, packs), test unloading, and run
# every core op's index arithmetic (ops_tensor, ops_nn); their test plugins and the reference
# plugin are dependencies of the test targets. Not yet here: the cpu, OpenCL, tune and zoo suites.
san_targets=(tessera_import_tests tessera_plugin_tests tessera_hardening_tests
             tessera_ops_tensor_tests tessera_ops_nn_tests tessera_config_tests
             tessera_packs_tests tessera_fuzz_tests)
TESSERA_BUILD_TARGETS="${san_targets[*]}" "$root/tools/build.sh" "$san"
echo "== test (sanitizers: ${san_targets[*]})"
regex=$(IFS='|'; echo "${san_targets[*]}")
(cd "$san" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" -L "$regex" --timeout 900)
# The parsers' libFuzzer harnesses (tests/fuzz), clang + ASan + UBSan, a bounded time each.
echo "== fuzz (tools/run-fuzz.sh, ${TESSERA_FUZZ_SECONDS:-20} s per target)"
"$root/tools/run-fuzz.sh" "${TESSERA_FUZZ_SECONDS:-20}"
