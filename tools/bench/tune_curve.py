#!/usr/bin/env python3
"""Convergence of a `tessera tune` run, from its JSON-lines log.

The estimated end-to-end latency at time t is the weighted sum, over tasks, of the best median
measured for the task up to t (weights: how often the workload occurs in the model). The weights
come from the log's records (`weight`), or for logs written before records carried it from the
tuner's stdout lines `task N: PLUGIN WORKLOAD xW (...)`. The curve starts once every task has a
measurement: the tuner measures each task's default config first, so its first point is the
defaults' estimate. Trials are the search's records; the verification's re-measurements (records
with `"stage": "verify"`) are no trials: they give the verified estimate, each task at the median
over its verification rounds of the config the tuner's pack takes (the lowest, or a tie with it
kept by the default or the first config text; see verified_picks).

Prints the curve (one line per improvement), the defaults' and final estimates, the verified one
when the log has it, and the first time the estimate came within --within (default 5%) of the
final one. With -o FILE.svg or FILE.png also draws the curve against trials and against wall
time, the defaults' and verified estimates marked (matplotlib; an existing FILE is kept unless
--force). The plotted numbers are embedded in the file (tools/bench/chart_output.py).

Usage: tune_curve.py LOG.jsonl [TUNE_STDOUT] [--start EPOCH_SECONDS] [--within 0.05]
                     [-o CURVE.svg|CURVE.png [--force]] [--title TEXT]
"""
import argparse
import datetime
import json
import re
import statistics
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


def read_log(path):
    """The log's records, each checked for the keys the curve reads; exits naming the file and
    line of the first malformed one."""
    records = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
                if not isinstance(r, dict):
                    raise ValueError("not a JSON object")
                for key in ("plugin", "workload", "status", "timestamp"):
                    if not isinstance(r.get(key), str):
                        raise ValueError(f"no string '{key}'")
                r["epoch"] = epoch(r["timestamp"])
                if r["status"] == "ok":
                    r["median_us"] = float(r["median_us"])
                if r.get("weight") is not None:
                    r["weight"] = int(r["weight"])
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{path}:{number}: not a tuning-log record: {e!r}")
            records.append(r)
    if not records:
        sys.exit(f"{path}: no records")
    return records



NOISE_CEILING, MODEL_SHARE = 0.05, 0.00125


def verified_picks(rounds, weights, defaults):
    """Per (plugin, workload), the verified time of the config the tuner's pack takes
    (best_records in core/tune): each config's median over its rounds; a config ties with the
    fastest when its median is within the larger median absolute deviation of the two configs'
    rounds (at most 5% of the fastest median) or within 0.125% of the plugin's model latency (the
    weighted sum of the fastest medians) over the workload's weight; a tie keeps the default
    config, else the first config text wins."""
    def deviation(t):
        m = statistics.median(t)
        return statistics.median(abs(x - m) for x in t)
    fastest = {k: min(sorted(configs), key=lambda c: statistics.median(configs[c]))
               for k, configs in rounds.items()}
    model = {}
    for k, c in fastest.items():
        model[k[0]] = model.get(k[0], 0) + max(1, weights.get(k, 1)) * statistics.median(
            rounds[k][c])
    picks = {}
    for k, configs in rounds.items():
        f = statistics.median(configs[fastest[k]])
        floor = MODEL_SHARE * model[k[0]] / max(1, weights.get(k, 1))
        ties = [c for c in sorted(configs)
                if statistics.median(configs[c]) <= f + max(floor, min(
                    max(deviation(configs[fastest[k]]), deviation(configs[c])),
                    NOISE_CEILING * f))]
        pick = defaults[k] if defaults.get(k) in ties else ties[0]
        picks[k] = statistics.median(configs[pick])
    return picks


def convergence(records, weights, start):
    """The plotted numbers: the curve of improvements over the search's trials, the defaults'
    estimate (each task's first measurement), the final and the verified estimates."""
    best, first, curve, trial = {}, {}, [], 0
    for r in records:
        if r.get("stage"):
            continue
        trial += 1
        key = (r["plugin"], r["workload"])
        if key not in weights or r["status"] != "ok":
            continue
        us = r["median_us"]
        first.setdefault(key, us)
        if key in best and best[key] <= us:
            continue
        best[key] = us
        if len(best) == len(weights):
            total = sum(weights[k] * best[k] for k in weights)
            curve.append({"seconds": r["epoch"] - start, "trial": trial, "estimate_us": total})
    if not curve:
        return None
    rounds, defaults = {}, {}
    for r in records:
        key = (r["plugin"], r["workload"])
        if r.get("stage") == "verify" and r["status"] == "ok" and key in weights:
            # The config as the tuner writes it: schedule, then |name=value in the log's order.
            config = r.get("schedule", "") + "".join(
                f"|{name}={value}" for name, value in (r.get("knobs") or {}).items())
            rounds.setdefault(key, {}).setdefault(config, []).append(r["median_us"])
            if r.get("default"):
                defaults[key] = config
    verified = None
    if rounds:
        picks = verified_picks(rounds, weights, defaults)
        picked = {k: picks.get(k, best[k]) for k in weights}
        verified = {"seconds": records[-1]["epoch"] - start,
                    "estimate_us": sum(weights[k] * picked[k] for k in weights)}
    return {"curve": curve, "trials": trial, "measurements": len(records),
            "default_us": sum(weights[k] * first[k] for k in weights),
            "final_us": curve[-1]["estimate_us"], "verified": verified,
            "seconds": records[-1]["epoch"] - start, "tasks": len(weights)}


