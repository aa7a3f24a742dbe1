#!/usr/bin/env python3
"""Checks one real-model corpus network on `--targets vulkan:any` alone against ONNX Runtime.

Exports the network (tools/real_models/export.py, cached), runs it with `tessera run --targets
vulkan:any[validation=on]` (the Khronos validation layer on, any message fails the run; no other
target: every node must land on vulkan) on a seeded input of batch 1 and, unless --batch1-only,
of batch 2 (the corpus is exported with an open batch, so Tessera plans again), runs ONNX Runtime on the same inputs, and checks max|tessera - ort| <= rtol * max|ort|
(tests/zoo/compare_with_ort.py's check). Prints the max absolute and relative error per output.

Exit status: 0 passed, 1 failed, 77 skipped (no python with torch, no onnxruntime, or no usable
Vulkan device: `tessera info` lists why).

Usage: check_vulkan_network.py --tessera BIN NAME [--rtol R] [--batch1-only]
                               [--precision fp32|fp16-acc32|fp16]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "real_models"))
sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
import corpus  # noqa: E402

SKIP = 77
# The Khronos validation layer is on: any message it reports fails the run.
TARGET = "vulkan:any[validation=on]"


def run(cmd):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    return out, time.perf_counter() - start


def vulkan_usable(tessera):
    info, _ = run([tessera, "info"])
    for line in info.stdout.splitlines():
        # `tessera info` probes with the default selector, which leaves CPU implementations
        # (lavapipe) to 'vulkan:any'.
        if "(vulkan:" in line and ("score 0" not in line or "CPU implementation" in line):
            return True, ""
    reasons = [line.strip() for line in info.stdout.splitlines() if "(vulkan:" in line]
    return False, "; ".join(reasons) or "the vulkan plugin is not loaded"


def run_batch(tessera, name, model, session, batch, rtol, work, precision):
    import numpy as np
    from compare_with_ort import compare
    spec = session.get_inputs()[0]
    shape = [batch] + [int(d) for d in spec.shape[1:]]
    data = np.random.default_rng(2024 + batch).uniform(-1.7, 1.7, shape).astype(np.float32)
    input_path = os.path.join(work, f"input_b{batch}.npy")
    np.save(input_path, data)
    out_dir = os.path.join(work, f"b{batch}")
    cmd = [tessera, "run", model, "--targets", TARGET, "--input", f"{spec.name}={input_path}",
           "--output-dir", out_dir, "--repeat", "1", "--force", "--precision", precision]
    ours_run, tessera_s = run(cmd)
    if ours_run.returncode != 0:
        print(f"vulkan-real-models {name}: `{' '.join(cmd)}` failed:\n{ours_run.stdout[-3000:]}"
              f"{ours_run.stderr[-3000:]}")
        return False
    counts = corpus.nodes_by_plugin(ours_run.stdout)
    if set(counts) != {"vulkan"}:
        print(f"vulkan-real-models {name}: FAIL: nodes by plugin {counts}; every node must run "
              "on vulkan")
        return False
    ok = True
    for meta, reference in zip(session.get_outputs(), session.run(None, {spec.name: data})):
        ours = np.load(os.path.join(out_dir, f"{meta.name}.npy"))
        ok = compare("vulkan-real-models", f"{name} batch {batch}", meta.name, ours, reference,
                     rtol) and ok
    print(f"vulkan-real-models {name} batch {batch}: {counts['vulkan']} nodes on vulkan; "
          f"tessera run {tessera_s:.1f} s (compile + 2 runs)")
    return ok


def check(tessera, name, rtol, batch1_only, precision):
    if name not in corpus.names():
        print(f"vulkan-real-models {name}: not a corpus network (export.py --list)")
        return 1
    python = corpus.torch_python()
    if python is None:
        print(f"vulkan-real-models {name}: SKIPPED: no python3 with torch and torchvision")
        return SKIP
    try:
        from compare_with_ort import ort_session
    except ImportError as e:
        print(f"vulkan-real-models {name}: SKIPPED: {e}")
        return SKIP
    usable, why = vulkan_usable(tessera)
    if not usable:
        print(f"vulkan-real-models {name}: SKIPPED: no usable Vulkan device ({why})")
        return SKIP
    try:
        model = corpus.export(python, [name])[name]["path"]
    except RuntimeError as e:
        print(f"vulkan-real-models {name}: {e}")
        return 1
    work = tempfile.mkdtemp(prefix=f"tessera-vulkan-{name}-")
    ok = True
    try:
        session = ort_session(model)
        for batch in (1,) if batch1_only else (1, 2):
            ok = run_batch(tessera, name, model, session, batch, rtol, work, precision) and ok
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"vulkan-real-models {name}: files kept in {work}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--batch1-only", action="store_true")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "fp16-acc32", "fp16"])
    args = ap.parse_args()
    return check(args.tessera, args.name, args.rtol, args.batch1_only, args.precision)


if __name__ == "__main__":
    sys.exit(main())
