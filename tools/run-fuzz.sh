#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang, ASan + UBSan, coverage over core) into
# build-fuzz/ and runs each for a bounded time on a seed corpus assembled here from the
# repository's own files (tests/fuzz/seeds and regressions, the ONNX backend node models
# fetched by the conformance suite, configs/, schedules/, tests/config/data/).
#   tools/run-fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   default 30 s, all of: onnx npy config pack package
# Prints one line per target (executions, coverage, seconds). Exits 1 when a fuzzer found a crash,
# sanitizer report, leak, out-of-memory or hang (-timeout=5 s), naming the target and the input it
# saved; tests/fuzz/README.md says how to replay it and keep it as a regression.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-30}
[ $# -gt 0 ] && shift
case "$secs" in ''|*[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;; esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx npy config pack package)
build=${TESSERA_FUZZ_BUILD:-$root/build-fuzz}
for t in "${targets[@]}"; do
  [ -f "$root/tests/fuzz/fuzz_$t.cpp" ] || { echo "run-fuzz: unknown target '$t'" >&2; exit 2; }
done

echo "== build (libFuzzer + ASan + UBSan, clang: $build)"
start=$(date +%s)
# Only the fuzz targets (tessera_core and the harnesses) are built, at the first configure too:
# the whole tree under clang + ASan would cost a fresh CI machine many minutes for nothing.
fuzz_targets="${targets[*]/#/tessera_fuzz_}"
if [ ! -f "$build/build.ninja" ]; then
  # The compiler is fixed at the first configure; tools/build.sh reconfigures with the cache.
  CC=clang CXX=clang++ TESSERA_BUILD_TARGETS="$fuzz_targets" "$root/tools/build.sh" "$build" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_FUZZ=ON -DTESSERA_SANITIZE=address,undefined \
    -DTESSERA_BUILD_OPENCL=OFF >/dev/null
fi
TESSERA_BUILD_TARGETS="$fuzz_targets" "$root/tools/build.sh" "$build" >/dev/null
echo "built in $(($(date +%s) - start)) s"

# Seeds, assembled afresh each run (nothing large is committed).
seeds="$build/fuzz-seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{onnx,npy,config,pack,package}
for t in onnx npy config pack package; do
  # A target without regressions has no folder for them (git keeps no empty folders).
  for d in "$root/tests/fuzz/seeds/$t" "$root/tests/fuzz/regressions/$t"; do
    [ -d "$d" ] || continue
    find "$d" -type f ! -name '*.expected' ! -name '.*' -exec cp -t "$seeds/$t" {} +
  done
done
# The ONNX backend node models (one small model per op case), when the conformance suite has
# fetched them into the Release build.
node_tests="$root/build/onnx-node-tests"
if [ -d "$node_tests" ]; then
  for m in "$node_tests"/*/model.onnx; do
    [ -f "$m" ] && cp "$m" "$seeds/onnx/$(basename "$(dirname "$m")").onnx"
  done
else
  echo "note: $node_tests absent (the conformance suite fetches it): fewer onnx seeds"
fi
i=0
for f in "$root"/configs/*.yaml "$root"/configs/examples/*.yaml; do
  cp "$f" "$seeds/config/repo_$((i++))_$(basename "$f")"
done
for f in "$root"/schedules/*/*.yaml "$root"/tests/config/data/*.yaml; do
  cp "$f" "$seeds/pack/repo_$((i++))_$(basename "$f")"
done

# run_one TARGET: one fuzzer for $secs s, its log in fuzz-logs/TARGET.log.
run_one() {
  local t=$1 corpus="$build/fuzz-corpus/$1" findings="$build/fuzz-findings/$1"
  local log="$build/fuzz-logs/$1.log" dict=() status=0
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  [ -f "$root/tests/fuzz/dict/$t.dict" ] && dict=(-dict="$root/tests/fuzz/dict/$t.dict")
  rm -f "$findings"/crash-* "$findings"/timeout-* "$findings"/oom-* "$findings"/leak-*
  # -close_fd_mask=1: core's notices on stdout would only slow the run; reports go to stderr.
  "$build/tests/fuzz/tessera_fuzz_$t" "$corpus" "$seeds/$t" "${dict[@]}" \
    -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$findings/" -print_final_stats=1 -close_fd_mask=1 >"$log" 2>&1 || status=$?
  echo "$status" >"$log.status"
}
# One fuzzer per core at a time: each is single-threaded, so on CI's 2 cores the four take two
# slots of $secs instead of four, with the same time and executions per target.
jobs=$(nproc)
running=0
for t in "${targets[@]}"; do rm -f "$build/fuzz-logs/$t.log.status"; done
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
found=0
for t in "${targets[@]}"; do
  findings="$build/fuzz-findings/$t"
  log="$build/fuzz-logs/$t.log"
  status=$(cat "$log.status" 2>/dev/null || echo "?")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -n 1)
  secs_run=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
  echo "fuzz $t: ${execs:-?} execs in ${secs_run:-?} s (${rate:-?}/s), ${cov:-cov: ?}, exit $status"
  artifacts=$(find "$findings" -maxdepth 1 -type f \
    \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | sort)
  if [ "$status" != 0 ] || [ -n "$artifacts" ]; then
    found=1
    echo "fuzz $t: FOUND a problem; input(s): ${artifacts:-none saved (see the log)}" >&2
    grep -E 'ERROR: |SUMMARY: |runtime error|fuzz invariant|terminate called|what\(\)' "$log" |
      head -n 20 >&2 || true
    echo "fuzz $t: full log $log; replay: $build/tests/fuzz/tessera_fuzz_$t FILE" >&2
  fi
done
echo "fuzz: total $(($(date +%s) - start)) s"
exit "$found"
