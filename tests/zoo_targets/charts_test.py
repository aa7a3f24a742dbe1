#!/usr/bin/env python3
"""The benchmark charts against their sources: tools/bench/tune_curve.py on the log of a short
real `tessera tune` (a three-conv model, two tasks, weights 1 and 2, 20 trials, verification on)
and tools/bench/op_chart.py on a real `tessera bench --profile --json` (squeezenet on cpu) and on
a two-plugin profile written here. Each SVG is parsed as XML and checked:

- the numbers it embeds equal those this test recomputes from the log or the JSON on its own:
  the curve's points (trial, seconds, weighted best estimate), the defaults', final and verified
  estimates (the verified one also against the tuner's own "after" line), per plugin each op
  type's summed node medians and count, the time outside node kernels, the slowest nodes;
- the drawn shapes are those numbers: the curve's path is an affine image of its points (a
  straight-axes plot of exactly them) and every bar's width is proportional to its value;
- an existing chart is kept without --force, and a malformed log or profile is refused with an
  error naming the file.
Skips (exit 77) when matplotlib is missing; with CI=true that fails instead.
Usage: charts_test.py TESSERA_BIN TOOLS_BENCH_DIR WORKDIR
"""
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
DC = "{http://purl.org/dc/elements/1.1/}"
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def close(a, b, rel=1e-9, abs_=1e-9):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def require_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            print("charts: CI requires matplotlib (CI=true), absent here "
                  "(tools/setup-deps.sh installs it)")
            sys.exit(1)
        print("Skipped\nneeds matplotlib: tools/setup-deps.sh installs it")
        sys.exit(77)


