#!/usr/bin/env python3
"""`tessera run --precision fp16 --check-accuracy`: the report against numbers computed here.

The oracle is the two precisions' own outputs: the same model is run once at fp16 and once at
fp32 (both written with --output-dir), and the report's max abs / max rel difference, top-1
agreement and top-5 overlap for that one input must equal what numpy computes from the two files.
Then the budget: a budget below the measured difference exits 1 naming --accuracy-budget, one
above it exits 0, and the accuracy options without --check-accuracy are refused. With
--mixed-precision, a budget the default lists miss makes run search op types to keep in fp32:
it must end within the budget, and a deployment with the lists it prints, run on its own at
fp16, must give outputs within that budget of the fp32 ones (numpy again).
Usage: check_accuracy_test.py TESSERA_BIN MODEL.onnx TARGET WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np


def run(tessera, *args):
    return subprocess.run([tessera, "run", *args], capture_output=True, text=True)


def main():
    tessera, model, target, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    outs = {}
    for precision in ("fp16", "fp32"):
        d = os.path.join(work, precision)
        r = run(tessera, model, "--targets", target, "--precision", precision, "--repeat", "1",
                "--output-dir", d, "--json")
        assert r.returncode == 0, r.stderr
        outs[precision] = json.loads(r.stdout)["outputs"]
    r = run(tessera, model, "--targets", target, "--precision", "fp16", "--repeat", "1",
            "--check-accuracy", "--accuracy-samples", "1", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)["accuracy"]
    assert report["samples"] == 1 and report["reference"] == "fp32", report
    assert len(report["outputs"]) == len(outs["fp32"])
    for got, half, full in zip(report["outputs"], outs["fp16"], outs["fp32"]):
        x = np.load(half["file"]).astype(np.float64)
        ref = np.load(full["file"]).astype(np.float64)
        max_abs = float(np.max(np.abs(x - ref)))
        max_rel = max_abs / max(float(np.max(np.abs(ref))), 1e-30)
        assert max_abs > 0, "fp16 and fp32 gave identical outputs: the check compares nothing"
        assert abs(got["max_abs"] - max_abs) <= 1e-5 * max_abs, (got, max_abs)
        assert abs(got["max_rel"] - max_rel) <= 1e-5 * max_rel, (got, max_rel)
        if ref.ndim == 2 and ref.shape[1] >= 5:
            top1 = np.mean(np.argmax(x, 1) == np.argmax(ref, 1))
            overlap = np.mean([len(set(np.argsort(-a)[:5]) & set(np.argsort(-b)[:5])) / 5
                               for a, b in zip(x, ref)])
            assert got["rows"] == ref.shape[0], got
            assert abs(got["top1_agreement"] - top1) < 1e-9, (got, top1)
            assert abs(got["top5_overlap"] - overlap) < 1e-9, (got, overlap)
        print(f"{got['name']}: max abs {max_abs:.3g}, max rel {max_rel:.3g} (report agrees)")
    worst = max(o["max_rel"] for o in report["outputs"])
    r = run(tessera, model, "--targets", target, "--precision", "fp16", "--repeat", "1",
            "--check-accuracy", "--accuracy-samples", "1", "--accuracy-budget", f"{worst / 2:.3g}")
    assert r.returncode == 1 and "--accuracy-budget" in r.stderr, (r.returncode, r.stderr)
    r = run(tessera, model, "--targets", target, "--precision", "fp16", "--repeat", "1",
            "--check-accuracy", "--accuracy-samples", "1", "--accuracy-budget", f"{worst * 2:.3g}")
    assert r.returncode == 0, r.stderr
    r = run(tessera, model, "--targets", target, "--accuracy-samples", "2")
    assert r.returncode != 0 and "--check-accuracy" in r.stderr, (r.returncode, r.stderr)

    budget = float(f"{worst / 2:.3g}")
    r = run(tessera, model, "--targets", target, "--precision", "fp16", "--mixed-precision",
            "--repeat", "1", "--check-accuracy", "--accuracy-samples", "1", "--accuracy-budget",
            str(budget), "--json")
    assert r.returncode == 0, r.stderr
    searched = json.loads(r.stdout)["accuracy"]
    kept = searched["kept_fp32_op_types"]
    assert kept and searched["within_budget"], searched
    assert all(o["max_rel"] <= budget for o in searched["outputs"]), searched
    deploy = os.path.join(work, "searched.yaml")
    with open(deploy, "w") as f:
        f.write(f"model: {os.path.abspath(model)}\ntargets: [{target}]\nprecision: fp16\n"
                f"mixed_precision: {{never: [{', '.join(kept)}]}}\n")
    d = os.path.join(work, "searched")
    r = run(tessera, deploy, "--repeat", "1", "--output-dir", d, "--json")
    assert r.returncode == 0, r.stderr
    for got, full in zip(json.loads(r.stdout)["outputs"], outs["fp32"]):
        x = np.load(got["file"]).astype(np.float64)
        ref = np.load(full["file"]).astype(np.float64)
        rel = float(np.max(np.abs(x - ref))) / max(float(np.max(np.abs(ref))), 1e-30)
        assert rel <= budget, (got["name"], rel, budget, kept)
    print(f"search kept {kept} in fp32 for budget {budget:.3g}")
    print("ok")


if __name__ == "__main__":
    main()
