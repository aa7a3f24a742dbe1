#!/usr/bin/env python3
"""Benchmarks Tessera's CPU targets beside ONNX Runtime on the same machine, in the same run, with
the same thread counts, and prints the ratio tessera / ONNX Runtime per network and thread count.

Each measurement runs in its own process (`tessera bench --json`, and this script re-invoked with
--ort-worker), so peak memory (max RSS) is per runtime and one cannot warm the other's caches.
With --rounds N (default 3) the two runtimes alternate N times per network and thread count
(tessera, ORT, tessera, ORT, ...), each round a fresh process of --repeat runs after warm-up; a
runtime's latency is the median of its rounds' medians (its p90 likewise), so a slow spell of a
shared or virtual machine, or one process whose memory landed badly, cannot decide the ratio
alone. The per-round medians are printed to stderr.

Usage: cpu_compare.py --tessera build/tools/tessera
                      [--models mobilenet_v2,resnet-18,resnet-50,squeezenet_v1.1]
                      [--targets cpu,reference] [--threads 1,2] [--repeat 30] [--rounds 3]
                      [--workdir DIR]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

from bench_util import ort_cpu_session, run_json, timed_ms


def ort_worker(model, threads, repeat, warmup):
    import numpy as np
    sess = ort_cpu_session(model, threads)
    feeds = {}
    rng = np.random.default_rng(0)
    for i in sess.get_inputs():
        # Open dims (a symbolic batch) run at 1, as Tessera plans them first.
        feeds[i.name] = rng.standard_normal(
            [d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32)
    times = timed_ms(lambda: sess.run(None, feeds), repeat, warmup)
    print(json.dumps({"median_ms": statistics.median(times),
                      "p90_ms": times[min(len(times) - 1, int(0.9 * (len(times) - 1) + 0.5))],
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))


def combine(rounds):
    """One runtime's rounds as one result: medians of the medians and p90s, the largest RSS."""
    out = dict(rounds[0])
    out["median_ms"] = statistics.median(r["median_ms"] for r in rounds)
    out["p90_ms"] = statistics.median(r["p90_ms"] for r in rounds)
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in rounds)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessera")
    ap.add_argument("--models", default="mobilenet_v2,resnet-18,resnet-50,squeezenet_v1.1")
    ap.add_argument("--targets", default="cpu,reference")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir")
    ap.add_argument("--ort-worker", nargs=2, metavar=("MODEL", "THREADS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ort_worker:
        ort_worker(args.ort_worker[0], int(args.ort_worker[1]), args.repeat, args.warmup)
        return
    if not args.tessera:
        ap.error("--tessera is required")
    work = args.workdir or tempfile.mkdtemp(prefix="tessera-cpu-bench-")
    os.makedirs(work, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        model = os.path.join(work, f"{name}.onnx")
        if not os.path.exists(model):
            subprocess.run([args.tessera, "zoo", name, "-o", model], check=True,
                           capture_output=True)
        for threads in [int(t) for t in args.threads.split(",")]:
            ours_rounds, peer_rounds = [], []
            for _ in range(max(1, args.rounds)):
                ours_rounds.append(run_json(
                    [args.tessera, "bench", model, "--targets", args.targets, "--threads",
                     str(threads), "--repeat", str(args.repeat), "--warmup", str(args.warmup),
                     "--json"]))
                peer_rounds.append(run_json(
                    [sys.executable, __file__, "--ort-worker", model, str(threads), "--repeat",
                     str(args.repeat), "--warmup", str(args.warmup)]))
            ours, peer = combine(ours_rounds), combine(peer_rounds)
            rows.append((name, threads, ours, peer))
            ours_ms = " ".join(f"{r['median_ms']:.2f}" for r in ours_rounds)
            peer_ms = " ".join(f"{r['median_ms']:.2f}" for r in peer_rounds)
            print(f"{name} threads={threads}: tessera {ours_ms} ms, ORT {peer_ms} ms (per round)",
                  file=sys.stderr)
    print(f"\nbatch 1, fp32; per runtime the median over {max(1, args.rounds)} alternating rounds "
          f"of the median of {args.repeat} runs after {args.warmup} warm-up; "
          f"tessera targets {args.targets}")
    print("| network | threads | tessera median / p90 ms | ORT median / p90 ms | ratio tessera/ORT"
          " | tessera peak MiB | ORT peak MiB | nodes |")
    print("|---|---|---|---|---|---|---|---|")
    for name, threads, ours, peer in rows:
        nodes = " ".join(f"{k}={v}" for k, v in ours.get("nodes", {}).items())
        print(f"| {name} | {threads} | {ours['median_ms']:.2f} / {ours['p90_ms']:.2f} | "
              f"{peer['median_ms']:.2f} / {peer['p90_ms']:.2f} | "
              f"{ours['median_ms'] / peer['median_ms']:.2f} | {ours['peak_rss_mb']:.0f} | "
              f"{peer['peak_rss_mb']:.0f} | {nodes} |")


if __name__ == "__main__":
    main()
