#!/usr/bin/env python3
"""Start-up of a compiled package beside ONNX Runtime, and the stripped sizes of the runtime and
the plugins. Not a test: tests/real_models checks that packages give the ONNX path's outputs.

Start-up is what an application pays before its first result: load the model and run it once,
in a fresh process, the kernel cache warm (one untimed run first). Each measurement is its own
process that times, inside itself, from before loading to after the first run:
  tessera package  the C API over libtessera-runtime alone (tools/python/tessera_c.py with
                   TESSERA_LIBRARY=libtessera-runtime.so): read + verify the .tsp, load the
                   plugins it names, compile, run once;
  tessera onnx     the same C API over libtessera: import the ONNX model, plan, compile, run;
  ORT              onnxruntime.InferenceSession(model) + one run, same thread count.
Rounds alternate the three; each figure is the median over rounds. The ratio column is tessera
package / ORT.

Sizes: `strip` copies of libtessera-runtime, libtessera and each plugin of the build (x86-64), and
of the aarch64 device build (runtime, cpu and reference plugins) when ctest
runtime_aarch64_package_qemu made one in <build>/aarch64-runtime.

Usage: package_startup.py --build build [--models mobilenet_v2,resnet18] [--targets cpu]
                          [--threads 2] [--rounds 5]
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "real_models"))
import corpus  # noqa: E402

# One measurement in a fresh process: prints {"ms": load + first run}.
WORKER = r"""
import json, os, sys, time
import numpy as np
kind, model, threads, targets = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
x = np.load(sys.argv[5])
if kind == "ort":
    import onnxruntime as ort
    t = time.perf_counter()
    o = ort.SessionOptions()
    o.intra_op_num_threads = threads
    s = ort.InferenceSession(model, o, providers=["CPUExecutionProvider"])
    s.run(None, {s.get_inputs()[0].name: x})
else:
    sys.path.insert(0, os.path.join(sys.argv[6], "tools", "python"))
    import tessera_c
    t = time.perf_counter()
    s = tessera_c.Session(model, targets=None if kind == "package" else targets, threads=threads)
    s.run({s.inputs[0][0]: x})
print(json.dumps({"ms": (time.perf_counter() - t) * 1e3}))
"""


def measure(kind, model, threads, targets, x_path, lib):
    env = dict(os.environ)
    if lib:
        env["TESSERA_LIBRARY"] = lib
    out = subprocess.run([sys.executable, "-c", WORKER, kind, model, str(threads), targets, x_path,
                          ROOT], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{kind} {model}: {out.stderr.strip()[-600:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["ms"]


def stripped_size(path):
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, "s.so")
        shutil.copy(path, copy)
        for strip in ("strip", "aarch64-linux-gnu-strip"):
            if subprocess.run([strip, copy], capture_output=True).returncode == 0:
                break
        return os.path.getsize(copy)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default="mobilenet_v2,resnet18,squeezenet1_1,efficientnet_b0")
    ap.add_argument("--targets", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import numpy as np
    import onnx

    tessera = os.path.join(args.build, "tools", "tessera")
    runtime = os.path.join(args.build, "core", "libtessera-runtime.so")
    core = os.path.join(args.build, "core", "libtessera.so")
    python = corpus.torch_python()
    if python is None:
        sys.exit("package_startup: no python3 with torch to export the corpus")
    names = args.models.split(",")
    exported = corpus.export(python, names)
    work = tempfile.mkdtemp(prefix="tessera-startup-")
    print(f"start-up (load + first run, fresh process, warm kernel cache), {args.targets}, "
          f"{args.threads} threads, median of {args.rounds} rounds; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'network':22} {'package MB':>10} {'tessera pkg ms':>15} {'tessera onnx ms':>16} "
          f"{'ORT ms':>8} {'pkg / ORT':>10}")
    try:
        for name in names:
            model = exported[name]["path"]
            package = os.path.join(work, f"{name}.tsp")
            m = onnx.load(model, load_external_data=False)
            dims = m.graph.input[0].type.tensor_type.shape.dim
            shape = [d.dim_value or 1 for d in dims]  # an open batch is measured at 1
            subprocess.run([tessera, "compile", model, "--targets", args.targets, "-o", package,
                            "--force", "--input-shape",
                            f"{m.graph.input[0].name}={','.join(map(str, shape))}"],
                           check=True, capture_output=True)
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            x_path = os.path.join(work, f"{name}.npy")
            np.save(x_path, x)
            kinds = (("package", package, runtime), ("onnx", model, core), ("ort", model, None))
            for kind, path, lib in kinds:  # warm the kernel cache and the page cache
                measure(kind, path, args.threads, args.targets, x_path, lib)
            times = {k: [] for k, _, _ in kinds}
            for _ in range(args.rounds):
                for kind, path, lib in kinds:
                    times[kind].append(measure(kind, path, args.threads, args.targets, x_path,
                                               lib))
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{name:22} {os.path.getsize(package) / 1e6:10.1f} {med['package']:15.1f} "
                  f"{med['onnx']:16.1f} {med['ort']:8.1f} {med['package'] / med['ort']:10.2f}",
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")

    print("\nstripped sizes (bytes):")
    libs = [("x86-64", "libtessera-runtime", runtime), ("x86-64", "libtessera", core)]
    for plugin in sorted(glob.glob(os.path.join(args.build, "plugins", "lib",
                                                "libtessera-plugin-*.so"))):
        libs.append(("x86-64", os.path.basename(plugin)[:-3], plugin))
    # The aarch64 device build (TESSERA_RUNTIME_ONLY) that ctest runtime_aarch64_package_qemu
    # cross-compiles into <build>/aarch64-runtime.
    device = os.path.join(args.build, "aarch64-runtime")
    device_libs = [("libtessera-runtime", os.path.join(device, "core", "libtessera-runtime.so"))]
    for plugin in ("cpu", "reference"):
        device_libs.append((f"libtessera-plugin-{plugin}",
                            os.path.join(device, "plugins", "lib", f"libtessera-plugin-{plugin}.so")))
    for label, path in device_libs:
        libs.append(("aarch64", label, path))
    together = {}
    for arch, label, path in libs:
        if os.path.exists(path):
            size = stripped_size(os.path.realpath(path))
            print(f"  {arch:8} {label:32} {size:>10,}")
            if label in ("libtessera-runtime", "libtessera-plugin-cpu"):
                together[arch] = together.get(arch, 0) + size
    for arch, size in together.items():
        print(f"  {arch:8} {'runtime + cpu plugin':32} {size:>10,}")
    if not os.path.exists(device_libs[0][1]):
        print(f"  aarch64: not built ({device} comes from ctest -R runtime_aarch64)")

if __name__ == "__main__":
    main()
