#!/usr/bin/env python3
"""The aarch64 device build, run under qemu: compile -> copy to board -> run, with qemu as the
board.

1. Cross-builds the project with TESSERA_RUNTIME_ONLY=ON for aarch64 into BUILD_DIR (the
   runtime, the cpu and reference plugins, tessera-classify), and prints the stripped sizes;
   fails when libtessera-runtime and the cpu plugin together pass 2.5 MB.
2. Here (x86-64), `tessera compile` makes packages of the zoo's squeezenet and mobilenet_v2 for
   `cpu`.
3. Under qemu-aarch64 (-cpu cortex-a53: NEON, no SVE):
   - tessera-classify refuses the package as it is, naming the device it was compiled for (this
     is another CPU);
   - with --replan (planned again for the aarch64 cpu plugin) tessera-classify must print ONNX
     Runtime's top 5 with probabilities within 1e-4 (same PNG decoding on both sides), and
     tessera-c-example each output's shape, sum and first values as ONNX Runtime computes them
     (tests/capi/c_example_test.py's tolerances);
   - tessera-classify refuses an ONNX model with the reason (the device build has no importer).

Usage: package_under_qemu.py BUILD_DIR TESSERA_BIN"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "capi"))
from c_example_test import compare, ort_outputs  # noqa: E402
from classify_test import check, ort_answer, write_image, write_labels  # noqa: E402
from ort_required import import_onnxruntime  # noqa: E402
from zoo_package import zoo_package  # noqa: E402

SIZE_GOAL = 2_500_000  # bytes: libtessera-runtime + the cpu plugin, stripped (issue 21)
# The Arm loader and libc qemu runs the programs with: the multiarch ones (libc6:arm64, which
# every :arm64 library package pulls in) when installed, as the programs' other libraries (oneTBB,
# libstdc++) come from multiarch too. The cross toolchain's sysroot has its own, older glibc
# build: its loader with multiarch's libc.so.6 hangs in pthread_create (glibc's internals differ).
SYSROOT = "/" if os.path.exists("/lib/ld-linux-aarch64.so.1") else "/usr/aarch64-linux-gnu"


def cross_build(build):
    args = ["cmake", "-S", ROOT, "-B", build,
            "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(ROOT, "targets", "toolchains",
                                                     "aarch64-linux-gnu.cmake"),
            "-DTESSERA_RUNTIME_ONLY=ON"]
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")) and shutil.which("ninja"):
        args.append("-GNinja")
    if shutil.which("ccache"):
        args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    # Two jobs at most: CI machines here are shared 2-core boxes.
    subprocess.run(["cmake", "--build", build, "-j", "2"], check=True)


def stripped_sizes(build, tmp):
    files = {
        "libtessera-runtime.so": os.path.join(build, "core", "libtessera-runtime.so"),
        "libtessera-plugin-cpu.so": os.path.join(build, "plugins", "lib",
                                                 "libtessera-plugin-cpu.so"),
        "libtessera-plugin-reference.so": os.path.join(build, "plugins", "lib",
                                                       "libtessera-plugin-reference.so"),
        "tessera-classify": os.path.join(build, "examples", "classify", "tessera-classify"),
        "tessera-c-example": os.path.join(build, "examples", "c_api", "tessera-c-example"),
    }
    sizes = {}
    for name, path in files.items():
        copy = os.path.join(tmp, "stripped-" + name)
        shutil.copyfile(os.path.realpath(path), copy)
        subprocess.run(["aarch64-linux-gnu-strip", copy], check=True)
        sizes[name] = os.path.getsize(copy)
    print("aarch64, stripped:")
    for name, size in sizes.items():
        print(f"  {name:32s} {size / 1e6:6.2f} MB")
    together = sizes["libtessera-runtime.so"] + sizes["libtessera-plugin-cpu.so"]
    print(f"  {'runtime + cpu plugin':32s} {together / 1e6:6.2f} MB (goal {SIZE_GOAL / 1e6} MB)")
    return together <= SIZE_GOAL


def main():
    build, tessera = sys.argv[1:3]
    ort = import_onnxruntime()
    qemu = shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")
    cross_build(build)
    failures = 0
    classify = os.path.join(build, "examples", "classify", "tessera-classify")
    with tempfile.TemporaryDirectory() as tmp:
        if not stripped_sizes(build, tmp):
            print("FAIL: the runtime and the cpu plugin are over the size goal")
            failures += 1
        labels = os.path.join(tmp, "labels.txt")
        write_labels(labels)
        image = os.path.join(tmp, "image.png")
        write_image(image)
        board = [qemu, "-cpu", "cortex-a53", "-L", SYSROOT]
        example = os.path.join(build, "examples", "c_api", "tessera-c-example")

        def on_board(*args):
            # A hung emulator fails the run instead of stalling CI.
            return subprocess.run(board + list(args), capture_output=True, text=True, timeout=600)

        for net in ("squeezenet_v1.1", "mobilenet_v2"):
            model, package = zoo_package(tessera, tmp, net)
            session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
            want, probs = ort_answer(session, image)
            refused = on_board(classify, package, image, labels)
            print(refused.stdout, refused.stderr, end="")
            if refused.returncode == 0 or "does not fit here" not in refused.stderr or \
                    "in the package" not in refused.stderr:
                print(f"FAIL: {net}: the x86-64 package was not refused with its device")
                failures += 1
            failures += not check(f"{net} package on aarch64 (--replan)",
                                  on_board(classify, "--replan", package, image, labels), want,
                                  probs, exact=True)
            run = on_board(example, "--replan", package, "cpu", "2")
            print(run.stdout, run.stderr, end="")
            failures += run.returncode != 0 or compare(f"{net} package on aarch64 (c_api example)",
                                                        run.stdout, ort_outputs(ort, model)) != 0
            if net == "squeezenet_v1.1":
                onnx = on_board(classify, model, image, labels)
                print(onnx.stdout, onnx.stderr, end="")
                if onnx.returncode == 0 or "libtessera" not in onnx.stderr:
                    print("FAIL: the device build ran or misreported an ONNX model")
                    failures += 1
    print("FAIL" if failures else "runtime_aarch64: ok")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
