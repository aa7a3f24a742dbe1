#!/usr/bin/env python3
"""examples/c_api's program on a zoo network, as ONNX and as a package, against ONNX Runtime: the
same input pattern (sin(0.01 i)), each output's sum and first values within 1e-4 x max |ref|
(+1e-5).
Usage: c_example_test.py EXAMPLE_BIN TESSERA_BIN"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from ort_required import import_onnxruntime
from zoo_package import zoo_package


def ort_outputs(ort, model):
    """ONNX Runtime's outputs by name for the example's input pattern."""
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in sess.get_inputs():
        n = int(np.prod(i.shape))
        feeds[i.name] = np.sin(0.01 * np.arange(n)).astype(np.float32).reshape(i.shape)
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def compare(what, stdout, refs):
    """Number of the example's printed outputs that differ from ONNX Runtime's refs."""
    failures = 0
    lines = re.findall(r"^output (\S+) \[([\d, ]*)\] sum (\S+) first ((?:\S+ ?)+)$", stdout,
                       re.M)
    if len(lines) != len(refs):
        print(f"{what}: {len(lines)} outputs printed, ONNX Runtime has {len(refs)}")
        return 1
    for name, shape, total, first in lines:
        ref = refs[name]
        tol = 1e-4 * float(np.abs(ref).max()) + 1e-5
        got_shape = [int(d) for d in shape.split(", ")]
        if got_shape != list(ref.shape):
            print(f"{what}: {name} shape {got_shape}, ONNX Runtime {list(ref.shape)}")
            failures += 1
        values = [float(v) for v in first.split()]
        diff = max(abs(a - b) for a, b in zip(values, ref.reshape(-1)[:len(values)]))
        sum_diff = abs(float(total) - float(ref.astype(np.float64).sum()))
        if diff > tol or sum_diff > tol * ref.size:
            print(f"{what}: {name} first values off by {diff:.3g}, sum by {sum_diff:.3g} "
                  f"(tolerance {tol:.3g})")
            failures += 1
        else:
            print(f"{what}: {name} matches ONNX Runtime (first values within {diff:.2g}, "
                  f"sum within {sum_diff:.2g})")
    return failures


def main():
    example, tessera = sys.argv[1], sys.argv[2]
    ort = import_onnxruntime()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        model, package = zoo_package(tessera, tmp)
        refs = ort_outputs(ort, model)
        for path in (model, package):
            out = subprocess.run([example, path, "cpu", "3"], capture_output=True, text=True)
            print(out.stdout, out.stderr, end="")
            if out.returncode != 0:
                print(f"c_example {path}: exit {out.returncode}")
                failures += 1
                continue
            failures += compare(f"c_example {os.path.basename(path)}", out.stdout, refs)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
