#!/usr/bin/env python3
"""Does a tuning run through the farm write the same pack when its agent is killed mid-run?

Starts redis-server on a free port of 127.0.0.1 and one `tessera agent`, then tunes MODEL on
TARGET through the farm three times with the same seed and options:
  A  undisturbed;
  B  the agent killed with SIGKILL once the log holds --kill-after records, restarted (same name,
     so it first hands back the candidate it held) two seconds later;
  C  undisturbed again: how far two runs differ by measurement noise alone.
Then compares the packs entry by entry (schedule and knobs per workload) and the logs (records
per workload: nothing lost, nothing measured twice). Prints one table; for each workload where
packs differ, the verified medians of both choices in each run's log show whether the difference
is larger than the noise. Not a test: the measurements are real, so the outcome depends on the
device's noise.

With --scheduler even (the default here) and --tuner random every run measures the same search
candidates; a --verify at least each task's share of --trials makes every candidate a finalist,
so the packs can differ only where the verified medians do.

Usage: farm_same_pack.py --build build --model resnet18.onnx [--target mali:any] [--trials 200]
                         [--verify 9] [--verify-rounds 3] [--kill-after 100] [--tuner random] [--scheduler even]
"""
import argparse
import collections
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import re
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_agent(tessera, broker, target, name, log):
    return subprocess.Popen([tessera, "agent", "--broker", broker, "--targets", target, "--key",
                             "same-pack", "--name", name],
                            stdout=log, stderr=subprocess.STDOUT)


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def config(entry):
    knobs = entry.get("knobs") or {}
    if isinstance(knobs, list):
        knobs = {k["name"]: k["value"] for k in knobs}
    return entry["schedule"] + " " + " ".join(f"{k}={v}" for k, v in sorted(knobs.items()))


PACK_ENTRY = re.compile(r'- workload: "([^"]*)"\n\s+schedule: (\S+)\n\s+knobs: \{([^}]*)\}')


def pack_entries(path):
    """workload -> config of a pack as `tessera tune --pack` writes it (no YAML library needed:
    the device machine's python has none)."""
    with open(path) as f:
        text = f.read()
    out = {}
    for workload, schedule, knobs in PACK_ENTRY.findall(text):
        pairs = dict(kv.split(": ") for kv in knobs.split(", ") if kv)
        out[workload] = config({"schedule": schedule, "knobs": pairs})
    return out


def verified_medians(records):
    """workload -> config -> median of its verify rounds."""
    rounds = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in records:
        if r.get("stage") == "verify" and r.get("status") == "ok":
            rounds[r["workload"]][config(r)].append(r["median_us"])
    out = {}
    for w, configs in rounds.items():
        out[w] = {c: statistics.median(t) for c, t in configs.items()}
    return out


