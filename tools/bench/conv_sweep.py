#!/usr/bin/env python3
"""A convolution shape sweep: Tessera's cpu plugin beside ONNX Runtime in GFLOP/s per shape, so
that no shape class runs far below its neighbours (issue 45, item 6).

Shape classes: 1x1, 3x3 stride 1, 3x3 stride 2, depthwise 3x3 stride 1 and 2, and a 7x7
stride-2 stem; 3 to 1024 channels, maps from 7x7 to 320x320, each case a few ms on two cores
(--quick: 8 of them). Per shape it builds a single-node ONNX model (Conv with bias, batch 1,
float32, `onnx.helper`, opset 13, "same" padding) and one N(0,1) input saved as .npy, then
alternates the two runtimes over --rounds, each round a fresh process: `tessera bench MODEL
--targets cpu --threads T --repeat N --json --input X=x.npy` (its median_ms), and this script
re-invoked as an ONNX Runtime worker (CPU provider, intra_op_num_threads=T, inter_op 1,
sequential execution, graph optimizations all, the same input, --warmup runs first, median of N
runs). A runtime's time is the median of its rounds' medians.

Fairness, as shared PEERS.md asks for peers on one CPU: same thread count, same ONNX file and
same input for both, each measurement in its own fresh process (neither warms the other's caches
or carries the driver's memory), the runtimes alternated per shape over rounds, medians compared,
and the load average printed before and after (on a shared 2-core machine it says how much to
trust the figures). Weights are N(0,1)/sqrt(fan-in), so the N(0,1) input stays clear of
subnormals.

Once per shape the outputs are checked: `tessera run --input X=x.npy --output-dir` against the
ORT worker's output, max |tessera - ORT| / max |ORT| below 1e-4, else the row is marked.

It prints one row per shape (GFLOP = 2 * MACs, bias not counted), flags the "cliffs" (shapes
whose tessera GFLOP/s is below half the median tessera GFLOP/s of their class), and the median
ratio tessera ms / ORT ms per class. --json OUT writes the rows and summary. Not a test.

Python: numpy, onnx and onnxruntime live in the pyenv site-packages; run it as
  PYTHONPATH=/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages /usr/bin/python3 \\
      tools/bench/conv_sweep.py [--tessera build/tools/tessera] [--threads 2] [--repeat 20]
                                [--warmup 3] [--rounds 3] [--quick] [--json OUT] [--workdir DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_util import median_ms, ort_cpu_session, run_json

# (class, in channels, out channels, input H=W, kernel, stride, group); pads keep "same".
SHAPES = [
    ("1x1", 16, 64, 160, 1, 1, 1),
    ("1x1", 64, 64, 56, 1, 1, 1),
    ("1x1", 64, 256, 56, 1, 1, 1),
    ("1x1", 256, 256, 28, 1, 1, 1),
    ("1x1", 512, 512, 14, 1, 1, 1),
    ("1x1", 960, 160, 7, 1, 1, 1),
    ("1x1", 1024, 1024, 7, 1, 1, 1),
    ("3x3s1", 3, 32, 224, 3, 1, 1),
    ("3x3s1", 16, 16, 320, 3, 1, 1),
    ("3x3s1", 32, 32, 160, 3, 1, 1),
    ("3x3s1", 64, 64, 56, 3, 1, 1),
    ("3x3s1", 128, 128, 28, 3, 1, 1),
    ("3x3s1", 256, 256, 14, 3, 1, 1),
    ("3x3s1", 512, 512, 7, 3, 1, 1),
    ("3x3s2", 3, 32, 320, 3, 2, 1),
    ("3x3s2", 32, 64, 160, 3, 2, 1),
    ("3x3s2", 64, 128, 56, 3, 2, 1),
    ("3x3s2", 128, 256, 28, 3, 2, 1),
    ("3x3s2", 256, 512, 14, 3, 2, 1),
    ("dw3x3s1", 16, 16, 320, 3, 1, 16),
    ("dw3x3s1", 32, 32, 112, 3, 1, 32),
    ("dw3x3s1", 144, 144, 56, 3, 1, 144),
    ("dw3x3s1", 192, 192, 28, 3, 1, 192),
    ("dw3x3s1", 576, 576, 14, 3, 1, 576),
    ("dw3x3s1", 1024, 1024, 7, 3, 1, 1024),
    ("dw3x3s2", 32, 32, 320, 3, 2, 32),
    ("dw3x3s2", 96, 96, 112, 3, 2, 96),
    ("dw3x3s2", 144, 144, 56, 3, 2, 144),
    ("dw3x3s2", 576, 576, 14, 3, 2, 576),
    ("stem7x7s2", 3, 64, 224, 7, 2, 1),
    ("stem7x7s2", 3, 64, 320, 7, 2, 1),
]
QUICK = [1, 4, 10, 12, 16, 21, 26, 29]  # indices into SHAPES: every class once or twice

CLASSES = ["1x1", "3x3s1", "3x3s2", "dw3x3s1", "dw3x3s2", "stem7x7s2"]
MAX_REL_ERR = 1e-4


def shape_name(s):
    _, cin, cout, hw, k, stride, group = s
    dw = "dw" if group > 1 else ""
    return f"{dw}{k}x{k}/s{stride} {cin}->{cout} @{hw}x{hw}"


def out_hw(s):
    _, _, _, hw, k, stride, _ = s
    return (hw + 2 * (k // 2) - k) // stride + 1


def gflop(s):
    _, cin, cout, _, k, _, group = s
    return 2.0 * cout * (cin // group) * k * k * out_hw(s) ** 2 / 1e9


def build(s, model_path, input_path, seed):
    """Writes the one-Conv model and its N(0,1) input."""
    import numpy as np
    from onnx import TensorProto, helper, save
    _, cin, cout, hw, k, stride, group = s
    rng = np.random.default_rng(seed)
    fan_in = (cin // group) * k * k
    w = (rng.standard_normal((cout, cin // group, k, k)) / fan_in ** 0.5).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    o = out_hw(s)
    node = helper.make_node("Conv", ["X", "W", "B"], ["Y"], kernel_shape=[k, k],
                            strides=[stride, stride], pads=[k // 2] * 4, group=group)
    graph = helper.make_graph(
        [node], "conv",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, cin, hw, hw])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, cout, o, o])],
        [helper.make_tensor("W", TensorProto.FLOAT, w.shape, w.ravel()),
         helper.make_tensor("B", TensorProto.FLOAT, b.shape, b)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what older ONNX Runtime releases accept
    save(model, model_path)
    np.save(input_path, rng.standard_normal((1, cin, hw, hw)).astype(np.float32))


def ort_worker(model, input_path, threads, repeat, warmup, save_output):
    import numpy as np
    # Graph optimisations stay at ORT's default, ORT_ENABLE_ALL.
    sess = ort_cpu_session(model, threads)
    feeds = {"X": np.load(input_path)}
    for _ in range(max(1, warmup)):
        out = sess.run(None, feeds)
    if save_output:
        np.save(save_output, out[0])
    print(json.dumps({"median_ms": median_ms(lambda: sess.run(None, feeds), repeat)}))


def check_outputs(tessera, model, input_path, ort_out, outdir, threads):
    """max |tessera - ORT| / max |ORT| of the shape's output, or an error string."""
    import numpy as np
    cmd = [tessera, "run", model, "--targets", "cpu", "--threads", str(threads), "--input",
           f"X={input_path}", "--output-dir", outdir, "--force", "--repeat", "1", "--quiet"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return f"tessera run failed: {out.stderr.strip()[:200]}"
    ours, theirs = np.load(os.path.join(outdir, "Y.npy")), np.load(ort_out)
    if ours.shape != theirs.shape:
        return f"shape {ours.shape} != {theirs.shape}"
    return float(np.max(np.abs(ours - theirs)) / max(float(np.max(np.abs(theirs))), 1e-30))


def load():
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessera", default="build/tools/tessera")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="8 shapes instead of the full list")
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--workdir")
    ap.add_argument("--ort-worker", nargs=3, metavar=("MODEL", "INPUT", "THREADS"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--save-output", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ort_worker:
        ort_worker(args.ort_worker[0], args.ort_worker[1], int(args.ort_worker[2]), args.repeat,
                   args.warmup, args.save_output)
        return
    if not os.path.exists(args.tessera):
        ap.error(f"no tessera binary at {args.tessera} (--tessera)")
    shapes = [SHAPES[i] for i in QUICK] if args.quick else SHAPES
    work = args.workdir or tempfile.mkdtemp(prefix="tessera-conv-sweep-")
    os.makedirs(work, exist_ok=True)
    load_before = load()
    rows = []
    for idx, s in enumerate(shapes):
        base = os.path.join(work, f"conv{idx:02d}")
        model, x, ort_out = base + ".onnx", base + "_x.npy", base + "_ort_y.npy"
        build(s, model, x, seed=idx)
        ours_ms, peer_ms = [], []
        for r in range(max(1, args.rounds)):
            ours_ms.append(run_json(
                [args.tessera, "bench", model, "--targets", "cpu", "--threads",
                 str(args.threads), "--repeat", str(args.repeat), "--warmup", str(args.warmup),
                 "--input", f"X={x}", "--json"])["median_ms"])
            worker = [sys.executable, os.path.abspath(__file__), "--ort-worker", model, x,
                      str(args.threads), "--repeat", str(args.repeat), "--warmup",
                      str(args.warmup)]
            if r == 0:
                worker += ["--save-output", ort_out]
            peer_ms.append(run_json(worker)["median_ms"])
        err = check_outputs(args.tessera, model, x, ort_out, base + "_tessera", args.threads)
        ours, peer = statistics.median(ours_ms), statistics.median(peer_ms)
        g = gflop(s)
        row = {"shape": shape_name(s), "class": s[0], "gflop": g, "tessera_ms": ours,
               "ort_ms": peer, "tessera_gflops": g / ours * 1e3, "ort_gflops": g / peer * 1e3,
               "ratio": ours / peer, "max_rel_err": err,
               "tessera_rounds_ms": ours_ms, "ort_rounds_ms": peer_ms}
        rows.append(row)
        print(f"{row['shape']}: tessera {' '.join(f'{v:.3f}' for v in ours_ms)} ms, ORT "
              f"{' '.join(f'{v:.3f}' for v in peer_ms)} ms (per round), rel err {err}",
              file=sys.stderr)
    load_after = load()

    class_median = {c: statistics.median(r["tessera_gflops"] for r in rows if r["class"] == c)
                    for c in CLASSES if any(r["class"] == c for r in rows)}
    bad = []
    for r in rows:
        r["cliff"] = r["tessera_gflops"] < 0.5 * class_median[r["class"]]
        err = r["max_rel_err"]
        r["match"] = isinstance(err, float) and err < MAX_REL_ERR
        if not r["match"]:
            bad.append(r)

    print(f"\nconv sweep: batch 1, fp32, tessera --targets cpu vs ONNX Runtime CPU, "
          f"{args.threads} thread(s); per runtime the median over {max(1, args.rounds)} "
          f"alternating rounds (fresh processes) of the median of {args.repeat} runs after "
          f"{args.warmup} warm-up; load average before {load_before}, after {load_after}")
    print("| shape | class | GFLOP | tessera ms | ORT ms | tessera GFLOP/s | ORT GFLOP/s "
          "| ratio tessera/ORT | max rel err |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        err = r["max_rel_err"]
        err_s = f"{err:.1e}" if isinstance(err, float) else err
        marks = (" CLIFF" if r["cliff"] else "") + ("" if r["match"] else " MISMATCH")
        print(f"| {r['shape']}{marks} | {r['class']} | {r['gflop']:.4f} | "
              f"{r['tessera_ms']:.3f} | {r['ort_ms']:.3f} | {r['tessera_gflops']:.1f} | "
              f"{r['ort_gflops']:.1f} | {r['ratio']:.2f} | {err_s} |")

    summary = {}
    print("\nper class: median tessera GFLOP/s, median ORT GFLOP/s, median ratio tessera/ORT "
          "(ms; < 1 is faster)")
    for c in class_median:
        cr = [r for r in rows if r["class"] == c]
        summary[c] = {"tessera_gflops": class_median[c],
                      "ort_gflops": statistics.median(r["ort_gflops"] for r in cr),
                      "ratio": statistics.median(r["ratio"] for r in cr), "shapes": len(cr)}
        print(f"  {c:10s} {summary[c]['tessera_gflops']:7.1f} {summary[c]['ort_gflops']:7.1f}"
              f"   ratio {summary[c]['ratio']:.2f}  ({len(cr)} shapes)")
    cliffs = [r for r in rows if r["cliff"]]
    print("cliffs (tessera GFLOP/s < half its class median): " +
          (", ".join(f"{r['shape']} ({r['tessera_gflops']:.1f} vs class median "
                     f"{class_median[r['class']]:.1f})" for r in cliffs) if cliffs else "none"))
    if bad:
        print("output mismatches (max rel err >= 1e-4 or failed): " +
              ", ".join(f"{r['shape']} ({r['max_rel_err']})" for r in bad))
    else:
        print(f"outputs: every shape matches ORT (max rel err < {MAX_REL_ERR:g})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "repeat": args.repeat, "rounds": args.rounds,
                       "load_before": load_before, "load_after": load_after, "rows": rows,
                       "classes": summary, "cliffs": [r["shape"] for r in cliffs]}, f, indent=1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
