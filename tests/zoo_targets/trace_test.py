#!/usr/bin/env python3
"""`tessera bench --trace`: the file is a Chrome trace (JSON, Trace Event Format) that holds what
the run did. On a zoo network with cpu and reference targets it checks: one "run" event per
measured run; per run one event per region of the plan, on its plugin's track, inside its run;
node events named after graph nodes (every cpu node, since the cpu plugin times its nodes), each
inside its region, with the op, placement reason and schedule config in their args; the plan's
targets and packs in the metadata; and that an existing file is kept without --force. Also
`bench --json` and `plan --json`: one JSON object each with the model, precision, targets,
packs, regions, node counts and warnings (bench: statistics with the standard deviation, and the
run counters, no bytes copied host<->device on cpu and reference; plan: every graph node);
`info --json`: every plugin `plan` placed nodes on, each device with its stable id, named by its
selector `plugin:id`; `run --json`: the plan's counts, latency and each output with the file it wrote;
`tune --json`: the summary with every task's workload and weight.
Usage: trace_test.py TESSERA_BIN WORKDIR
"""
import collections
import json
import os
import subprocess
import sys

import onnx


def main():
    tessera, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "squeezenet.onnx")
    subprocess.run([tessera, "zoo", "squeezenet_v1.1", "-o", model, "--force"], check=True,
                   capture_output=True)
    trace = os.path.join(work, "trace.json")
    if os.path.exists(trace):
        os.remove(trace)
    repeat = 3
    bench = [tessera, "bench", model, "--targets", "cpu,reference", "--repeat", str(repeat),
             "--warmup", "1", "--trace", trace]
    subprocess.run(bench, check=True, capture_output=True)
    with open(trace) as f:
        data = json.load(f)
    events = data["traceEvents"]
    failures = []
    nodes = {n.name: n.op_type for n in onnx.load(model).graph.node}
    runs = sorted((e for e in events if e.get("cat") == "run"), key=lambda e: e["ts"])
    if len(runs) != repeat:
        failures.append(f"{len(runs)} run events for {repeat} runs")
    tracks = {e["tid"]: e["args"]["name"] for e in events
              if e.get("ph") == "M" and e["name"] == "thread_name"}
    regions = [e for e in events if e.get("cat") == "region"]
    per_run = collections.Counter()
    eps = 1.0  # us: rounding of the printed times
    for r in regions:
        run = [i for i, e in enumerate(runs) if e["ts"] - eps <= r["ts"] and
               r["ts"] + r["dur"] <= e["ts"] + e["dur"] + eps]
        if len(run) != 1:
            failures.append(f"{r['name']} at {r['ts']} lies in no single run")
            continue
        per_run[run[0]] += 1
        if not tracks.get(r["tid"], "").startswith(r["args"]["plugin"] + " ("):
            failures.append(f"{r['name']} is on track '{tracks.get(r['tid'])}'")
    if len(set(per_run.values())) != 1 or len(per_run) != repeat:
        failures.append(f"regions per run differ: {dict(per_run)}")
    node_events = [e for e in events if e.get("cat") == "node"]
    for n in node_events:
        if n["name"] not in nodes:
            failures.append(f"node event '{n['name']}' is no graph node")
            continue
        if n["args"].get("op") != nodes[n["name"]]:
            failures.append(f"{n['name']}: op {n['args'].get('op')}, graph {nodes[n['name']]}")
        for key in ("placement", "config", "estimate"):
            if not n["args"].get(key):
                failures.append(f"{n['name']}: no '{key}' in args")
        inside = [r for r in regions if r["tid"] == n["tid"] and r["ts"] - eps <= n["ts"] and
                  n["ts"] + n["dur"] <= r["ts"] + r["dur"] + eps]
        if len(inside) != 1:
            failures.append(f"{n['name']} at {n['ts']} is inside {len(inside)} regions")
    placed = collections.Counter()
    for line in subprocess.run([tessera, "plan", model, "--targets", "cpu,reference"],
                               capture_output=True, text=True, check=True).stdout.splitlines():
        if line.startswith("nodes by plugin:"):
            placed = collections.Counter({k: int(v) for k, v in
                                          (i.split("=") for i in line.split(":")[1].split())})
    if len(node_events) != placed["cpu"] * repeat:
        failures.append(f"{len(node_events)} node events for {placed['cpu']} cpu nodes x {repeat}")
    meta = data["otherData"]
    if not meta.get("targets") or not meta.get("packs") or meta.get("precision") != "fp32":
        failures.append(f"metadata lacks targets, packs or precision: {meta}")
    again = subprocess.run(bench, capture_output=True, text=True)
    if again.returncode == 0 or "exists; pass --force" not in again.stderr:
        failures.append(f"an existing trace was not kept: exit {again.returncode} {again.stderr}")
    common = {"model", "precision", "targets", "packs", "regions", "nodes_by_plugin", "warnings"}
    bench_json = json.loads(subprocess.run(
        [tessera, "bench", model, "--targets", "cpu,reference", "--repeat", "3", "--json"],
        capture_output=True, text=True, check=True).stdout)
    counters = {"host_device_bytes_per_run", "max_regions_in_flight", "overlap_us"}
    statistics = {"median_ms", "stddev_ms", "repeat", "threads"}
    missing = (common | counters | statistics) - set(bench_json)
    if missing or bench_json["model"] != model or bench_json["nodes_by_plugin"] != dict(placed):
        failures.append(f"bench --json: missing {sorted(missing)} or wrong model/counts")
    # cpu and reference work on host memory: nothing crosses to a device.
    elif bench_json["host_device_bytes_per_run"] != 0 or bench_json["max_regions_in_flight"] < 1:
        failures.append(f"bench --json: counters wrong for host plugins: "
                        f"{ {k: bench_json[k] for k in counters} }")
    plan_json = json.loads(subprocess.run(
        [tessera, "plan", model, "--targets", "cpu,reference", "--json"],
        capture_output=True, text=True, check=True).stdout)
    missing = (common | {"nodes"}) - set(plan_json)
    if missing or sorted(n["name"] for n in plan_json["nodes"]) != sorted(nodes):
        failures.append(f"plan --json: missing {sorted(missing)} or not every graph node")
    if sum(r["nodes"] for r in plan_json.get("regions", [])) != len(nodes):
        failures.append("plan --json: the regions' node counts do not add up to the graph's")
    info = json.loads(subprocess.run([tessera, "info", "--json"], capture_output=True, text=True,
                                     check=True).stdout)
    plugins = {p["name"]: p for p in info["plugins"]}
    for name in placed:
        devices = plugins.get(name, {}).get("devices", [])
        if not devices or any(not d.get("id") or d["selector"] != f"{name}:{d['id']}"
                              for d in devices):
            failures.append(f"info --json: plugin '{name}' missing or a device without its id")
    out_dir = os.path.join(work, "run-json")
    run_json = json.loads(subprocess.run(
        [tessera, "run", model, "--targets", "cpu,reference", "--repeat", "2", "--json",
         "--output-dir", out_dir, "--force"], capture_output=True, text=True, check=True).stdout)
    outputs = run_json.get("outputs", [])
    if (run_json.get("nodes_by_plugin") != dict(placed) or
            run_json.get("latency_ms", {}).get("median", 0) <= 0 or not outputs or
            any(not os.path.exists(o["file"]) for o in outputs)):
        failures.append(f"run --json: counts, latency or outputs wrong: {run_json}")
    tune_json = json.loads(subprocess.run(
        [tessera, "tune", model, "--targets", "cpu", "--trials", "4", "--verify", "0", "--json"],
        capture_output=True, text=True, check=True).stdout)
    tasks = tune_json.get("tasks", [])
    if (not tasks or any(t["weight"] < 1 or not t["workload"] for t in tasks) or
            sum(t["trials"] for t in tasks) != 4):
        failures.append(f"tune --json: tasks, weights or trials wrong: {tune_json}")
    for f in failures:
        print("trace:", f)
    print(f"trace: {len(runs)} runs, {len(regions)} region and {len(node_events)} node events, "
          f"{len(failures)} problems")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
