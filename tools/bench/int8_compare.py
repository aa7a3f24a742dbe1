#!/usr/bin/env python3
"""Int8 QDQ models on Tessera's cpu plugin beside its own fp32 and ONNX Runtime, in one run.

For each pair FLOAT.onnx=INT8.onnx (the int8 file made from the float one, e.g. by
tools/bench/int8_quantize.py): the units `tessera plan` shows (int8 units and where they run,
float Conv/Gemm/MatMul left), the agreement of Tessera's int8 outputs with ONNX Runtime's on the
same int8 file (cosine and top-1 over --inputs image-like inputs), and latency: Tessera fp32,
Tessera int8, ORT fp32, ORT int8, each measured in its own fresh process (`tessera bench --json`,
this script with --ort-worker), alternating for --rounds rounds; a latency is the median of the
rounds' medians. Hold /tmp/build.lock while timing on the shared machine.

Usage: int8_compare.py --tessera build/tools/tessera [--threads 2] [--repeat 30] [--rounds 3]
                       [--inputs 5] [--json OUT.json] FLOAT.onnx=INT8.onnx ...
Needs numpy and onnxruntime.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_util import median_ms, ort_cpu_session


def image_like(shape, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    x = rng.random(shape, dtype=np.float32)
    if len(shape) == 4 and shape[1] == 3:
        mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
        std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)
        x = (x - mean) / std
    return x.astype(np.float32)


def input_of(sess):
    i = sess.get_inputs()[0]
    return i.name, [d if isinstance(d, int) else 1 for d in i.shape]


def ort_worker(model, threads, repeat, warmup):
    sess = ort_cpu_session(model, threads)
    name, shape = input_of(sess)
    feeds = {name: image_like(shape, 0)}
    print(json.dumps({"median_ms": median_ms(lambda: sess.run(None, feeds), repeat, warmup)}))


def tessera_ms(tessera, model, threads, repeat, workdir):
    import numpy as np
    sess = ort_cpu_session(model, 1)
    name, shape = input_of(sess)
    path = os.path.join(workdir, "bench_input.npy")
    np.save(path, image_like(shape, 0))
    out = subprocess.run([tessera, "bench", model, "--targets", "cpu", "--threads", str(threads),
                          "--repeat", str(repeat), "--input", f"{name}={path}", "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"tessera bench {model} failed:\n{out.stderr}")
    return json.loads(out.stdout)["median_ms"]


def ort_ms(model, threads, repeat):
    out = subprocess.run([sys.executable, __file__, "--ort-worker", model, "--threads",
                          str(threads), "--repeat", str(repeat)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"ORT worker on {model} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])["median_ms"]


def units(tessera, model):
    out = subprocess.run([tessera, "plan", model, "--targets", "cpu", "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"tessera plan {model} failed:\n{out.stderr}")
    nodes = json.loads(out.stdout)["nodes"]
    unit_nodes = [n for n in nodes if n["op_type"].startswith("TesseraQLinear")]
    return {"int8_units": len(unit_nodes),
            "int8_units_on_cpu": sum(n["plugin"] == "cpu" for n in unit_nodes),
            "float_conv_gemm_matmul": sum(n["op_type"] in ("Conv", "Gemm", "MatMul")
                                          for n in nodes)}


def agreement(tessera, model, count, workdir):
    import numpy as np
    sess = ort_cpu_session(model, 2)
    name, shape = input_of(sess)
    cosines, same_top1 = [], 0
    for seed in range(1, count + 1):
        x = image_like(shape, seed)
        ref = sess.run(None, {name: x})[0].astype(np.float64).ravel()
        path = os.path.join(workdir, "agree_input.npy")
        np.save(path, x)
        outdir = os.path.join(workdir, "out")
        out = subprocess.run([tessera, "run", model, "--targets", "cpu", "--input", f"{name}={path}",
                              "--output-dir", outdir, "--force", "--quiet", "--repeat", "1"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"tessera run {model} failed:\n{out.stderr}")
        got = np.load(os.path.join(outdir, sess.get_outputs()[0].name + ".npy"))
        got = got.astype(np.float64).ravel()
        cosines.append(float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref))))
        same_top1 += int(got.argmax() == ref.argmax())
    return {"min_cosine": min(cosines), "top1_agree": f"{same_top1}/{count}"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessera")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--inputs", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--ort-worker")
    ap.add_argument("pairs", nargs="*")
    args = ap.parse_args()
    if args.ort_worker:
        ort_worker(args.ort_worker, args.threads, args.repeat, 3)
        return
    if not args.tessera or not args.pairs:
        ap.error("--tessera and at least one FLOAT.onnx=INT8.onnx are required")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for pair in args.pairs:
            fp32, int8 = pair.split("=", 1)
            row = {"model": os.path.basename(int8), **units(args.tessera, int8),
                   **agreement(args.tessera, int8, args.inputs, workdir)}
            times = {k: [] for k in ("tessera_fp32", "tessera_int8", "ort_fp32", "ort_int8")}
            for r in range(args.rounds):
                times["tessera_fp32"].append(tessera_ms(args.tessera, fp32, args.threads,
                                                        args.repeat, workdir))
                times["ort_fp32"].append(ort_ms(fp32, args.threads, args.repeat))
                times["tessera_int8"].append(tessera_ms(args.tessera, int8, args.threads,
                                                        args.repeat, workdir))
                times["ort_int8"].append(ort_ms(int8, args.threads, args.repeat))
                print(f"{row['model']} round {r + 1}: " +
                      " ".join(f"{k}={v[-1]:.2f}" for k, v in times.items()), file=sys.stderr)
            for k, v in times.items():
                row[k + "_ms"] = round(statistics.median(v), 2)
            row["int8_over_fp32"] = round(row["tessera_int8_ms"] / row["tessera_fp32_ms"], 2)
            rows.append(row)
    print(f"threads {args.threads}, load average {os.getloadavg()[0]:.2f}")
    print("| model | units on cpu | tessera fp32 | tessera int8 | int8/fp32 | ORT fp32 | ORT int8 "
          "| min cosine vs ORT int8 | top-1 agree |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['model']} | {r['int8_units_on_cpu']}/{r['int8_units']} | "
              f"{r['tessera_fp32_ms']} | {r['tessera_int8_ms']} | {r['int8_over_fp32']} | "
              f"{r['ort_fp32_ms']} | {r['ort_int8_ms']} | {r['min_cosine']:.5f} | "
              f"{r['top1_agree']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
