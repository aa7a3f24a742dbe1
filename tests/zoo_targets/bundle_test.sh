#!/usr/bin/env bash
# tools/bundle.sh's relocatable bundle, as a board or a machine without the build dependencies
# would use it: built from this build tree into a fresh folder, moved elsewhere, then run from
# a clean environment (no LD_LIBRARY_PATH, no TESSERA_* variables, HOME in a temp folder):
# `tessera info` must load every plugin, the tuner must find its dlopen()ed cost model
# (libxgboost) and measure in its worker, and a zoo network run on cpu must match ONNX Runtime.
# Usage: bundle_test.sh BUILD_DIR WORKDIR
set -euo pipefail
build=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
"$here/../../tools/bundle.sh" "$build" "$work/made"
mv "$work/made" "$work/moved"  # $ORIGIN run paths, not the build's absolute ones
bin="$work/moved/bin/tessera"
clean=(env -i PATH=/usr/bin:/bin HOME="$work/home")
mkdir -p "$work/home"
"${clean[@]}" "$bin" info > "$work/info.txt"
for plugin in cpu reference; do
  if ! grep -q "^  $plugin " "$work/info.txt"; then
    echo "bundle: plugin '$plugin' not loaded from the bundle:" >&2
    cat "$work/info.txt" >&2
    exit 1
  fi
done
if grep -q "^plugins refused: [1-9]" "$work/info.txt"; then
  echo "bundle: plugins refused:" >&2
  sed -n '/^plugins refused/,$p' "$work/info.txt" >&2
  exit 1
fi
echo "bundle: $(grep -c '^  [a-z]* [0-9.]* (ABI' "$work/info.txt") plugins loaded from $work/moved"
"${clean[@]}" "$bin" zoo mobilenet_v2 -o "$work/net.onnx" --seed 5 > /dev/null
# The xgb tuner dlopen()s libxgboost (ldd cannot see it, so bundle.sh carries it by name): the
# bundle must hold it whenever this machine has it; dlopen() would otherwise still find the
# system's copy here and hide the gap until the bundle reaches a board.
if ldconfig -p | grep -q 'libxgboost\.so\.0 ' && [ ! -f "$work/moved/lib/libxgboost.so.0" ]; then
  echo "bundle: lib/libxgboost.so.0 (dlopen()ed by the tuner) was not carried" >&2
  exit 1
fi
"${clean[@]}" "$bin" tune "$work/net.onnx" --targets cpu --tuner xgb --trials 12 \
  --log "$work/tune.jsonl" > "$work/tune.txt" 2>&1 || { cat "$work/tune.txt" >&2; exit 1; }
ok=$(grep -c '"status": "ok"' "$work/tune.jsonl" || true)
[ "$ok" -gt 0 ] || { echo "bundle: the tuner measured nothing" >&2; cat "$work/tune.txt" >&2; exit 1; }
echo "bundle: tune --tuner xgb measured $ok configs"
python3 - "$work/net.onnx" "$work/input.npy" <<'PY'
import sys, numpy as np
np.save(sys.argv[2], np.random.default_rng(3).standard_normal([1, 3, 224, 224]).astype(np.float32))
PY
"${clean[@]}" "$bin" run "$work/net.onnx" --targets cpu --input "data=$work/input.npy" \
  --output-dir "$work/out" --repeat 1 --quiet
python3 "$here/../zoo/compare_with_ort.py" --model "$work/net.onnx" --input "$work/input.npy" \
  --expected "$work/out/output.npy" --expected-logits "$work/out/logits.npy" \
  --name "mobilenet_v2@bundle/cpu" --rtol 1e-4
