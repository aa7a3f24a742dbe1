#!/usr/bin/env python3
"""Per-node time of Tessera beside ONNX Runtime for one model, largest gap first: where a network
loses to its peer. Tessera's times come from `tessera bench --profile --json` (per-node medians),
ONNX Runtime's from its own profiler (per-node medians of kernel time; a fused ORT node such as
`conv1_relu_nchwc` is matched to the Tessera node whose name it starts with, a trailing `_conv`
dropped).

Usage: node_compare.py MODEL.onnx --tessera build/tools/tessera [--threads 1] [--repeat 40]
                       [--top 30]
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import tempfile


def ort_profile(model, threads, repeat):
    import numpy as np
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = os.path.join(tempfile.mkdtemp(prefix="tessera-ort-prof-"), "ort")
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal([d if isinstance(d, int) else 1 for d in i.shape])
             .astype(np.float32) for i in sess.get_inputs()}
    for _ in range(repeat + 3):
        sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    per_node, runs = collections.defaultdict(list), []
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[e["name"][:-len("_kernel_time")]].append(e["dur"])
        if e.get("name") == "model_run":
            runs.append(e["dur"])
    return {k: statistics.median(v) for k, v in per_node.items()}, statistics.median(runs) / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    out = subprocess.run([args.tessera, "bench", args.model, "--targets", "cpu", "--threads",
                          str(args.threads), "--repeat", str(args.repeat), "--profile", "--json"],
                         capture_output=True, text=True, check=True).stdout
    ours = json.loads(out.strip().splitlines()[-1])
    tess = {p["node"]: p["median_us"] for p in ours["profile"] if p["node"] and p["median_us"] > 0}
    peer, peer_ms = ort_profile(args.model, args.threads, args.repeat)

    def matches(node):
        stem = node[:-5] if node.endswith("_conv") else node
        return [k for k in peer if k == stem or k.startswith(stem + "_")]

    rows, matched = [], set()
    for node, us in tess.items():
        keys = matches(node)
        matched.update(keys)
        theirs = sum(peer[k] for k in keys) if keys else None
        rows.append((us - (theirs or 0.0), node, us, theirs))
    rows.sort(reverse=True)
    print(f"{os.path.basename(args.model)}, {args.threads} thread(s): tessera median "
          f"{ours['median_ms']:.2f} ms, ONNX Runtime {peer_ms:.2f} ms")
    print(f"{'node':40s} {'tessera us':>11s} {'ORT us':>9s} {'gap us':>9s}")
    for gap, node, us, theirs in rows[:args.top]:
        shown = f"{theirs:.1f}" if theirs is not None else "-"
        print(f"{node:40s} {us:11.1f} {shown:>9s} {gap:9.1f}")
    rest = {k: v for k, v in peer.items() if k not in matched and v >= 10}
    if rest:
        print("ORT nodes without a Tessera match: " +
              ", ".join(f"{k}={v:.0f}" for k, v in sorted(rest.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
