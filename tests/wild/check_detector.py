#!/usr/bin/env python3
"""A detector exported with its post-processing, end to end, against ONNX Runtime.

torchvision's SSDlite (MobileNetV3 backbone, random seeded weights, nothing downloaded) through
PyTorch's exporter keeps its whole post-processing in the graph: 90 per-class score filters
(Greater + NonZero + GatherND), TopK with k taken from the data, an If on the box count,
NonMaxSuppression. Tessera runs the network planned on the targets and the post-processing in
stages (see README, "Shapes may be decided at run time"). Each of several images must give
ONNX Runtime's boxes, scores and labels: the same count, labels equal, boxes and scores within
1e-4 of max |ref|.

Needs Debian's torch/torchvision (python3-torch) for the export, run with /usr/bin/python3, and
onnxruntime for the reference. Usage: check_detector.py --tessera PATH [--targets LIST]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import onnxruntime as ort
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

TORCH_PYTHON = "/usr/bin/python3"
EXPORT = """
import sys, torch, torchvision
torch.manual_seed(0)
m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
    weights=None, weights_backbone=None).eval()
torch.onnx.export(m, ([torch.rand(3, 320, 320)],), sys.argv[1], opset_version=13,
                  input_names=["images"], output_names=["boxes", "scores", "labels"])
"""


def time_both(model, targets, ref, images):
    """Milliseconds per image of each runtime in one session, images it has not seen, after one
    warm-up image; the two alternate image by image."""
    import time
    import tessera
    session = tessera.Session(model, targets=targets)
    xs = [np.random.RandomState(100 + i).rand(3, 320, 320).astype(np.float32)
          for i in range(images + 1)]
    session.run(None, {"images": xs[0]})
    ref.run(None, {"images": xs[0]})
    spent = {"tessera": 0.0, "ort": 0.0}
    for x in xs[1:]:
        for name, run in (("tessera", session.run), ("ort", ref.run)):
            start = time.perf_counter()
            run(None, {"images": x})
            spent[name] += time.perf_counter() - start
    print(f"ssdlite320 per new image ({targets}): tessera {spent['tessera'] / images * 1e3:.1f} ms, "
          f"ONNX Runtime {spent['ort'] / images * 1e3:.1f} ms, mean of {images}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--targets", default="cpu")
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--time", action="store_true",
                        help="also time both runtimes per image, a different image each call, "
                             "through the Python module (tessera on PYTHONPATH)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wild-detector-") as dir:
        model = os.path.join(dir, "ssdlite.onnx")
        done = subprocess.run([TORCH_PYTHON, "-c", EXPORT, model], capture_output=True, text=True)
        if done.returncode != 0:
            if "No module named" in done.stderr:
                print("skip: torch/torchvision missing for", TORCH_PYTHON)
                return 77
            print(done.stderr[-2000:])
            return 1
        ref = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        ok = True
        for i in range(args.images):
            x = np.random.RandomState(i).rand(3, 320, 320).astype(np.float32)
            image = os.path.join(dir, "image.npy")
            np.save(image, x)
            out = os.path.join(dir, "out")
            want = ref.run(None, {"images": x})
            run = subprocess.run([args.tessera, "run", model, "--targets", args.targets, "--input",
                                  f"images={image}", "--output-dir", out, "--force", "--repeat",
                                  "1", "--json"], capture_output=True, text=True)
            if run.returncode != 0:
                print("FAIL tessera run:", run.stderr.strip()[-2000:])
                return 1
            for name, w in zip(["boxes", "scores", "labels"], want):
                g = np.load(os.path.join(out, name + ".npy"))
                if g.shape != w.shape:
                    good, text = False, f"shape {g.shape}, ONNX Runtime {w.shape}"
                elif name == "labels":
                    good = bool(np.array_equal(g, w))
                    text = "equal" if good else "differ"
                else:
                    err = float(np.abs(g - w).max() / max(float(np.abs(w).max()), 1e-12)) if w.size else 0.0
                    good, text = err <= 1e-4, f"max error {err:.2e} of max |ref|"
                ok = ok and good
                print(f"{'ok  ' if good else 'FAIL'} image {i} {name} {list(w.shape)}: {text}")
        # `run --repeat 1` times the same image a second time, which finds its NonMaxSuppression
        # result cached: not a fair time per new image, so --time uses new images each call.
        print(f"ssdlite320: {args.images} images match ONNX Runtime" if ok else "ssdlite320: FAIL")
        if args.time:
            time_both(model, args.targets, ref, args.images)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
