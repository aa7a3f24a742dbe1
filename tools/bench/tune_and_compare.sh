#!/usr/bin/env bash
# Tunes one model for one target, then benchmarks tuned against the heuristic defaults in the
# same run, on the same device. Prints one table row (markdown) and keeps the log and pack.
# Usage: tune_and_compare.sh TESSERA MODEL.onnx TARGET BUDGET_SECONDS OUT_DIR [REPEAT]
set -euo pipefail
tessera=$1 model=$2 target=$3 budget=$4 out=$5 repeat=${6:-30}
mkdir -p "$out"
name=$(basename "$model" .onnx)
tag="${name}-${target//[:\/]/_}"
start=$(date +%s)
"$tessera" tune "$model" --targets "$target,reference" --tuner xgb --trials 100000 \
  --budget "$budget" --log "$out/$tag.jsonl" --pack "$out/$tag.yaml" --force > "$out/$tag.tune.txt"
wall=$(( $(date +%s) - start ))
bench() {
  "$tessera" bench "$model" --targets "$target,reference" --repeat "$repeat" --json "$@" \
    2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['median_ms'])"
}
default_ms=$(bench --no-packs)
tuned_ms=$(bench --pack "$out/$tag.yaml")
default_ms2=$(bench --no-packs)
ratio=$(python3 -c "print(f'{$tuned_ms / min($default_ms, $default_ms2):.2f}')")
trials=$(grep -c '' "$out/$tag.jsonl")
echo "| $name | $target | $default_ms / $default_ms2 | $tuned_ms | $ratio | $trials | $wall |"
