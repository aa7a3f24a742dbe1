#!/usr/bin/env python3
"""Where a model's time goes, per op type, as a bar chart per plugin (SVG or PNG, matplotlib).

Reads `tessera bench --profile --json` (per-node medians over the measured runs): a saved file
(SOURCE ending in .json), or runs it on a model or deployment YAML (SOURCE) with --tessera. Per
plugin, one horizontal bar per op type: the sum of its nodes' medians, with the node count; nodes
that show 0 (fused into another node's kernel) are named under the chart, and so is the time of
the plugin's regions outside any node's kernel (the regions' medians less the nodes'). --top N
adds the N slowest nodes per plugin beside it. --ort (a model run here) adds ONNX Runtime's
per-node times from its profiler, matched to Tessera's nodes as tools/bench/node_compare.py does
and summed by the Tessera node's op type, beside each bar.

Prints the table the chart shows. An existing chart is kept unless --force; the plotted numbers
are embedded in the file (tools/bench/chart_output.py).

Usage: op_chart.py PROFILE.json -o OPS.svg|OPS.png [--top N] [--force] [--title TEXT]
       op_chart.py MODEL.onnx --tessera build/tools/tessera -o OPS.svg [--targets cpu]
                   [--threads N] [--repeat 30] [--top N] [--ort]
"""
import argparse
import collections
import json
import subprocess
import sys


def run_bench(tessera, model, targets, threads, repeat):
    cmd = [tessera, "bench", model, "--profile", "--json", "--repeat", str(repeat)]
    if targets:
        cmd += ["--targets", targets]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    return out.stdout, " ".join(cmd)


def parse_profile(text, where):
    """The `profile` rows of a `bench --profile --json` object, checked; exits naming `where`
    (the file or command) and the first malformed row."""
    try:
        bench = json.loads(text)
    except json.JSONDecodeError as e:
        sys.exit(f"{where}: not JSON: {e}")
    if not isinstance(bench, dict) or not isinstance(bench.get("profile"), list):
        sys.exit(f"{where}: no 'profile' list; is it `tessera bench --profile --json` output?")
    rows = []
    for i, p in enumerate(bench["profile"]):
        try:
            row = {"plugin": str(p["plugin"]), "node": str(p["node"]), "op": str(p["op"]),
                   "us": float(p["median_us"]), "region": int(p["region"])}
        except (KeyError, TypeError, ValueError) as e:
            sys.exit(f"{where}: profile[{i}] is not a region or node row: {e!r} in {p!r}")
        if row["us"] < 0 or row["us"] != row["us"]:
            sys.exit(f"{where}: profile[{i}]: median_us {p['median_us']!r} is no time")
        rows.append(row)
    if not any(r["node"] for r in rows):
        sys.exit(f"{where}: the profile has no node rows")
    return bench, rows


def per_plugin(rows, top, ort_of_node):
    """Per plugin: op types (slowest first) with their summed node medians and counts, the
    zero-time (fused) nodes per op, the region time outside nodes, and the `top` slowest nodes."""
    plugins = collections.OrderedDict()
    for r in rows:
        p = plugins.setdefault(r["plugin"], {"region_us": 0.0, "node_us": 0.0,
                                             "ops": collections.OrderedDict(),
                                             "fused": collections.Counter(), "nodes": []})
        if not r["node"]:
            p["region_us"] += r["us"]
            continue
        p["node_us"] += r["us"]
        if r["us"] == 0:
            p["fused"][r["op"]] += 1
            continue
        op = p["ops"].setdefault(r["op"], {"op": r["op"], "us": 0.0, "nodes": 0})
        op["us"] += r["us"]
        op["nodes"] += 1
        if ort_of_node is not None:
            op["ort_us"] = op.get("ort_us", 0.0) + ort_of_node.get(r["node"], 0.0)
        p["nodes"].append({"node": r["node"], "op": r["op"], "us": r["us"]})
    out = collections.OrderedDict()
    for name, p in plugins.items():
        out[name] = {
            "ops": sorted(p["ops"].values(), key=lambda o: -o["us"]),
            "nodes": sorted(p["nodes"], key=lambda n: -n["us"])[:top],
            "fused": dict(sorted(p["fused"].items())),
            "region_us": p["region_us"],
            "outside_nodes_us": p["region_us"] - p["node_us"],
        }
    return out


def print_table(plugins, with_ort):
    for name, p in plugins.items():
        print(f"{name}: regions {p['region_us'] / 1000:.3f} ms, outside nodes "
              f"{p['outside_nodes_us'] / 1000:.3f} ms")
        print(f"  {'op':24s} {'nodes':>5s} {'ms':>9s}" + (f" {'ORT ms':>9s}" if with_ort else ""))
        for o in p["ops"]:
            ort = f" {o['ort_us'] / 1000:9.3f}" if with_ort else ""
            print(f"  {o['op']:24s} {o['nodes']:5d} {o['us'] / 1000:9.3f}{ort}")
        if p["fused"]:
            print("  0 us (fused): " + ", ".join(f"{op} x{n}" for op, n in p["fused"].items()))
        for n in p["nodes"]:
            print(f"  node {n['node']:40s} {n['op']:18s} {n['us'] / 1000:9.3f}")


def bars(ax, labels, series, plt_colors, gids, xlabel):
    """Horizontal bars, first label on top; `series` is [(name, values)], side by side. Each bar
    gets the gid `<gids[name]>.<index>`."""
    height = 0.8 / len(series)
    for s, (name, values) in enumerate(series):
        ys = [len(labels) - 1 - i + (len(series) - 1 - 2 * s) * height / 2
              for i in range(len(labels))]
        drawn = ax.barh(ys, [v / 1000 for v in values], height=height, color=plt_colors[s],
                        label=name)
        for i, patch in enumerate(drawn):
            patch.set_gid(f"{gids[name]}.{i}")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(list(reversed(labels)), fontsize="small")
    ax.set_xlabel(xlabel, fontsize="small")
    ax.grid(axis="x", alpha=0.3)


