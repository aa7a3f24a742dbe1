#!/usr/bin/env python3
"""Runs corpus networks on the clml plugin under the CLML emulator and checks them.

For each network (tools/real_models/export.py, cached): `tessera plan --targets TARGETS
--dump-clml DIR` (every dumped CLML subgraph must parse as JSON and name its ops), then `tessera
run --targets TARGETS --json` on a seeded input, compared with ONNX Runtime
(max|tessera - ort| <= rtol * max(1, max|ort|)), printing the nodes per plugin. The emulator is
the test-only OpenCL layer of tests/clml/emulator (OPENCL_LAYERS); it computes CLML's ops with
host loops, so this checks the plugin's mapping and data movement, not Qualcomm's library.

Exit status: 0 passed, 1 failed, 77 skipped (no torch to export, no onnxruntime).
Usage: check_clml.py --tessera BIN --emulator LIB [--targets T] NAME...
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "real_models"))
import corpus  # noqa: E402

SKIP = 77


def check(args, name, env, work):
    python = corpus.torch_python()
    if python is None:
        print(f"clml {name}: SKIPPED: no python3 with torch to export the network")
        return SKIP
    try:
        model = corpus.export(python, [name])[name]["path"]
    except Exception as e:  # noqa: BLE001 - the exporter's failure is the test's failure
        print(f"clml {name}: FAILED: export: {e}")
        return 1
    try:
        import numpy as np
        import onnx
        import onnxruntime as ort
    except ImportError as e:
        print(f"clml {name}: SKIPPED: {e}")
        return SKIP
    dump = os.path.join(work, name + "-dump")
    os.makedirs(dump, exist_ok=True)
    plan = subprocess.run([args.tessera, "plan", model, "--targets", args.targets, "--no-packs",
                           "--dump-clml", dump], capture_output=True, text=True, env=env)
    if plan.returncode != 0:
        print(f"clml {name}: FAILED: plan: {plan.stderr[-2000:]}")
        return 1
    dumped = sorted(glob.glob(os.path.join(dump, "clml-subgraph-*.json")))
    if not dumped:
        print(f"clml {name}: FAILED: --dump-clml wrote no subgraph")
        return 1
    clml_ops = 0
    for path in dumped:
        with open(path) as f:
            sub = json.load(f)  # raises on invalid JSON
        if sub.get("plugin") != "clml" or not sub.get("ops"):
            print(f"clml {name}: FAILED: {path} has no ops")
            return 1
        clml_ops += len(sub["ops"])
    m = onnx.load(model, load_external_data=False)
    inp = m.graph.input[0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    xfile = os.path.join(work, name + "-x.npy")
    np.save(xfile, x)
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None,
                                                                                {inp.name: x})
    run = subprocess.run([args.tessera, "run", model, "--targets", args.targets, "--no-packs",
                          "--input", f"{inp.name}={xfile}", "--output-dir",
                          os.path.join(work, name + "-out"), "--force", "--repeat", "1",
                          "--json"], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        print(f"clml {name}: FAILED: run: {run.stderr[-2000:]}")
        return 1
    result = json.loads(run.stdout)
    worst = 0.0
    for i, w in enumerate(want):
        got = np.load(result["outputs"][i]["file"])
        worst = max(worst, float(np.max(np.abs(got - w)) / max(1.0, float(np.max(np.abs(w))))))
    ok = worst <= args.rtol
    print(f"clml {name}: {'passed' if ok else 'FAILED'}: nodes {result.get('nodes_by_plugin')}, "
          f"{len(dumped)} CLML subgraph(s) with {clml_ops} op(s), max rel err {worst:.3g} "
          f"(rtol {args.rtol})")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="+")
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--emulator", required=True)
    ap.add_argument("--targets", default="clml,adreno:any")
    ap.add_argument("--rtol", type=float, default=1e-4)
    args = ap.parse_args()
    env = dict(os.environ, OPENCL_LAYERS=args.emulator)
    status = 0
    with tempfile.TemporaryDirectory(prefix="tessera-clml-") as work:
        results = [check(args, n, env, work) for n in args.names]
    if any(r == 1 for r in results):
        status = 1
    elif all(r == SKIP for r in results):
        status = SKIP
    return status


if __name__ == "__main__":
    sys.exit(main())