def three_convs(path):
    """conv3x3 16->32, then two 1x1 32->32 convs of one workload: two tasks, weights 1 and 2."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
               for n, s in (("w1", (32, 16, 3, 3)), ("w2", (32, 32, 1, 1)),
                            ("w3", (32, 32, 1, 1)))]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv3x3", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv1x1_a"),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Conv", ["r2", "w3"], ["y"], name="conv1x1_b")]
    graph = helper.make_graph(
        nodes, "three_convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             [1, 16, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 28, 28])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def run(cmd, expect_ok=True):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok and out.returncode != 0:
        raise SystemExit(f"charts: {' '.join(cmd)} failed ({out.returncode}): {out.stderr}")
    return out


def fresh(path):
    if os.path.exists(path):
        os.remove(path)
    return path


def svg_of(path):
    root = ET.parse(path).getroot()
    description = next(root.iter(DC + "description"), None)
    if description is None:
        raise SystemExit(f"charts: {path} has no dc:description metadata")
    return root, json.loads(description.text)


def vertices(root, gid):
    """The (x, y) vertices of the path inside <g id=gid>."""
    group = next((g for g in root.iter(SVG + "g") if g.get("id") == gid), None)
    if group is None:
        return None
    path = next(group.iter(SVG + "path"))
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", path.get("d"))]
    return list(zip(numbers[0::2], numbers[1::2]))


def affine_image(drawn, expected, what):
    """Each drawn coordinate is a * expected + b for one a and b (0.01 px)."""
    lo = min(range(len(expected)), key=lambda i: expected[i])
    hi = max(range(len(expected)), key=lambda i: expected[i])
    if expected[hi] == expected[lo]:
        return check(max(drawn) - min(drawn) < 0.01, f"{what}: equal values drawn apart")
    a = (drawn[hi] - drawn[lo]) / (expected[hi] - expected[lo])
    b = drawn[lo] - a * expected[lo]
    worst = max(abs(a * e + b - d) for d, e in zip(drawn, expected))
    return check(worst < 0.01, f"{what}: drawn {worst:.3f} px from its data")


# --- the tuning curve --------------------------------------------------------------------------

def expected_curve(log):
    """The curve recomputed from the log: search records (no stage) in order, each task at its
    best ok median so far, weighted; points once every task has one, at each improvement."""
    records = [json.loads(line) for line in open(log) if line.strip()]
    weights = {(r["plugin"], r["workload"]): r["weight"] for r in records}
    start = _epoch(records[0]["timestamp"])
    best, first, points, trials = {}, {}, [], 0
    for r in records:
        if "stage" in r:
            continue
        trials += 1
        key = (r["plugin"], r["workload"])
        if r["status"] != "ok":
            continue
        first.setdefault(key, r["median_us"])
        if key not in best or r["median_us"] < best[key]:
            best[key] = r["median_us"]
            if len(best) == len(weights):
                points.append((trials, _epoch(r["timestamp"]) - start,
                               sum(w * best[k] for k, w in weights.items())))
    rounds = collections.defaultdict(lambda: collections.defaultdict(list))
    defaults = {}
    for r in records:
        if r.get("stage") == "verify" and r["status"] == "ok":
            config = r["schedule"] + "".join(f"|{n}={v}" for n, v in r["knobs"].items())
            rounds[(r["plugin"], r["workload"])][config].append(r["median_us"])
            if r.get("default") is True:
                defaults[(r["plugin"], r["workload"])] = config
    medians = {k: {c: statistics.median(t) for c, t in configs.items()}
               for k, configs in rounds.items()}
    fastest = {k: min(sorted(m), key=lambda c: m[c]) for k, m in medians.items()}
    model = collections.Counter()
    for k, c in fastest.items():
        model[k[0]] += weights[k] * medians[k][c]

    def pack_time(k):
        # tuner.hpp's best_records: configs within max(0.125% of the model / weight, the larger
        # median absolute deviation of the two configs' rounds, capped at 5% of the fastest) of
        # the fastest median tie; the default wins a tie, else the first config text.
        m, f = medians[k], medians[k][fastest[k]]

        def mad(c):
            return statistics.median(abs(x - m[c]) for x in rounds[k][c])
        ties = sorted(c for c in m if m[c] - f <= max(
            0.00125 * model[k[0]] / weights[k], min(max(mad(fastest[k]), mad(c)), 0.05 * f)))
        return m[defaults[k]] if defaults.get(k) in ties else m[ties[0]]

    verified = sum(w * pack_time(k) for k, w in weights.items())
    return {"points": points, "default": sum(w * first[k] for k, w in weights.items()),
            "verified": verified, "trials": trials, "weights": weights,
            "end": _epoch(records[-1]["timestamp"]) - start}


def _epoch(stamp):
    import calendar
    import time
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def check_curve(tessera, bench_dir, work):
    model = os.path.join(work, "three_convs.onnx")
    three_convs(model)
    log = fresh(os.path.join(work, "tune.jsonl"))
    tune = run([tessera, "tune", model, "--targets", "cpu", "--trials", "20", "--log", log])
    after = re.search(r"estimated total latency of tuned nodes: ([\d.]+) us before, "
                      r"([\d.]+) us after", tune.stdout)
    svg = fresh(os.path.join(work, "curve.svg"))
    curve_cmd = [sys.executable, os.path.join(bench_dir, "tune_curve.py"), log, "-o", svg]
    text = run(curve_cmd).stdout
    want = expected_curve(log)
    check(sorted(want["weights"].values()) == [1, 2],
          f"tune: task weights {sorted(want['weights'].values())}, the model has 1 and 2")
    root, data = svg_of(svg)
    got = [(c["trial"], c["seconds"], c["estimate_us"]) for c in data["curve"]]
    check(len(got) == len(want["points"]) and
          all(g[:2] == w[:2] and close(g[2], w[2]) for g, w in zip(got, want["points"])),
          f"curve: embedded {got}, the log gives {want['points']}")
    check(close(data["default_us"], want["default"]),
          f"curve: defaults {data['default_us']}, the log gives {want['default']}")
    check(close(data["final_us"], want["points"][-1][2]), "curve: final is not the last point")
    check(data["trials"] == want["trials"] == 20, f"curve: {data['trials']} trials, ran 20")
    verified = (data.get("verified") or {}).get("estimate_us")
    check(verified is not None and close(verified, want["verified"]),
          f"curve: verified {verified}, the log gives {want['verified']}")
    check(after is not None and verified is not None and abs(verified - float(after[2])) <= 0.1,
          f"curve: verified {verified} us, the tuner printed {after and after[2]} us after")
    check(f"{want['points'][-1][2] / 1000:.2f}" in text, "curve: text lacks the final estimate")
    for gid, axis, end in (("curve-trials", 0, want["trials"]),
                           ("curve-seconds", 1, want["end"])):
        drawn = vertices(root, gid)
        if not check(drawn is not None, f"curve: no <g id='{gid}'> in {svg}"):
            continue
        # A post step through the points and on to `end` at the last estimate:
        # p0, (x1, y0), p1, (x2, y1), p2, ..., (end, y_last), (end, y_last).
        xs = [p[axis] for p in want["points"]] + [max(end, want["points"][-1][axis])]
        ys = [p[2] for p in want["points"]] + [want["points"][-1][2]]
        stair = [(xs[0], ys[0])]
        for i in range(1, len(xs)):
            stair += [(xs[i], ys[i - 1]), (xs[i], ys[i])]
        if check(len(drawn) == len(stair), f"{gid}: {len(drawn)} vertices, {len(stair)} wanted"):
            affine_image([d[0] for d in drawn], [s[0] for s in stair], f"{gid} x")
            affine_image([d[1] for d in drawn], [s[1] for s in stair], f"{gid} y")
    kept = os.path.getmtime(svg)
    again = run(curve_cmd, expect_ok=False)
    check(again.returncode != 0 and svg in again.stderr and "--force" in again.stderr and
          os.path.getmtime(svg) == kept, f"curve: existing chart not kept: {again.stderr}")
    check(run(curve_cmd + ["--force"], expect_ok=False).returncode == 0, "curve: --force failed")
    broken = os.path.join(work, "broken.jsonl")
    with open(log) as src, open(broken, "w") as dst:
        lines = src.readlines()
        dst.writelines(lines[:3] + ['{"plugin": "cpu", "status": "ok"\n'] + lines[3:])
    bad = run([sys.executable, os.path.join(bench_dir, "tune_curve.py"), broken], False)
    check(bad.returncode != 0 and f"{broken}:4:" in bad.stderr,
          f"curve: malformed line 4 not named: {bad.stderr}")
    return len(got)


# --- the per-op chart --------------------------------------------------------------------------

def expected_ops(profile):
    """Per plugin, recomputed from the JSON: {op: (sum of nonzero node medians, count)}, the
    regions' time less the nodes', and the node medians."""
    out = {}
    for p in profile:
        plugin = out.setdefault(p["plugin"], {"ops": collections.defaultdict(lambda: [0.0, 0]),
                                              "region": 0.0, "nodes": 0.0, "node_us": []})
        if not p["node"]:
            plugin["region"] += p["median_us"]
        else:
            plugin["nodes"] += p["median_us"]
            if p["median_us"] > 0:
                plugin["ops"][p["op"]][0] += p["median_us"]
                plugin["ops"][p["op"]][1] += 1
                plugin["node_us"].append(p["median_us"])
    return out


def bar_widths(root, gid, count):
    widths = []
    for i in range(count):
        drawn = vertices(root, f"{gid}.{i}")
        if drawn is None:
            return None
        widths.append(max(x for x, _ in drawn) - min(x for x, _ in drawn))
    return widths


def check_ops_chart(bench_dir, source, svg, top):
    with open(source) as f:
        profile = json.load(f)["profile"]
    run([sys.executable, os.path.join(bench_dir, "op_chart.py"), source, "-o", fresh(svg),
         "--top", str(top)])
    want = expected_ops(profile)
    root, data = svg_of(svg)
    texts = {"".join(t.itertext()).strip() for t in root.iter(SVG + "text")}
    check(sorted(data["plugins"]) == sorted(want), f"ops: plugins {sorted(data['plugins'])}")
    bars = 0
    for name, w in want.items():
        got = data["plugins"].get(name, {"ops": [], "nodes": []})
        got_ops = {o["op"]: (o["us"], o["nodes"]) for o in got["ops"]}
        check(got_ops.keys() == w["ops"].keys() and
              all(close(got_ops[k][0], w["ops"][k][0]) and got_ops[k][1] == w["ops"][k][1]
                  for k in got_ops), f"ops {name}: embedded {got_ops}, the JSON gives "
                                     f"{dict(w['ops'])}")
        check(close(got["outside_nodes_us"], w["region"] - w["nodes"]),
              f"ops {name}: outside nodes {got['outside_nodes_us']}, the JSON gives "
              f"{w['region'] - w['nodes']}")
        slowest = sorted(w["node_us"], reverse=True)[:top]
        check([n["us"] for n in got["nodes"]] == slowest,
              f"ops {name}: slowest nodes {[n['us'] for n in got['nodes']]}, wanted {slowest}")
        series = data["series"].get(f"{name}-ops", [])
        check(series == [o["us"] for o in got["ops"]] + [max(w["region"] - w["nodes"], 0.0)],
              f"ops {name}: plotted {series} are not the op sums and the outside time")
        for label in [f"{o['op']} ({o['nodes']})" for o in got["ops"]]:
            check(label in texts, f"ops {name}: no label '{label}' in {svg}")
        for gid, values in ((f"{name}-ops", series),
                            (f"{name}-nodes", data["series"].get(f"{name}-nodes", []))):
            widths = bar_widths(root, gid, len(values))
            if not check(widths is not None and len(values) > 0, f"{gid}: bars missing"):
                continue
            bars += len(widths)
            scale = max(widths) / max(values)
            worst = max(abs(wd - v * scale) for wd, v in zip(widths, values))
            check(worst < 0.01, f"{gid}: a bar is {worst:.3f} px off its value")
    return bars


def check_ops(tessera, bench_dir, work):
    model = os.path.join(work, "squeezenet.onnx")
    run([tessera, "zoo", "squeezenet_v1.1", "-o", model, "--force"])
    profile = os.path.join(work, "bench_profile.json")
    with open(profile, "w") as f:
        f.write(run([tessera, "bench", model, "--targets", "cpu", "--profile", "--json",
                     "--repeat", "5"]).stdout)
    bars = check_ops_chart(bench_dir, profile, os.path.join(work, "ops.svg"), 5)
    # Two plugins, a fused node and a node-less region, with numbers chosen here.
    two = os.path.join(work, "two_plugins.json")
    rows = [(0, "cpu", "", "", 300.0), (0, "cpu", "c1", "Conv", 120.5),
            (0, "cpu", "c2", "Conv", 80.25), (0, "cpu", "r1", "Relu", 0.0),
            (0, "cpu", "p1", "MaxPool", 40.0), (1, "reference", "", "", 90.0),
            (1, "reference", "s1", "Softmax", 60.0), (1, "reference", "t1", "TopK", 25.0)]
    with open(two, "w") as f:
        json.dump({"median_ms": 0.4, "profile": [
            {"region": r, "plugin": p, "node": n, "op": o, "median_us": us}
            for r, p, n, o, us in rows]}, f)
    bars += check_ops_chart(bench_dir, two, os.path.join(work, "two_plugins.svg"), 2)
    bad = os.path.join(work, "bad_profile.json")
    with open(bad, "w") as f:
        json.dump({"profile": [{"region": 0, "plugin": "cpu", "node": "c1", "op": "Conv"}]}, f)
    out = run([sys.executable, os.path.join(bench_dir, "op_chart.py"), bad, "-o",
               fresh(os.path.join(work, "bad.svg"))], expect_ok=False)
    check(out.returncode != 0 and bad in out.stderr and "profile[0]" in out.stderr and
          not os.path.exists(os.path.join(work, "bad.svg")),
          f"ops: malformed profile not refused by name: {out.stderr}")
    kept = run([sys.executable, os.path.join(bench_dir, "op_chart.py"), two, "-o",
                os.path.join(work, "two_plugins.svg")], expect_ok=False)
    check(kept.returncode != 0 and "--force" in kept.stderr, "ops: existing chart not kept")
    return bars


def main():
    tessera, bench_dir, work = sys.argv[1:4]
    require_matplotlib()
    os.makedirs(work, exist_ok=True)
    points = check_curve(tessera, bench_dir, work)
    bars = check_ops(tessera, bench_dir, work)
    for f in failures:
        print("charts:", f)
    print(f"charts: curve of {points} points, {bars} bars checked, {len(failures)} problems")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
