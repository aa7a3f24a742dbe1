#!/usr/bin/env python3
"""examples/c_api's program on a zoo network against ONNX Runtime: the same input pattern
(sin(0.01 i)), each output's sum and first values within 1e-4 x max |ref| (+1e-5).
Usage: c_example_test.py EXAMPLE_BIN TESSERA_BIN"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from ort_required import import_onnxruntime


def main():
    example, tessera = sys.argv[1], sys.argv[2]
    ort = import_onnxruntime()
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "squeezenet.onnx")
        subprocess.run([tessera, "zoo", "squeezenet_v1.1", "-o", model], check=True,
                       capture_output=True)
        out = subprocess.run([example, model, "cpu", "3"], capture_output=True, text=True)
        print(out.stdout, out.stderr, end="")
        if out.returncode != 0:
            sys.exit(f"c_example: exit {out.returncode}")
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in sess.get_inputs():
            n = int(np.prod(i.shape))
            feeds[i.name] = np.sin(0.01 * np.arange(n)).astype(np.float32).reshape(i.shape)
        refs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    failures = 0
    lines = re.findall(r"^output (\S+) \[([\d, ]*)\] sum (\S+) first ((?:\S+ ?)+)$", out.stdout,
                       re.M)
    if len(lines) != len(refs):
        sys.exit(f"c_example: {len(lines)} outputs printed, ONNX Runtime has {len(refs)}")
    for name, shape, total, first in lines:
        ref = refs[name]
        tol = 1e-4 * float(np.abs(ref).max()) + 1e-5
        got_shape = [int(d) for d in shape.split(", ")]
        if got_shape != list(ref.shape):
            print(f"c_example: {name} shape {got_shape}, ONNX Runtime {list(ref.shape)}")
            failures += 1
        values = [float(v) for v in first.split()]
        diff = max(abs(a - b) for a, b in zip(values, ref.reshape(-1)[:len(values)]))
        sum_diff = abs(float(total) - float(ref.astype(np.float64).sum()))
        if diff > tol or sum_diff > tol * ref.size:
            print(f"c_example: {name} first values off by {diff:.3g}, sum by {sum_diff:.3g} "
                  f"(tolerance {tol:.3g})")
            failures += 1
        else:
            print(f"c_example: {name} matches ONNX Runtime (first values within {diff:.2g}, "
                  f"sum within {sum_diff:.2g})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
