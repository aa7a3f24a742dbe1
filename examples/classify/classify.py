#!/usr/bin/env python3
"""Classifies an image with a compiled package (or an ONNX model) through Tessera's C API from
Python (tools/python/tessera_c.py, ctypes). The same pipeline as classify.c: decode (Pillow),
shorter side to 8/7 of the model's input size, centre crop (bilinear, half-pixel centres),
ImageNet mean/std, NCHW; prints the top 5 with softmax probabilities and, with a labels file,
their names.

Usage: classify.py MODEL.tsp|MODEL.onnx IMAGE [--labels FILE] [--targets LIST]
Set TESSERA_LIBRARY to libtessera-runtime.so (packages) or libtessera.so (also ONNX).
"""
import argparse
import os
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "python"))

MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])


def preprocess(path, side):
    """[1, 3, side, side] float32, as classify.c computes it."""
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=np.float64)
    h, w = rgb.shape[:2]
    scale = round(side * 8 / 7) / min(w, h)
    rw, rh = int(round(w * scale)), int(round(h * scale))
    left, top = (rw - side) // 2, (rh - side) // 2

    def taps(n, offset, size):
        s = np.maximum((np.arange(n) + offset + 0.5) / scale - 0.5, 0)
        i0 = np.minimum(s.astype(np.int64), size - 1)
        i1 = np.minimum(i0 + 1, size - 1)
        return i0, i1, np.minimum(s - i0, 1)[:, None]

    y0, y1, fy = taps(side, top, h)
    x0, x1, fx = taps(side, left, w)
    rows0 = rgb[y0][:, x0] * (1 - fx[None]) + rgb[y0][:, x1] * fx[None]
    rows1 = rgb[y1][:, x0] * (1 - fx[None]) + rgb[y1][:, x1] * fx[None]
    v = rows0 * (1 - fy[:, :, None]) + rows1 * fy[:, :, None]
    x = ((v / 255.0 - MEAN) / STD).astype(np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


def top5(logits):
    logits = logits.reshape(-1).astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    order = sorted(range(len(p)), key=lambda i: (-logits[i], i))[:5]
    return [(int(i), float(p[i])) for i in order]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("image")
    ap.add_argument("--labels")
    ap.add_argument("--targets")
    args = ap.parse_args()
    import tessera_c
    session = tessera_c.Session(args.model, targets=args.targets)
    (name, dtype, shape), = session.inputs
    x = preprocess(args.image, shape[2])
    out_name = session.outputs[0][0]
    logits = session.run({name: x})[out_name]
    labels = open(args.labels).read().splitlines() if args.labels else []
    print(f"{args.image} -> {out_name}:")
    for rank, (k, p) in enumerate(top5(logits), 1):
        print(f"  #{rank} class {k:4d} p {p:.6f} {labels[k] if k < len(labels) else ''}")


if __name__ == "__main__":
    main()
