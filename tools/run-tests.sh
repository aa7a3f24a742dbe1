#!/usr/bin/env bash
# README command (b): install what is missing, build (Release), check that every suite of
# tests/expected_suites.txt is registered, run the test suite with ctest and end with a table per
# suite: tests run, skipped (with the reasons) and failed (tools/test_summary.py); then the same
# for the ASan + UBSan and TSan trees (tests/expected_suites_{asan,tsan}.txt), then the fuzzers.
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
# Sanitizer trees: build-asan (clang, -O1, ASan + UBSan, OpenCL on, the fuzzers in the same tree)
# and build-tsan (gcc, RelWithDebInfo, ThreadSanitizer, linked with a oneTBB built with TSan). Each
# builds the suites of its list (tests/expected_suites_<tree>.txt: a suite's label is its test
# target) and their plugins, with the cpu kernels for this machine's SIMD target only (the Release
# suite checks every dispatch target), and ends with its own table; it fails when a listed suite
# ran fewer tests than its minimum. Cold build and run times on the 2-core CI machine, and what
# each tree leaves out and why, are in tests/SANITIZERS.md.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
suite_labels() { sed 's/#.*//' "$1" | awk 'NF { print $1 }'; }
# run_sanitizer_suites TREE EXPECTED EXCLUDE_REGEX [ENV=VALUE...]: ctest over EXPECTED's labels in
# TREE (the slow set left out), then its table (tools/test_summary.py).
run_sanitizer_suites() {
  local tree=$1 expected=$2 exclude=$3
  shift 3
  local regex junit="$tree/test-results/junit.xml"
  regex=$(suite_labels "$expected" | paste -sd '|')
  rm -rf "$tree/test-results"
  mkdir -p "$tree/test-results"
  local rc=0
  (cd "$tree" && env "$@" ctest --output-on-failure -j"$jobs" -L "$regex" -LE '^slow$' \
     -E "$exclude" --timeout 900 --output-junit "$junit") || rc=1
  "${summary[@]}" results "$tree" "$expected" "$junit" || rc=1
  return "$rc"
}

echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer, clang, with the fuzzers)"
san="$root/build-asan"
san_expected="$root/tests/expected_suites_asan.txt"
fuzzers="tessera_fuzz_onnx tessera_fuzz_npy tessera_fuzz_config tessera_fuzz_pack tessera_fuzz_package"
# clang rather than gcc: its LeakSanitizer copes with PoCL's worker threads (gcc 12's tracer
# crashes reading their TLS), it compiles this tree in about half gcc's time, and libFuzzer is
# clang's, so the fuzzers share the tree instead of building core a third time. -O1: ASan's
# recommended level; at -O0 the cpu suite's whole-network test took 7 minutes under clang. Line
# tables only: enough for the reports' file:line, a fraction of full debug info's compile time.
# A tree configured with another compiler (an older gcc build-asan) is removed and built afresh:
# cmake cannot switch the compiler of an existing cache.
if [ -f "$san/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$san/CMakeCache.txt"; then
  echo "build-asan was configured with another compiler: removing it to rebuild with clang"
  rm -rf "$san"
fi
TESSERA_BUILD_TARGETS="$(suite_labels "$san_expected" | paste -sd ' ') $fuzzers" \
  "$root/tools/build.sh" "$san" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -gline-tables-only" \
  "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" -DTESSERA_SANITIZE=address,undefined \
  -DTESSERA_FUZZ=ON -DTESSERA_BUILD_OPENCL=ON -DTESSERA_CPU_SIMD=host
echo "== test (ASan + UBSan: tests/expected_suites_asan.txt)"
# Left out here (the Release run has them): the zoo suite's ZooVersusOrt* (whole networks on the
# naive reference kernels against ONNX Runtime: minutes each under ASan), soak.short (ASan's
# shadow memory and quarantine make RSS meaningless). tools/lsan.supp lists only allocations of
# glibc's dynamic loader that LeakSanitizer finds no root for. intercept_tls_get_addr=0: up to
# LLVM 16 and gcc 13 the runtime's __tls_get_addr hook can take a thread's dynamic TLS block for
# one with a pre-2.25 glibc header and hand LeakSanitizer's tracer a wild range at exit ("Tracer
# caught signal 11" after a passed test, 1 process in about 1,200 here); the blocks are malloc'd
# and reachable from the thread's static TLS, so leaks in them are still found.
# use_sigaltstack=0: PoCL initialises LLVM in the thread that first asks for OpenCL devices, and
# LLVM gives that thread an alternate signal stack from malloc; when the thread ends, ASan's
# teardown unmaps the alternate stack it assumes is its own and dies on EINVAL (the farm test's
# tuner thread, every run on a fresh Debian 12 machine). See tests/SANITIZERS.md.
run_sanitizer_suites "$san" "$san_expected" 'ZooVersusOrt|^soak\.' \
  ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0:use_sigaltstack=0 \
  UBSAN_OPTIONS=print_stacktrace=1 \
  LSAN_OPTIONS="suppressions=$root/tools/lsan.supp" || exit 1
# ThreadSanitizer over the suites that run sessions from several threads. oneTBB is built with
# TSan from Debian's source first (tools/build-tbb-tsan.sh, about 30 s): Debian's libtbb is not
# instrumented, so TSan could not see its task hand-offs and would report every parallel kernel
# as a race. TESSERA_TSAN=0 skips this tree (a local run without network access).
if [ "${TESSERA_TSAN:-1}" = 1 ]; then
  echo "== build (ThreadSanitizer, with oneTBB built with TSan)"
  tbb_tsan="$root/build-tbb-tsan/install"
  "$root/tools/build-tbb-tsan.sh" "$tbb_tsan"
  # -O1 and up keep TSan's slowdown to about 5-15x. -O1 -g1 (line tables: reports keep their
  # file:line) compiles in less than half the time of -O2 -g (core's session.cpp: 5.0 s
  # against 11.8 s). tools/tsan.supp is for findings outside Tessera; it lists none today.
  tsan="$root/build-tsan"
  tsan_expected="$root/tests/expected_suites_tsan.txt"
  tsan_flags=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1"
              "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DTBB_DIR="$tbb_tsan/lib/cmake/TBB")
  [ -f "$tsan/build.ninja" ] || cmake -S "$root" -B "$tsan" -G Ninja -DTESSERA_SANITIZE=thread \
    -DTESSERA_BUILD_OPENCL=OFF "${tsan_flags[@]}" "${launcher[@]}" >/dev/null
  # The flags and TBB_DIR are passed on every configure so an older tree (RelWithDebInfo, or
  # the system oneTBB) moves to them.
  TESSERA_BUILD_TARGETS="$(suite_labels "$tsan_expected" | paste -sd ' ')" \
    "$root/tools/build.sh" "$tsan" "${tsan_flags[@]}" -DTESSERA_CPU_SIMD=host
  echo "== test (TSan: tests/expected_suites_tsan.txt)"
  run_sanitizer_suites "$tsan" "$tsan_expected" '^soak\.' \
    TSAN_OPTIONS="suppressions=$root/tools/tsan.supp halt_on_error=1 history_size=4" || exit 1
fi
# The parsers' libFuzzer harnesses (tests/fuzz), built above in build-asan, a bounded time each.
echo "== fuzz (tools/run-fuzz.sh, ${TESSERA_FUZZ_SECONDS:-20} s per target)"
TESSERA_FUZZ_BUILD="$san" "$root/tools/run-fuzz.sh" "${TESSERA_FUZZ_SECONDS:-20}"
# What this run did not run, and where it runs: the last thing (b) prints.
echo "== left out of this run"
slow_tests=$(cd "$root/build" && ctest -N -L '^slow$' | sed -n 's/^ *Test *#[0-9]*: \([^ ]*\).*/\1/p')
echo "  $(echo "$slow_tests" | grep -c .) tests labelled slow (whole networks on the naive reference" \
  "kernels, knob grids whole; minutes each): tools/run-tests.sh --slow runs them"
echo "$slow_tests" | sed 's/^/    /'
echo "  under ASan + UBSan: ZooVersusOrt* (whole networks on the reference kernels) and soak.short" \
  "(RSS means nothing there); the Release run above has them (tests/SANITIZERS.md)"
echo "  under TSan: only tests/expected_suites_tsan.txt's suites (the sessions run from several" \
  "threads); the Release and ASan runs have the others"