def draw(data, path, force, title):
    import chart_output
    fmt = chart_output.check_output(path, force)
    plt = chart_output.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    curve = data["curve"]
    ms = [c["estimate_us"] / 1000 for c in curve]
    for ax, x_key, end, label, gid in (
            (axes[0], "trial", data["trials"], "trials of the search", "curve-trials"),
            (axes[1], "seconds", data["seconds"], "wall time (s)", "curve-seconds")):
        xs = [c[x_key] for c in curve]
        # Steps held to the last trial (or second): the estimate stays until the next gain.
        ax.step(xs + [max(end, xs[-1])], ms + ms[-1:], where="post", color="tab:blue",
                gid=gid, label="best estimate")
        ax.axhline(data["default_us"] / 1000, color="tab:gray", linestyle="--",
                   gid=f"{gid}-default", label="default configs")
        ax.plot(xs[:1], ms[:1], "o", color="tab:gray")
        if data["verified"]:
            x = data["verified"]["seconds"] if x_key == "seconds" else data["trials"]
            ax.plot([x], [data["verified"]["estimate_us"] / 1000], "D", color="tab:green",
                    gid=f"{gid}-verified", label="verified after the search")
        ax.set_xlim(left=0)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("estimated total latency (ms)")
    axes[0].legend(loc="lower left", fontsize="small")
    fig.suptitle(title or f"tuning curve: {data['tasks']} tasks, weighted by occurrences")
    embedded = dict(data, series={"curve-trials": "trial", "curve-seconds": "seconds"})
    chart_output.save(fig, path, fmt, embedded, force)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("stdout", nargs="?", help="the tuner's stdout, for logs without weights")
    ap.add_argument("--start", type=float, default=None,
                    help="when tuning started (epoch s); default: the first record's time")
    ap.add_argument("--within", type=float, default=0.05)
    ap.add_argument("-o", "--out", help="also draw the curve to this .svg or .png file")
    ap.add_argument("--force", action="store_true", help="replace an existing --out file")
    ap.add_argument("--title", help="the chart's title")
    args = ap.parse_args()
    if args.out:
        import chart_output
        chart_output.check_output(args.out, args.force)

    records = read_log(args.log)
    weights = {(r["plugin"], r["workload"]): r["weight"] for r in records if r.get("weight")}
    if not weights:
        if not args.stdout:
            sys.exit(f"{args.log}: its records carry no weights; give the tuner's stdout too")
        weights = parse_weights(args.stdout)
        if not weights:
            sys.exit(f"{args.stdout}: no 'task N: PLUGIN WORKLOAD xW (' lines")
    start = args.start if args.start is not None else records[0]["epoch"]
    data = convergence(records, weights, start)
    if data is None:
        sys.exit(f"{args.log}: the log never has a measurement for every task")

    curve, final = data["curve"], data["final_us"]
    print("seconds  trials  estimated_total_ms  vs_final")
    for c in curve:
        print(f"{c['seconds']:7.0f}  {c['trial']:6d}  {c['estimate_us'] / 1000:18.2f}  "
              f"{c['estimate_us'] / final:8.3f}")
    reached = next(c for c in curve if c["estimate_us"] <= final * (1 + args.within))
    print(f"\ndefault configs {data['default_us'] / 1000:.2f} ms; first complete estimate "
          f"{curve[0]['estimate_us'] / 1000:.2f} ms at {curve[0]['seconds']:.0f} s; "
          f"final {final / 1000:.2f} ms after {data['seconds']:.0f} s, {data['trials']} trials "
          f"and {data['measurements']} measurements")
    if data["verified"]:
        print(f"verified {data['verified']['estimate_us'] / 1000:.2f} ms (each task at the "
              "median over its verification rounds of the config the pack takes)")
    print(f"within {args.within * 100:.0f}% of the final estimate after {reached['seconds']:.0f} s "
          f"({reached['seconds'] / 60:.1f} min, {reached['trial']} trials)")
    if args.out:
        draw(data, args.out, args.force, args.title)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
