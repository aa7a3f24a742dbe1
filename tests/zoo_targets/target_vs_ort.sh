#!/usr/bin/env bash
# One zoo network on one target (with `reference` behind it for what the target does not run),
# through the real `tessera run` command, compared with ONNX Runtime on the same seeded input.
# Usage: target_vs_ort.sh TESSERA_BIN MODEL.onnx TARGET RTOL WORKDIR [PRECISION]
set -euo pipefail
tessera=$1 model=$2 target=$3 rtol=$4 work=$5 precision=${6:-fp32}
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$model" .onnx)
out="$work/${name}-${target//[:\/]/_}-$precision"
rm -rf "$out" && mkdir -p "$out"
python3 - "$model" "$out/input.npy" <<'PY'
import sys, numpy as np, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
dims = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
np.save(sys.argv[2], np.random.default_rng(7).standard_normal(dims).astype(np.float32))
PY
"$tessera" run "$model" --targets "$target,reference" --input "data=$out/input.npy" \
  --output-dir "$out" --repeat 1 --precision "$precision" > "$out/run.log"
placed=$(sed -n "s/^nodes by plugin: .*\b${target%%:*}=\([0-9]*\).*/\1/p" "$out/run.log")
placed=${placed:-0}
total=$(sed -n 's/^placement (\([0-9]*\) nodes.*/\1/p' "$out/run.log")
echo "$name on $target ($precision): $placed of $total nodes on ${target%%:*}"
if [ "$placed" -eq 0 ]; then
  echo "no node ran on $target: the comparison would only test the reference" >&2
  exit 1
fi
python3 "$here/../zoo/compare_with_ort.py" --model "$model" --input "$out/input.npy" \
  --expected "$out/output.npy" --expected-logits "$out/logits.npy" \
  --name "$name@$target/$precision" --rtol "$rtol"
