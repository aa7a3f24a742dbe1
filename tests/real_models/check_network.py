#!/usr/bin/env python3
"""Checks one real-model corpus network on Tessera's cpu plugin against ONNX Runtime.

With --lib, batch 1 is also compiled to a package (`tessera compile`) and run from it through
`tessera run` and the C API; both must give the ONNX path's outputs bit for bit.

Exports the network (tools/real_models/export.py, cached) with an interpreter that has torch, runs
it with `tessera run --targets cpu` on a seeded input of batch 1 and of batch 2 (the corpus is
exported with an open batch: Tessera plans batch 1 and plans again for batch 2), runs ONNX Runtime
on the same inputs, and checks max|tessera - ort| <= rtol * max|ort| for each
(tests/zoo/compare_with_ort.py's check).

A network that the cpu plugin cannot yet run alone is listed in needs_reference.txt (beside this
script, one `NAME  reason` a line) and runs with `--targets cpu,reference`. A listed network whose
plan on `--targets cpu` alone succeeds fails the test as a dead entry: the list only shrinks.
A network that Tessera cannot run at all yet (the importer or every plugin lacks an op) is listed
in unsupported.txt: its test checks that `plan --targets cpu,reference` still fails, and reports
itself skipped; once the plan succeeds the entry is dead and the test fails until it moves.

Prints the seconds each step took and the nodes per plugin. Exit status: 0 passed, 1 failed,
77 skipped (no interpreter with torch and torchvision, or no onnxruntime).

Usage: check_network.py --tessera BIN [--lib LIBTESSERA] NAME
       check_network.py --check-list      (every listed name is a corpus network)
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
import corpus  # noqa: E402

SKIP = 77


def run(cmd):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    return out, time.perf_counter() - start


def check(tessera, name, rtol, threads, lib=None):
    listed = corpus.needs_reference()
    not_runnable = corpus.unsupported()
    if name not in corpus.names():
        print(f"real-models {name}: not a corpus network (export.py --list)")
        return 1
    python = corpus.torch_python()
    if python is None:
        print(f"real-models {name}: SKIPPED: no python3 with torch and torchvision "
              "(tools/setup-deps.sh installs python3-torch and python3-torchvision)")
        return SKIP
    try:
        sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
        import numpy as np
        from compare_with_ort import compare, ort_session
    except ImportError as e:
        print(f"real-models {name}: SKIPPED: {e}")
        return SKIP

    start = time.perf_counter()
    try:
        exported = corpus.export(python, [name])[name]
    except RuntimeError as e:
        print(f"real-models {name}: {e}")
        return 1
    model = exported["path"]
    print(f"real-models {name}: model {model} ({'cached' if exported['cached'] else 'exported'}"
          f" in {exported['export_s']:.1f} s; the step took {time.perf_counter() - start:.1f} s)")

    if name in not_runnable:
        plan, _ = run([tessera, "plan", model, "--targets", "cpu,reference"])
        if plan.returncode == 0:
            print(f"real-models {name}: FAIL: listed in {corpus.UNSUPPORTED} "
                  f"('{not_runnable[name]}') but `tessera plan --targets cpu,reference` places "
                  f"every node ({corpus.nodes_by_plugin(plan.stdout)}); move the entry to "
                  f"{corpus.NEEDS_REFERENCE} (or drop it when cpu alone runs it)")
            return 1
        print(f"real-models {name}: SKIPPED: Tessera cannot run it yet ({not_runnable[name]}); "
              f"`plan --targets cpu,reference` says: {(plan.stderr or plan.stdout).strip()[-400:]}")
        return SKIP
    if name in listed:
        # A dead entry: the cpu plugin now takes every node, so the network must run on cpu alone.
        plan, _ = run([tessera, "plan", model, "--targets", "cpu"])
        if plan.returncode == 0:
            print(f"real-models {name}: FAIL: listed in {corpus.NEEDS_REFERENCE} "
                  f"('{listed[name]}') but `tessera plan --targets cpu` places every node "
                  f"({corpus.nodes_by_plugin(plan.stdout)}); remove the entry so it is checked "
                  "on cpu alone")
            return 1
        print(f"real-models {name}: needs reference ({listed[name]}); `plan --targets cpu` says: "
              f"{(plan.stderr or plan.stdout).strip().splitlines()[-1:]}")
    targets = corpus.targets_for(name, listed)

    work = tempfile.mkdtemp(prefix=f"tessera-real-{name}-")
    ok = True
    try:
        session = ort_session(model)
        spec = session.get_inputs()[0]
        # Batch 1 (what the importer plans first) and, the corpus being exported with an open
        # batch, batch 2: the session prepares and plans the graph again for it.
        for batch in (1, 2):
            shape = [batch] + [int(d) for d in spec.shape[1:]]
            data = np.random.default_rng(2024 + batch).uniform(-1.7, 1.7, shape).astype(np.float32)
            input_path = os.path.join(work, f"input_b{batch}.npy")
            np.save(input_path, data)
            out_dir = os.path.join(work, f"b{batch}")
            cmd = [tessera, "run", model, "--targets", targets, "--input",
                   f"{spec.name}={input_path}", "--output-dir", out_dir, "--repeat", "1", "--force"]
            if threads:
                cmd += ["--threads", str(threads)]
            ours_run, tessera_s = run(cmd)
            if ours_run.returncode != 0:
                print(f"real-models {name}: `{' '.join(cmd)}` failed:\n{ours_run.stdout[-3000:]}"
                      f"{ours_run.stderr[-3000:]}")
                if targets == "cpu":
                    print(f"real-models {name}: if the cpu plugin cannot run it alone yet, list it "
                          f"in {corpus.NEEDS_REFERENCE} with the reason")
                ok = False
                return 1
            counts = corpus.nodes_by_plugin(ours_run.stdout)
            share = corpus.cpu_share(counts)
            start = time.perf_counter()
            outputs = session.run(None, {spec.name: data})
            ort_s = time.perf_counter() - start
            for meta, reference in zip(session.get_outputs(), outputs):
                ours = np.load(os.path.join(out_dir, f"{meta.name}.npy"))
                ok = compare("real-models", f"{name} batch {batch}", meta.name, ours, reference,
                             rtol) and ok
            print(f"real-models {name} batch {batch}: targets {targets}; nodes by plugin "
                  f"{' '.join(f'{k}={v}' for k, v in counts.items())} ({share:.0f}% on cpu); "
                  f"tessera run {tessera_s:.1f} s (2 runs), ORT {ort_s:.2f} s")
            if batch == 1 and lib:
                ok = check_package(tessera, lib, name, model, targets, spec.name, input_path,
                                   data, out_dir, [m.name for m in session.get_outputs()],
                                   work) and ok
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"real-models {name}: files kept in {work}")
    return 0 if ok else 1


def check_package(tessera, lib, name, model, targets, input_name, input_path, data, onnx_dir,
                  output_names, work):
    """The network compiled to a package (tessera compile) runs through `tessera run` and the C
    API (tools/python/tessera_c.py over libtessera) with the outputs of the ONNX path."""
    import numpy as np
    package = os.path.join(work, f"{name}.tsp")
    # A package is planned for fixed shapes: the exported batch is open, so it is named here.
    shape = ",".join(str(d) for d in data.shape)
    cmd = [tessera, "compile", model, "--targets", targets, "-o", package, "--force",
           "--input-shape", f"{input_name}={shape}"]
    compiled, compile_s = run(cmd)
    if compiled.returncode != 0:
        print(f"real-models {name}: `{' '.join(cmd)}` failed:\n{compiled.stderr[-3000:]}")
        return False
    pkg_dir = os.path.join(work, "package")
    cmd = [tessera, "run", package, "--input", f"{input_name}={input_path}", "--output-dir",
           pkg_dir, "--repeat", "1", "--force"]
    ran, run_s = run(cmd)
    if ran.returncode != 0:
        print(f"real-models {name}: `{' '.join(cmd)}` failed:\n{ran.stderr[-3000:]}")
        return False
    os.environ["TESSERA_LIBRARY"] = lib
    sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
    import tessera_c
    try:
        capi = tessera_c.Session(package, targets=None).run({input_name: data})
    except tessera_c.Error as e:
        print(f"real-models {name}: the C API cannot run {package}: {e}")
        return False
    ok = True
    for out in output_names:
        want = np.load(os.path.join(onnx_dir, f"{out}.npy"))
        for how, got in (("tessera run", np.load(os.path.join(pkg_dir, f"{out}.npy"))),
                         ("C API", capi[out])):
            if got.shape != want.shape or not np.array_equal(got, want):
                diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else None
                print(f"real-models {name}: FAIL: package via {how}: output {out} differs from "
                      f"the ONNX path (shape {got.shape} vs {want.shape}, max diff {diff})")
                ok = False
    if ok:
        print(f"real-models {name}: package {os.path.getsize(package) / 1e6:.1f} MB (compile "
              f"{compile_s:.1f} s) runs through `tessera run` and the C API with the ONNX "
              f"path's outputs, bit for bit")
    return ok


def check_list():
    """Every listed name is a corpus network, and none is in both lists."""
    names = set(corpus.names())
    listed, not_runnable = corpus.needs_reference(), corpus.unsupported()
    bad = 0
    for path, entries in ((corpus.NEEDS_REFERENCE, listed), (corpus.UNSUPPORTED, not_runnable)):
        for n in entries:
            if n not in names:
                print(f"real-models: {path} lists '{n}', which is not a corpus network")
                bad += 1
    for n in sorted(set(listed) & set(not_runnable)):
        print(f"real-models: '{n}' is in both {corpus.NEEDS_REFERENCE} and {corpus.UNSUPPORTED}")
        bad += 1
    print(f"real-models: of {len(names)} networks, {len(listed)} need reference and "
          f"{len(not_runnable)} do not run yet")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", nargs="?")
    ap.add_argument("--tessera")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=0, help="tessera --threads (0: its default)")
    ap.add_argument("--lib", help="libtessera.so: also compile the network to a package and run "
                                  "it through `tessera run` and the C API")
    ap.add_argument("--check-list", action="store_true")
    args = ap.parse_args()
    if args.check_list:
        return check_list()
    if not args.name or not args.tessera:
        ap.error("give --tessera BIN and a network NAME (or --check-list)")
    return check(args.tessera, args.name, args.rtol, args.threads, args.lib)


if __name__ == "__main__":
    sys.exit(main())