def draw(plugins, path, force, title, with_ort):
    import chart_output
    fmt = chart_output.check_output(path, force)
    plt = chart_output.pyplot()
    columns = 2 if any(p["nodes"] for p in plugins.values()) else 1
    heights = [max(len(p["ops"]), len(p["nodes"]), 1) for p in plugins.values()]
    fig, axes = plt.subplots(len(plugins), columns, squeeze=False,
                             figsize=(5 * columns + 1, 0.9 + 0.3 * sum(heights) + len(plugins)),
                             gridspec_kw={"height_ratios": heights})
    series_values = {}
    for row, (name, p) in enumerate(plugins.items()):
        labels = [f"{o['op']} ({o['nodes']})" for o in p["ops"]]
        series = [("tessera", [o["us"] for o in p["ops"]])]
        gids = {"tessera": f"{name}-ops"}
        if with_ort:
            series.append(("ONNX Runtime", [o["ort_us"] for o in p["ops"]]))
            gids["ONNX Runtime"] = f"{name}-ops-ort"
        # The regions' time outside every node's kernel is a bar of its own (tessera only).
        labels.append("outside node kernels")
        series[0][1].append(max(p["outside_nodes_us"], 0.0))
        if with_ort:
            series[1][1].append(0.0)
        notes = [f"ms, sum of per-node medians; regions {p['region_us'] / 1000:.2f} ms"]
        if p["fused"]:
            notes.append("0 ms (fused): " + ", ".join(f"{op} x{n}"
                                                      for op, n in p["fused"].items()))
        ax = axes[row][0]
        bars(ax, labels, series, ["tab:blue", "tab:orange"], gids, "\n".join(notes))
        ax.patches[len(labels) - 1].set_color("tab:gray")
        for s_name, values in series:
            series_values[gids[s_name]] = values
        ax.set_title(f"{name}: time per op type (nodes)", fontsize="medium")
        if with_ort:
            ax.legend(fontsize="small", loc="lower right")
        if columns == 2:
            nodes_ax = axes[row][1]
            if p["nodes"]:
                bars(nodes_ax, [f"{n['node']} ({n['op']})" for n in p["nodes"]],
                     [("tessera", [n["us"] for n in p["nodes"]])], ["tab:blue"],
                     {"tessera": f"{name}-nodes"}, "ms, median")
                series_values[f"{name}-nodes"] = [n["us"] for n in p["nodes"]]
                nodes_ax.set_title(f"{name}: the {len(p['nodes'])} slowest nodes",
                                   fontsize="medium")
            else:
                nodes_ax.axis("off")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    chart_output.save(fig, path, fmt, {"plugins": plugins, "series": series_values}, force)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="saved `bench --profile --json` output (.json), or a model "
                                   "or deployment YAML to run with --tessera")
    ap.add_argument("-o", "--out", required=True, help="the chart: a .svg or .png file")
    ap.add_argument("--force", action="store_true", help="replace an existing --out file")
    ap.add_argument("--top", type=int, default=0, help="also chart the N slowest nodes per plugin")
    ap.add_argument("--tessera", help="the tessera binary, to run SOURCE")
    ap.add_argument("--targets", help="bench --targets (default: the deployment's or all)")
    ap.add_argument("--threads", type=int,
                    help="bench --threads (default: each plugin's own; with --ort 1)")
    ap.add_argument("--repeat", type=int, default=30, help="bench --repeat (default 30)")
    ap.add_argument("--ort", action="store_true",
                    help="add ONNX Runtime's per-node times (SOURCE must be an ONNX model)")
    ap.add_argument("--title", help="the chart's title")
    args = ap.parse_args()
    if args.top < 0:
        sys.exit(f"--top {args.top}: give 0 or more nodes")
    import chart_output
    chart_output.check_output(args.out, args.force)

    from_file = args.source.lower().endswith(".json")
    if from_file:
        if args.ort:
            sys.exit("--ort runs the model beside ONNX Runtime: give the model, not a profile")
        try:
            with open(args.source, encoding="utf-8") as f:
                text, where = f.read(), args.source
        except OSError as e:
            sys.exit(f"{args.source}: {e.strerror}")
    else:
        if not args.tessera:
            sys.exit(f"{args.source}: running a model needs --tessera BIN (or give a saved "
                     "`bench --profile --json` file ending in .json)")
        threads = args.threads if args.threads is not None or not args.ort else 1
        text, where = run_bench(args.tessera, args.source, args.targets, threads, args.repeat)
    bench, rows = parse_profile(text, where)

    ort_of_node = None
    if args.ort:
        from node_compare import ort_times_of_nodes
        timed = {r["node"]: r["us"] for r in rows if r["node"] and r["us"] > 0}
        ort_of_node, unmatched, ort_ms = ort_times_of_nodes(args.source, timed, threads,
                                                            args.repeat)
        print(f"ONNX Runtime {ort_ms:.2f} ms median run; its nodes without a Tessera match: "
              f"{sum(unmatched.values()) / 1000:.3f} ms in all")
    plugins = per_plugin(rows, args.top, ort_of_node)
    print(f"{where}: median {bench.get('median_ms', float('nan')):.3f} ms")
    print_table(plugins, args.ort)
    draw(plugins, args.out, args.force, args.title, args.ort)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
