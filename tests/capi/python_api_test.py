#!/usr/bin/env python3
"""tools/python/tessera_c.py (ctypes over the C API) on a zoo network against ONNX Runtime, the
ports it reports, and an error that names the bad input.
Usage: python_api_test.py LIBTESSERA TESSERA_BIN"""
import os
import subprocess
import sys
import tempfile

import numpy as np

from ort_required import import_onnxruntime


def main():
    lib, tessera = sys.argv[1], sys.argv[2]
    ort = import_onnxruntime()
    os.environ["TESSERA_LIBRARY"] = lib
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "python"))
    import tessera_c
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "mobilenet_v2.onnx")
        subprocess.run([tessera, "zoo", "mobilenet_v2", "-o", model], check=True,
                       capture_output=True)
        s = tessera_c.Session(model, targets="cpu", threads=2)
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        if [(n, shape) for n, _, shape in s.inputs] != [(i.name, i.shape) for i in
                                                         sess.get_inputs()]:
            failures.append(f"inputs {s.inputs} vs ONNX Runtime {sess.get_inputs()}")
        rng = np.random.default_rng(3)
        feeds = {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in sess.get_inputs()}
        got = s.run(feeds)
        for o, ref in zip(sess.get_outputs(), sess.run(None, feeds)):
            diff = float(np.abs(got[o.name] - ref).max())
            tol = 1e-4 * float(np.abs(ref).max())
            print(f"python_api: {o.name} {list(ref.shape)} max |diff| {diff:.3g} (tolerance "
                  f"{tol:.3g})")
            if got[o.name].shape != ref.shape or diff > tol:
                failures.append(f"{o.name} differs from ONNX Runtime by {diff}")
        try:
            s.run({"nope": np.zeros((1,), np.float32)})
            failures.append("an unknown input name was accepted")
        except tessera_c.Error as e:
            if "'nope' is not an input of the model" not in str(e):
                failures.append(f"unknown input error does not name it: {e}")
        try:
            tessera_c.Session(os.path.join(tmp, "missing.onnx"))
            failures.append("a missing model was accepted")
        except tessera_c.Error as e:
            if "missing.onnx" not in str(e):
                failures.append(f"missing model error does not name it: {e}")
    for f in failures:
        print("python_api:", f)
    print(f"python_api: tessera {tessera_c.version()}, {len(failures)} problems")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
