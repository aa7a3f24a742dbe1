#!/usr/bin/env python3
"""Convergence of a `tessera tune` run, from its JSON-lines log.

The estimated end-to-end latency at time t is the weighted sum, over tasks, of the best median
measured for the task up to t (weights: how often the workload occurs in the model). The weights
come from the log's records (`weight`), or for logs written before records carried it from the
tuner's stdout lines `task N: PLUGIN WORKLOAD xW (...)`. The curve starts once every task has a
measurement (the tuner measures each task's default config first).

Prints the curve (one line per improvement), the final estimate, and the first time the estimate
came within --within (default 5%) of the final one.

Usage: tune_curve.py LOG.jsonl [TUNE_STDOUT] [--start EPOCH_SECONDS] [--within 0.05]
"""
import argparse
import datetime
import json
import re
import sys


def parse_weights(path):
    weights = {}
    pattern = re.compile(r"^task \d+: (\S+) (.*) x(\d+) \(")
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = pattern.match(line)
            if m:
                weights[(m.group(1), m.group(2))] = int(m.group(3))
    return weights


def epoch(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("stdout", nargs="?", help="the tuner's stdout, for logs without weights")
    ap.add_argument("--start", type=float, default=None,
                    help="when tuning started (epoch s); default: the first record's time")
    ap.add_argument("--within", type=float, default=0.05)
    args = ap.parse_args()

    records = []
    with open(args.log, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"{args.log}:{number}: not JSON: {e}")
    if not records:
        sys.exit(f"{args.log}: no records")
    weights = {(r["plugin"], r["workload"]): int(r["weight"]) for r in records if r.get("weight")}
    if not weights:
        if not args.stdout:
            sys.exit(f"{args.log}: its records carry no weights; give the tuner's stdout too")
        weights = parse_weights(args.stdout)
        if not weights:
            sys.exit(f"{args.stdout}: no 'task N: PLUGIN WORKLOAD xW (' lines")
    start = args.start if args.start is not None else epoch(records[0]["timestamp"])

    best = {}
    curve = []  # (seconds, estimate_us, trials)
    for trial, r in enumerate(records, 1):
        key = (r["plugin"], r["workload"])
        if key not in weights or r.get("status") != "ok":
            continue
        us = float(r["median_us"])
        if key in best and best[key] <= us:
            continue
        best[key] = us
        if len(best) == len(weights):
            total = sum(weights[k] * best[k] for k in weights)
            curve.append((epoch(r["timestamp"]) - start, total, trial))
    if not curve:
        sys.exit("the log never has a measurement for every task")

    final = curve[-1][1]
    print("seconds  trials  estimated_total_ms  vs_final")
    for seconds, total, trial in curve:
        print(f"{seconds:7.0f}  {trial:6d}  {total / 1000:18.2f}  {total / final:8.3f}")
    reached = next(c for c in curve if c[1] <= final * (1 + args.within))
    last = epoch(records[-1]["timestamp"]) - start
    print(f"\nfirst complete estimate {curve[0][1] / 1000:.2f} ms at {curve[0][0]:.0f} s; "
          f"final {final / 1000:.2f} ms after {last:.0f} s and {len(records)} measurements")
    print(f"within {args.within * 100:.0f}% of the final estimate after {reached[0]:.0f} s "
          f"({reached[0] / 60:.1f} min, {reached[2]} measurements)")


if __name__ == "__main__":
    main()
