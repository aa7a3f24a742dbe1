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
# Sanitizer trees: build-asan (gcc, Debug, ASan + UBSan) and build-tsan (gcc, RelWithDebInfo,
# ThreadSanitizer, linked with a oneTBB built with TSan). Each builds only the targets its suites
# need; the suites' plugins are dependencies of the test targets. Cold build and run times on the
# 2-core CI machine are in tests/SANITIZERS.md, with what each suite leaves out and why.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
san="$root/build-asan"
[ -f "$san/build.ninja" ] || cmake -S "$root" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DTESSERA_SANITIZE=address,undefined -DTESSERA_BUILD_OPENCL=OFF "${launcher[@]}" >/dev/null
# Bad input (models, plugins, files, YAML, packs), unloading, every core op's index arithmetic
# (ops_tensor, ops_nn), the cpu plugin (its kernels, fusions and the differential suite), the
# tuner and its worker processes, the zoo networks' build and import, and the concurrency suite.
# Not here: OpenCL (PoCL under ASan: see tests/SANITIZERS.md) and the zoo suite's ONNX Runtime
# comparisons of whole networks on the reference kernels (minutes each at -O0; the Release run
# has them).
san_targets=(tessera_import_tests tessera_plugin_tests tessera_hardening_tests
             tessera_ops_tensor_tests tessera_ops_nn_tests tessera_config_tests
             tessera_packs_tests tessera_fuzz_tests tessera_cpu_tests tessera_tune_tests
             tessera_zoo_tests tessera_concurrency_tests)
# Left out here as well: the tuner's end-to-end run on mali:any (OpenCL is off in this tree;
# the Release run has it, and fails in CI without it).
san_exclude='ZooVersusOrt|^soak\.|TuneEndToEnd\.TinyConvOnMaliAny'
TESSERA_BUILD_TARGETS="${san_targets[*]}" "$root/tools/build.sh" "$san"
echo "== test (ASan + UBSan: ${san_targets[*]})"
regex=$(IFS='|'; echo "${san_targets[*]}")
(cd "$san" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" -L "$regex" -E "$san_exclude" --timeout 900)
# ThreadSanitizer over the suites that run sessions from several threads. oneTBB is built with
# TSan from Debian's source first (tools/build-tbb-tsan.sh, about 30 s): Debian's libtbb is not
# instrumented, so TSan could not see its task hand-offs and would report every parallel kernel
# as a race. TESSERA_TSAN=0 skips this tree (a local run without network access).
if [ "${TESSERA_TSAN:-1}" = 1 ]; then
  echo "== build (ThreadSanitizer, with oneTBB built with TSan)"
  tbb_tsan="$root/build-tbb-tsan/install"
  "$root/tools/build-tbb-tsan.sh" "$tbb_tsan"
  # -O1 and up keep TSan's slowdown to about 5-15x. tools/tsan.supp lists the findings outside
  # Tessera (libstdc++), none in its code and none in oneTBB.
  tsan="$root/build-tsan"
  [ -f "$tsan/build.ninja" ] || cmake -S "$root" -B "$tsan" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=thread -DTESSERA_BUILD_OPENCL=OFF \
    -DTBB_DIR="$tbb_tsan/lib/cmake/TBB" "${launcher[@]}" >/dev/null
  # The suites that run sessions from several threads: the concurrency suite (threads with their
  # own sessions and threads sharing one, two TBB threads per session).
  tsan_targets=(tessera_concurrency_tests)
  # TBB_DIR is passed on every configure so a tree first configured with the system oneTBB
  # moves to the instrumented one.
  TESSERA_BUILD_TARGETS="${tsan_targets[*]}" "$root/tools/build.sh" "$tsan" \
    -DTBB_DIR="$tbb_tsan/lib/cmake/TBB"
  echo "== test (TSan: ${tsan_targets[*]})"
  regex=$(IFS='|'; echo "${tsan_targets[*]}")
  (cd "$tsan" && TSAN_OPTIONS="suppressions=$root/tools/tsan.supp halt_on_error=1 history_size=4" \
    ctest --output-on-failure -j"$jobs" -L "$regex" -LE '^soak$' --timeout 900)
fi
# The parsers' libFuzzer harnesses (tests/fuzz), clang + ASan + UBSan, a bounded time each.
echo "== fuzz (tools/run-fuzz.sh, ${TESSERA_FUZZ_SECONDS:-20} s per target)"
"$root/tools/run-fuzz.sh" "${TESSERA_FUZZ_SECONDS:-20}"
