#!/usr/bin/env python3
"""Runs a zoo model in ONNX Runtime and compares it with Tessera's outputs.

Used by tests/zoo/zoo_ort_test.cpp: the C++ test runs Tessera's reference kernels on the model and
writes the input and outputs as .npy; this script runs ONNX Runtime (CPU, one thread) on the same
input and checks max|tessera - ort| <= rtol * max|ort| for the softmax output and for the logits
(the softmax squashes differences, so the logits are the meaningful check). It prints one line per
output with the absolute and relative error and exits non-zero on a failure.
"""
import argparse
import sys

import numpy as np
import onnxruntime as ort


def ort_session(model, threads=1):
    """An ONNX Runtime CPU session with `threads` intra-op threads and one inter-op thread."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def compare(tag, name, label, ours, reference, rtol):
    """Checks max|ours - reference| <= rtol * max|reference| (and same dtype, shape, all finite),
    prints one line `TAG NAME LABEL: ...` and returns whether it passed. Also used by
    tests/real_models/check_network.py."""
    if ours.shape != reference.shape or ours.dtype != reference.dtype:
        print(f"{tag} {name} {label}: Tessera gave {ours.dtype}{list(ours.shape)}, "
              f"ORT {reference.dtype}{list(reference.shape)}")
        return False
    diff = np.abs(ours.astype(np.float64) - reference.astype(np.float64))
    max_diff = float(diff.max())
    scale = float(np.abs(reference).max())
    relative = max_diff / scale if scale > 0 else max_diff
    passed = bool(np.all(np.isfinite(ours))) and max_diff <= rtol * scale
    print(f"{tag} {name} {label}: max_abs_diff={max_diff:.3e} max_abs_ort={scale:.3e} "
          f"relative={relative:.3e} {'ok' if passed else 'FAIL'} (rtol {rtol:g})")
    return passed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the .onnx file")
    parser.add_argument("--input", required=True, help=".npy fed to the input 'data'")
    parser.add_argument("--expected", required=True, help="Tessera's 'output' as .npy")
    parser.add_argument("--expected-logits", required=True, help="Tessera's 'logits' as .npy")
    parser.add_argument("--name", default="", help="network name for the report")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="allowed max|diff| relative to max|ORT output| (default 1e-4)")
    args = parser.parse_args()

    session = ort_session(args.model)
    data = np.load(args.input)
    ort_output, ort_logits = session.run(["output", "logits"], {"data": data})

    ok = True
    name = args.name or args.model
    for label, path, reference in (("output", args.expected, ort_output),
                                   ("logits", args.expected_logits, ort_logits)):
        ok = compare("zoo-vs-ort", name, label, np.load(path), reference, args.rtol) and ok
    # Top-5 classes per batch row: reported, not asserted (near-ties may legitimately reorder).
    ours_logits = np.load(args.expected_logits)
    same = all(list(np.argsort(-ours_logits[i])[:5]) == list(np.argsort(-ort_logits[i])[:5])
               for i in range(ort_logits.shape[0]))
    print(f"zoo-vs-ort {name} top5_same={'yes' if same else 'no'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
