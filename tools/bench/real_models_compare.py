#!/usr/bin/env python3
"""Benchmarks the real-model corpus (tools/real_models/export.py) on Tessera beside ONNX Runtime,
same thread counts, and prints the ratio tessera / ORT per network with the share of its nodes
that run on the cpu plugin. Not a test: CI checks the values (tests/real_models).

Each network runs with the targets its CI check uses: `cpu`, or `cpu,reference` for the networks
listed in tests/real_models/needs_reference.txt. As in cpu_compare.py (whose helpers this reuses),
each measurement is its own fresh process (`tessera bench --json`, cpu_compare.py --ort-worker,
and this script's --openvino-worker), the runtimes alternate over --rounds, and a runtime's
latency is the median of its rounds' medians. With OpenVINO's pip package importable, an OpenVINO
column is added (fp32, LATENCY hint, same thread count; see shared PEERS.md). The load average
is printed before and after: on a shared machine it says how much to trust the numbers.

Networks listed in tests/real_models/unsupported.txt do not run on Tessera yet and are left out.
A network whose tessera run takes long (the reference plugin's naive loops) gets fewer runs: one
probe run sizes --repeat (and --warmup) so that a measurement takes about --budget-s seconds, at
least 3 runs; its peers run the same counts.

Usage: real_models_compare.py --tessera build/tools/tessera [--models a,b] [--threads 1,2]
                              [--repeat 20] [--warmup 3] [--rounds 3] [--budget-s 4]
                              [--no-openvino]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "real_models"))
import corpus  # noqa: E402
from cpu_compare import combine, run_json  # noqa: E402

CPU_COMPARE = os.path.join(HERE, "cpu_compare.py")


def openvino_worker(model, threads, repeat, warmup):
    """One OpenVINO measurement in this process, printed as cpu_compare's workers do."""
    # A home and cache of its own and telemetry off (shared PEERS.md), set before the import.
    cache = tempfile.mkdtemp(prefix="tessera-ov-")
    os.environ["HOME"] = cache
    os.environ["OPENVINO_TELEMETRY_OPT_OUT"] = "1"
    import numpy as np
    import openvino as ov
    core = ov.Core()
    network = core.read_model(model)
    # An open batch (the corpus exports one) is fixed at 1, as Tessera and ORT run it.
    network.reshape({i.get_any_name(): [d.get_length() if d.is_static else 1
                                        for d in i.get_partial_shape()]
                     for i in network.inputs})
    compiled = core.compile_model(network, "CPU", {
        "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32", "CACHE_DIR": cache})
    request = compiled.create_infer_request()
    rng = np.random.default_rng(0)
    feeds = {i.get_any_name(): rng.standard_normal(list(i.get_shape())).astype(np.float32)
             for i in compiled.inputs}
    for _ in range(warmup):
        request.infer(feeds)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        request.infer(feeds)
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps({"median_ms": statistics.median(times),
                      "p90_ms": times[min(len(times) - 1, int(0.9 * (len(times) - 1) + 0.5))],
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))


def have_openvino():
    try:
        import openvino  # noqa: F401
        return True
    except ImportError:
        return False


