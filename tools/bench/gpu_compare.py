#!/usr/bin/env python3
"""Benchmarks Tessera GPU targets beside PyTorch eager (CUDA) and ONNX Runtime (CPU) on one machine,
in one run, and prints a table with ratios.

For each zoo network: `tessera zoo` writes the ONNX model; `tessera run` measures the median
latency per target (and start-up with an empty vs a warm kernel cache); ONNX Runtime runs the same
file on its CPU provider; PyTorch runs torchvision's model of the same architecture (same layer
shapes; weights differ, which does not change the work) in eager mode on CUDA.

Usage: gpu_compare.py --tessera BUNDLE/bin/tessera [--models mobilenet_v2,resnet-18,resnet-50]
                      [--targets mali:any] [--repeat 30] [--workdir DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from bench_util import median_ms, ort_cpu_session, torch_cuda_ms

TORCHVISION = {"mobilenet_v2": "mobilenet_v2", "resnet-18": "resnet18", "resnet-50": "resnet50",
               "resnet-34": "resnet34", "vgg-16": "vgg16_bn", "squeezenet_v1.1": "squeezenet1_1",
               "inception_v3": "inception_v3"}


def tessera_run(tessera, model, target, repeat, cache_dir):
    env = dict(os.environ, TESSERA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    out = subprocess.run([tessera, "run", model, "--targets", f"{target},reference",
                          "--repeat", str(repeat)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"tessera run {model} --targets {target} failed:\n{out.stderr}")
    median = float(re.search(r"latency: median ([0-9.]+) ms", out.stdout).group(1))
    startup = float(re.search(r"compile ([0-9.]+) ms", out.stdout).group(1))
    counts = re.search(r"^nodes by plugin: (.*)$", out.stdout, re.M).group(1)
    placed = int(dict(c.split("=") for c in counts.split()).get(target.split(":")[0], 0))
    total = int(re.search(r"placement \((\d+) nodes", out.stdout).group(1))
    return median, startup, placed, total, wall


def ort_cpu(model, repeat, threads):
    import numpy as np
    sess = ort_cpu_session(model, threads)
    inp = sess.get_inputs()[0]
    x = np.random.default_rng(0).standard_normal(inp.shape).astype(np.float32)
    return median_ms(lambda: sess.run(None, {inp.name: x}), repeat, warmup=1)


def torch_cuda(name, repeat, size):
    import torch
    import torchvision
    if not torch.cuda.is_available():
        return None
    kwargs = {"aux_logits": False, "init_weights": True} if name == "inception_v3" else {}
    model = getattr(torchvision.models, TORCHVISION[name])(weights=None, **kwargs).eval().cuda()
    x = torch.randn(1, 3, size, size, device="cuda")
    return torch_cuda_ms(torch, model, x, repeat, warmup=5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--models", default="mobilenet_v2,resnet-18,resnet-50")
    ap.add_argument("--targets", default="mali:any")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--ort-threads", type=int, default=os.cpu_count())
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="tessera-bench-")
    os.makedirs(work, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        model = os.path.join(work, f"{name}.onnx")
        if not os.path.exists(model):
            subprocess.run([args.tessera, "zoo", name, "-o", model], check=True,
                           capture_output=True)
        size = 299 if name == "inception_v3" else 224
        ort_ms = ort_cpu(model, args.repeat, args.ort_threads)
        torch_ms = torch_cuda(name, args.repeat, size)
        for target in args.targets.split(","):
            cache = os.path.join(work, "cache-" + target.replace(":", "_"))
            shutil.rmtree(cache, ignore_errors=True)
            _, cold, _, _, _ = tessera_run(args.tessera, model, target, 1, cache)
            median, warm, placed, total, _ = tessera_run(args.tessera, model, target,
                                                         args.repeat, cache)
            rows.append((name, target, placed, total, median, cold, warm, torch_ms, ort_ms))
        sys.stdout.flush()
    print(f"\nmedian latency over {args.repeat} runs after warm-up, batch 1, fp32")
    print("| network | tessera target | nodes on target | tessera ms | start-up cold / cached ms"
          " | PyTorch CUDA ms | ORT CPU ms | tessera / PyTorch | tessera / ORT |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, target, placed, total, med, cold, warm, tms, oms in rows:
        tr = f"{med / tms:.2f}" if tms else "n/a"
        ts = f"{tms:.2f}" if tms else "n/a"
        print(f"| {name} | {target} | {placed}/{total} | {med:.2f} | {cold:.0f} / {warm:.0f} | "
              f"{ts} | {oms:.2f} | {tr} | {med / oms:.2f} |")


if __name__ == "__main__":
    main()
