#!/usr/bin/env python3
"""Computes the differential suite's expected values with ONNX Runtime.

Used by tests/plugins/ort_oracle.cpp: for each case directory given, it reads model.onnx and
input_<i>.npy (i in the model's input order), runs ONNX Runtime's CPU provider with one thread and
graph optimisations off (each node as ONNX defines it, no fused approximations), and writes
output_<i>.npy (i in the model's output order). A case ONNX Runtime cannot load or run gets
error.txt with the reason instead; the other cases still run. All cases run in this one process,
so the interpreter and onnxruntime load once per test process, not once per case.
"""
import os
import sys
import traceback

import numpy as np
import onnxruntime as ort


def run_case(case_dir):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(os.path.join(case_dir, "model.onnx"), options,
                                   providers=["CPUExecutionProvider"])
    feeds = {}
    for i, info in enumerate(session.get_inputs()):
        feeds[info.name] = np.load(os.path.join(case_dir, f"input_{i}.npy"))
    outputs = session.run(None, feeds)
    for i, value in enumerate(outputs):
        # Written under a temporary name and renamed: a reader never sees half a file.
        path = os.path.join(case_dir, f"output_{i}.npy")
        np.save(path + ".tmp.npy", np.asarray(value))
        os.replace(path + ".tmp.npy", path)


def main(case_dirs):
    for case_dir in case_dirs:
        try:
            run_case(case_dir)
        except Exception:  # one case's failure is reported in its own test
            with open(os.path.join(case_dir, "error.txt"), "w") as f:
                f.write(traceback.format_exc())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