def load_text():
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessera")
    ap.add_argument("--models", default="", help="comma-separated (default: the whole corpus)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=4.0,
                    help="seconds one tessera measurement may take; fewer runs past it")
    ap.add_argument("--no-openvino", action="store_true")
    ap.add_argument("--openvino-worker", nargs=2, metavar=("MODEL", "THREADS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.openvino_worker:
        openvino_worker(args.openvino_worker[0], int(args.openvino_worker[1]), args.repeat,
                        args.warmup)
        return 0
    if not args.tessera:
        ap.error("--tessera is required")
    python = corpus.torch_python()
    if python is None:
        sys.exit("no python3 with torch and torchvision (tools/setup-deps.sh installs them)")
    not_runnable = corpus.unsupported()
    names = [n for n in args.models.split(",") if n] or corpus.names()
    for name in [n for n in names if n in not_runnable]:
        print(f"{name}: left out, Tessera cannot run it yet ({not_runnable[name]})",
              file=sys.stderr)
    names = [n for n in names if n not in not_runnable]
    listed = corpus.needs_reference()
    exported = corpus.export(python, names)
    peers = [("ORT", lambda m, t: [sys.executable, CPU_COMPARE, "--ort-worker", m, str(t)])]
    if not args.no_openvino and have_openvino():
        peers.append(("OpenVINO", lambda m, t: [sys.executable, __file__, "--openvino-worker", m,
                                                str(t)]))
    load_before = load_text()
    print(f"load average before: {load_before}", file=sys.stderr)
    rows = []
    for name in names:
        model = exported[name]["path"]
        targets = corpus.targets_for(name, listed)
        for threads in [int(t) for t in args.threads.split(",")]:
            probe = run_json([args.tessera, "bench", model, "--targets", targets, "--threads",
                              str(threads), "--json", "--repeat", "1", "--warmup", "0"])
            fit = int(args.budget_s * 1e3 / max(probe["median_ms"], 1e-3))
            repeat = max(3, min(args.repeat, fit))
            warmup = min(args.warmup, max(1, fit - repeat))
            timing = ["--repeat", str(repeat), "--warmup", str(warmup)]
            ours_rounds, peer_rounds = [], {label: [] for label, _ in peers}
            for _ in range(max(1, args.rounds)):
                ours_rounds.append(run_json([args.tessera, "bench", model, "--targets", targets,
                                             "--threads", str(threads), "--json", *timing]))
                for label, command in peers:
                    peer_rounds[label].append(run_json(command(model, threads) + timing))
            ours = combine(ours_rounds)
            peer = {label: combine(r) for label, r in peer_rounds.items()}
            # Each round's tessera run sits next to its peers' runs: the ratio is taken per round
            # and the median of those reported, so a drift of the machine's speed slower than a
            # round (seen here: the same binary 10 ms, then 15 ms, minutes apart) cancels out.
            ratios = {label: sorted(o["median_ms"] / p["median_ms"]
                                    for o, p in zip(ours_rounds, peer_rounds[label]))
                      for label in peer_rounds}
            rows.append((name, threads, targets, ours, peer, repeat, ratios))
            per_round = "; ".join(
                f"{label} " + " ".join(f"{r['median_ms']:.2f}" for r in rounds)
                for label, rounds in [("tessera", ours_rounds), *peer_rounds.items()])
            print(f"{name} threads={threads} repeat={repeat}: {per_round} ms (per round), "
                  f"load {load_text()}", file=sys.stderr)
    labels = [label for label, _ in peers]
    print(f"\nbatch 1, fp32; per runtime the median over {max(1, args.rounds)} alternating rounds "
          f"of the median of `runs` runs (at most {args.repeat}, about {args.budget_s:g} s) after "
          f"up to {args.warmup} warm-up; ratios: the median of the per-round ratios (range: their "
          f"smallest and largest); load average before {load_before}, after {load_text()}")
    print("| network | threads | runs | targets | tessera ms | " +
          " | ".join(f"{label} ms" for label in labels) + " | tessera/ORT | ORT range | " +
          "".join(f"tessera/{label} | " for label in labels[1:]) + "nodes on cpu | nodes |")
    print("|---" * (8 + 2 * len(labels)) + "|")
    for name, threads, targets, ours, peer, repeat, ratios in rows:
        counts = ours.get("nodes_by_plugin", ours.get("nodes", {}))
        nodes = " ".join(f"{k}={v}" for k, v in counts.items())
        cells = [name, str(threads), str(repeat), targets, f"{ours['median_ms']:.2f}"]
        cells += [f"{peer[label]['median_ms']:.2f}" for label in labels]
        for i, label in enumerate(labels):
            r = ratios[label]
            cells.append(f"{statistics.median(r):.2f}")
            if i == 0:
                cells.append(f"{r[0]:.2f}-{r[-1]:.2f}")
        cells += [f"{corpus.cpu_share(counts):.0f}%", nodes]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
