#!/usr/bin/env python3
"""The cpu plugin's SGEMM micro-kernel beside ONNX Runtime's MatMul, one thread, same machine.

For each shape M,N,K it runs tessera-gemm-bench (every register tile, B packed or read in place)
and times ONNX Runtime on a one-node MatMul [M x K] * [K x N] with one intra-op thread, then
prints both in GFLOPS and the ratio tessera / ORT of the best tessera variant. Shapes default to
GEMMs of the zoo networks' convs (C = W[oc x k] * X[k x pixels]).

  python3 tools/bench/gemm_compare.py --bench build/tools/tessera-gemm-bench [M,N,K ...]
"""
import argparse
import re
import subprocess
import sys
import time

DEFAULT_SHAPES = [
    "1000,169,512",  # squeezenet conv_final (1x1 at 13x13)
    "512,196,512",  # resnet-50 stage 3 1x1
    "256,3136,64",  # resnet-50 stage 1 1x1 expand
    "960,49,160",  # mobilenet_v2 7x7 1x1 expand
    "64,3025,16",  # squeezenet fire expand1x1 (55x55)
]


def ort_gflops(m, n, k, repeat):
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["W", "X"], ["Y"])], "gemm",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [k, n])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
        [helper.make_tensor("W", TensorProto.FLOAT, [m, k], w.ravel())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what older ONNX Runtime releases accept
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    x = {"X": rng.uniform(-1, 1, (k, n)).astype(np.float32)}
    sess.run(None, x)
    best = 1e30
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(None, x)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * m * n * k / best * 1e-9, best * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True, help="path of tessera-gemm-bench")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("shapes", nargs="*", default=DEFAULT_SHAPES, help="M,N,K")
    args = ap.parse_args()
    rows = []
    for shape in args.shapes:
        try:
            m, n, k = (int(v) for v in shape.split(","))
        except ValueError:
            sys.exit(f"gemm_compare: shape '{shape}' is not M,N,K")
        out = subprocess.run([args.bench, str(m), str(n), str(k), "--repeat", str(args.repeat)],
                             check=True, capture_output=True, text=True).stdout
        print(out, end="")
        best = None
        for line in out.splitlines():
            f = re.match(r"(\d+x\d+)\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+$", line)
            if f and (best is None or float(f.group(4)) > best[2]):
                best = (f.group(1), f.group(2), float(f.group(4)), float(f.group(3)))
        ort_gf, ort_us = ort_gflops(m, n, k, args.repeat)
        rows.append((shape, best, ort_gf, ort_us))
    print("\n| M,N,K | tessera best (tile, B) | tessera GFLOPS | ORT GFLOPS | time ratio |")
    print("| --- | --- | --- | --- | --- |")
    for shape, best, ort_gf, ort_us in rows:
        print(f"| {shape} | {best[0]}, {best[1]} | {best[2]:.1f} | {ort_gf:.1f} | "
              f"{best[3] / ort_us:.2f} |")


if __name__ == "__main__":
    main()