def tune(args, broker, work, name, kill_after=None, agent_log=None):
    log = os.path.join(work, name + ".jsonl")
    pack = os.path.join(work, name + ".yaml")
    cmd = [args.tessera, "tune", args.model, "--targets", args.target, "--farm", broker, "--key",
           "same-pack", "--seed", "1", "--trials", str(args.trials), "--verify", str(args.verify),
           "--verify-rounds", str(args.verify_rounds), "--tuner", args.tuner, "--scheduler", args.scheduler, "--log", log, "--pack", pack, "--farm-wait", "120"]
    agent = start_agent(args.tessera, broker, args.target, "a1", agent_log)
    start = time.time()
    tuner = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = False
    while tuner.poll() is None:
        time.sleep(0.5)
        if kill_after is not None and not killed and os.path.exists(log):
            with open(log) as f:
                if sum(1 for _ in f) >= kill_after:
                    agent.send_signal(signal.SIGKILL)
                    agent.wait()
                    print(f"  {name}: agent killed after {kill_after} records at "
                          f"{time.time() - start:.0f} s; restarting it in 2 s", flush=True)
                    time.sleep(2)
                    agent = start_agent(args.tessera, broker, args.target, "a1", agent_log)
                    killed = True
    out = tuner.stdout.read()
    agent.send_signal(signal.SIGTERM)
    try:
        agent.wait(timeout=60)
    except subprocess.TimeoutExpired:
        agent.kill()
    if tuner.returncode != 0:
        agent_log.flush()
        with open(agent_log.name) as f:
            agents = f.read()
        sys.exit(f"{name}: tune failed ({tuner.returncode}):\n{out[-1500:]}\n"
                 f"agents' output:\n{agents[-2500:]}")
    print(f"  {name}: {time.time() - start:.0f} s", flush=True)
    return read_log(log), pack_entries(pack)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--tessera", help="the tessera command (default: BUILD/tools/tessera)")
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--out", help="a directory to copy the three runs' logs and packs into")
    ap.add_argument("--model", required=True)
    ap.add_argument("--target", default="mali:any")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--verify", type=int, default=9)
    ap.add_argument("--verify-rounds", type=int, default=3)
    ap.add_argument("--tuner", default="random")
    ap.add_argument("--scheduler", default="even")
    ap.add_argument("--kill-after", type=int, default=100)
    args = ap.parse_args()
    args.tessera = args.tessera or os.path.join(args.build, "tools", "tessera")
    work = tempfile.mkdtemp(prefix="tessera-same-pack-")
    port = free_port()
    redis = subprocess.Popen([args.redis_server, "--port", str(port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    broker = f"redis://127.0.0.1:{port}"
    try:
        time.sleep(0.5)
        with open(os.path.join(work, "agents.log"), "w") as agent_log:
            print(f"{args.model} on {args.target}: --tuner {args.tuner} --scheduler "
                  f"{args.scheduler} --trials {args.trials} "
                  f"--verify {args.verify} --verify-rounds {args.verify_rounds} --seed 1, one agent, work in {work}", flush=True)
            runs = {
                "A": tune(args, broker, work, "A", agent_log=agent_log),
                "B": tune(args, broker, work, "B", kill_after=args.kill_after,
                          agent_log=agent_log),
                "C": tune(args, broker, work, "C", agent_log=agent_log),
            }
    finally:
        redis.terminate()
        redis.wait()
    logs = {k: v[0] for k, v in runs.items()}
    packs = {k: v[1] for k, v in runs.items()}
    medians = {k: verified_medians(v) for k, v in logs.items()}
    counts = {k: collections.Counter((r["workload"], r.get("stage", ""), config(r))
                                     for r in v) for k, v in logs.items()}
    print("\nrecords per run: " + ", ".join(f"{k} {len(v)}" for k, v in logs.items()))
    for k in ("B", "C"):
        lost = sum((counts["A"] - counts[k]).values())
        extra = sum((counts[k] - counts["A"]).values())
        print(f"  {k} vs A: {lost} (workload, stage, config) measurements of A missing, "
              f"{extra} not in A")
    workloads = sorted(set().union(*[set(p) for p in packs.values()]))
    print(f"\n| workload | A | B (killed) same as A | C same as A | note |")
    print("|---|---|---|---|---|")
    same = {"B": 0, "C": 0}
    for w in workloads:
        a = packs["A"].get(w)
        cells = []
        for k in ("B", "C"):
            ok = packs[k].get(w) == a
            same[k] += ok
            cells.append("yes" if ok else packs[k].get(w, "(none)"))
        note = ""
        if not all(packs[k].get(w) == a for k in ("B", "C")):
            parts = []
            for k in ("A", "B", "C"):
                m = medians[k].get(w, {})
                choices = {packs[j].get(w) for j in ("A", "B", "C")}
                parts.append(k + ": " + ", ".join(f"{c.split(' ', 1)[-1]} {m[c]:.1f} us"
                                                  for c in sorted(choices) if c in m))
            note = "; ".join(parts)
        print(f"| {w[:60]} | {a} | {cells[0]} | {cells[1]} | {note} |")
    print(f"\nsame as A: B (killed and restarted) {same['B']}/{len(workloads)}, "
          f"C (undisturbed) {same['C']}/{len(workloads)}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for k in ("A", "B", "C"):
            for ext in (".jsonl", ".yaml"):
                shutil.copy(os.path.join(work, k + ext), args.out)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
