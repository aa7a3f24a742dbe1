#!/usr/bin/env python3
"""Per-node time of Tessera beside ONNX Runtime for one model, largest gap first: where a network
loses to its peer. Tessera's times come from `tessera bench --profile --json` (per-node medians),
ONNX Runtime's from its own profiler (per-node medians of kernel time). An ORT node is matched
to the graph node it stands for: its own name; or, for a fused NCHWc node named after a tensor
(`X_output_0_nchwc`, a Conv+Relu named after the Relu's output), the nearest producer of that
tensor with the ORT node's op type; then to the Tessera node that runs it (itself, or the nearest
producer whose step absorbed it, as a conv runs the max pool after it); failing that, to the
Tessera node whose name it starts with (`conv1_relu_nchwc` -> `conv1`, a trailing `_conv`
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
    per_node, op_types, runs = collections.defaultdict(list), {}, []
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            key = e["name"][:-len("_kernel_time")]
            per_node[key].append(e["dur"])
            op_types[key] = e.get("args", {}).get("op_name", "")
        if e.get("name") == "model_run":
            runs.append(e["dur"])
    medians = {k: statistics.median(v) for k, v in per_node.items()}
    return medians, op_types, statistics.median(runs) / 1e3


def graph_node_of(model):
    """A function from an ORT node name and op type to the ONNX graph node it stands for (None if
    none): the node of that name, or for a fused NCHWc node named `<tensor>_nchwc` the nearest
    producer of the tensor (breadth first through inputs, 6 nodes at most) of the ORT node's op
    type, else the tensor's producer itself."""
    import onnx
    graph = onnx.load(model, load_external_data=False).graph
    by_name = {n.name: n for n in graph.node}
    producer = {o: n for n in graph.node for o in n.output}

    def nearest(first, accept):
        frontier, visited = [first], 0
        while frontier and visited < 6:
            n = frontier.pop(0)
            visited += 1
            if accept(n):
                return n.name
            frontier += [producer[i] for i in n.input if i in producer]
        return None

    def find(key, op_type):
        if key in by_name:
            return key
        if not key.endswith("_nchwc") or key[:-len("_nchwc")] not in producer:
            return None
        first = producer[key[:-len("_nchwc")]]
        return nearest(first, lambda n: not op_type or n.op_type == op_type) or first.name

    def absorbing(node, names):
        """The nearest producer of `node` (itself first) that is in `names`: a node Tessera fused
        into its producer's step (a pool run by the conv before it) has no row of its own."""
        return nearest(by_name[node], lambda n: n.name in names) if node in by_name else None

    return find, absorbing


def ort_times_of_nodes(model, tess, threads, repeat):
    """ONNX Runtime's per-node medians (us) summed onto the Tessera nodes (names in `tess`) that
    run the same work: {tessera node: us}, the ORT nodes matched to none {name: us}, and ORT's
    median run in ms. Each ORT node goes to one Tessera node through the graph first, then by
    name prefix."""
    peer, peer_ops, peer_ms = ort_profile(model, threads, repeat)
    to_graph, absorbing = graph_node_of(model)
    owner = {}
    for k in peer:
        node = absorbing(to_graph(k, peer_ops.get(k, "")), tess)
        if node is not None:
            owner[k] = node
    for node in tess:
        stem = node[:-5] if node.endswith("_conv") else node
        for k in peer:
            if k not in owner and (k == stem or k.startswith(stem + "_")):
                owner[k] = node
    theirs_of = collections.defaultdict(float)
    for k, node in owner.items():
        theirs_of[node] += peer[k]
    return dict(theirs_of), {k: v for k, v in peer.items() if k not in owner}, peer_ms


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
    theirs_of, rest, peer_ms = ort_times_of_nodes(args.model, tess, args.threads, args.repeat)

    rows = []
    for node, us in tess.items():
        theirs = theirs_of.get(node)
        rows.append((us - (theirs or 0.0), node, us, theirs))
    rows.sort(reverse=True)
    print(f"{os.path.basename(args.model)}, {args.threads} thread(s): tessera median "
          f"{ours['median_ms']:.2f} ms, ONNX Runtime {peer_ms:.2f} ms")
    print(f"{'node':40s} {'tessera us':>11s} {'ORT us':>9s} {'gap us':>9s}")
    for gap, node, us, theirs in rows[:args.top]:
        shown = f"{theirs:.1f}" if theirs is not None else "-"
        print(f"{node:40s} {us:11.1f} {shown:>9s} {gap:9.1f}")
    rest = {k: v for k, v in rest.items() if v >= 10}
    if rest:
        print("ORT nodes without a Tessera match: " +
              ", ".join(f"{k}={v:.0f}" for k, v in sorted(rest.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
