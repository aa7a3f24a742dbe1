#!/usr/bin/env python3
"""examples/classify on a package against ONNX Runtime: the zoo's squeezenet compiled for `cpu`,
a synthetic PNG (and a JPEG, decoded by each program's own library), classified by the C program
(tessera-classify, linked against libtessera-runtime alone) and by classify.py (ctypes over
libtessera-runtime); ONNX Runtime runs the ONNX model on classify.py's preprocessing of the same
file. Both programs must print ORT's top-5 classes, probabilities within 1e-4 (PNG: the decoders
agree bit for bit), or for JPEG (decoders may round a pixel differently) each printed class's
probability within 1% of ORT's for that class.

Usage: classify_test.py CLASSIFY_BIN TESSERA_BIN LIBTESSERA_RUNTIME"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

from ort_required import import_onnxruntime
from zoo_package import zoo_package

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "classify"))
import classify  # noqa: E402

LINE = re.compile(r"^\s+#(\d) class\s+(\d+) p ([\d.]+)", re.M)


def printed(out):
    return [(int(k), float(p)) for _, k, p in LINE.findall(out)]


def write_labels(path):
    with open(path, "w") as f:
        f.write("".join(f"name-{i}\n" for i in range(1000)))


def write_image(path):
    """A synthetic 300 x 260 RGB gradient, saved as PNG or JPEG by its extension."""
    yy, xx = np.mgrid[0:260, 0:300]
    pixels = np.stack([(xx * 255 // 299), (yy * 255 // 259), ((xx + yy) * 7) % 256], axis=-1)
    Image.fromarray(pixels.astype(np.uint8)).save(path)


def ort_answer(session, image):
    """ONNX Runtime's top 5 and softmax probabilities on classify.py's preprocessing of image."""
    x = classify.preprocess(image, 224)
    logits = session.run(None, {session.get_inputs()[0].name: x})[0].reshape(-1)
    probs = np.exp(logits.astype(np.float64) - logits.max())
    return classify.top5(logits), probs / probs.sum()


def check(what, run, want, probs, exact):
    """Whether a classify run printed ORT's answer; exact: the same image decoding (PNG)."""
    print(run.stdout, run.stderr, end="")
    got = printed(run.stdout)
    if run.returncode != 0 or len(got) != 5:
        print(f"classify {what}: exit {run.returncode}, {len(got)} classes")
        return False
    if f"name-{got[0][0]}" not in run.stdout:
        print(f"classify {what}: the label of class {got[0][0]} is not printed")
        return False
    if exact:
        same = [k for k, _ in got] == [k for k, _ in want] and all(
            abs(p - q) <= 1e-4 for (_, p), (_, q) in zip(got, want))
    else:
        # Each printed class's probability is ORT's for that class: a decoder that rounds a
        # pixel differently may reorder near-equal classes, not change them.
        same = all(abs(p - probs[k]) <= 1e-5 + 1e-2 * probs[k] for k, p in got)
    print(f"classify {what}: {got} vs ORT {want}: {'ok' if same else 'MISMATCH'}")
    return same


def main():
    binary, tessera, runtime = sys.argv[1:4]
    ort = import_onnxruntime()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        model, package = zoo_package(tessera, tmp)
        labels = os.path.join(tmp, "labels.txt")
        write_labels(labels)
        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        for ext in ("png", "jpg"):
            image = os.path.join(tmp, f"image.{ext}")
            write_image(image)
            want, probs = ort_answer(session, image)
            env = dict(os.environ, TESSERA_LIBRARY=runtime)
            runs = {
                "C": subprocess.run([binary, package, image, labels], capture_output=True,
                                    text=True),
                "Python": subprocess.run([sys.executable,
                                          os.path.join(ROOT, "examples", "classify",
                                                       "classify.py"),
                                          package, image, "--labels", labels],
                                         capture_output=True, text=True, env=env),
            }
            for who, run in runs.items():
                failures += not check(f"{ext}: {who}", run, want, probs, ext == "png")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
