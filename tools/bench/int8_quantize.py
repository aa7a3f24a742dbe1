#!/usr/bin/env python3
"""Makes int8 QDQ twins of float ONNX models with ONNX Runtime's quantize_static, as users do:
QDQ form, per-channel int8 weights, activations of the chosen type, calibrated (min-max) on
random image-like inputs (uniform [0, 1) pixels normalised with ImageNet's mean and std).

Usage: int8_quantize.py MODEL.onnx OUT.onnx [--activation uint8|int8] [--samples N] [--seed S]

Needs onnxruntime and numpy (the interpreter that runs ORT). The calibration is random, so the
result is for speed and agreement checks, not for accuracy.
"""
import argparse
import sys

import numpy as np
import onnx
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process


def image_like(shape, rng):
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)
    x = rng.random(shape, dtype=np.float32)
    if len(shape) == 4 and shape[1] == 3:
        x = (x - mean) / std
    return x.astype(np.float32)


class RandomImages(CalibrationDataReader):
    def __init__(self, model_path, samples, seed):
        model = onnx.load(model_path, load_external_data=False)
        init = {t.name for t in model.graph.initializer}
        self.inputs = []
        for v in model.graph.input:
            if v.name in init:
                continue
            dims = [d.dim_value if d.dim_value > 0 else 1 for d in v.type.tensor_type.shape.dim]
            self.inputs.append((v.name, dims))
        rng = np.random.default_rng(seed)
        self.feeds = iter([{n: image_like(s, rng) for n, s in self.inputs}
                           for _ in range(samples)])

    def get_next(self):
        return next(self.feeds, None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--activation", choices=["uint8", "int8"], default="uint8")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    pre = args.out + ".pre.onnx"
    quant_pre_process(args.model, pre, skip_symbolic_shape=True)
    quantize_static(pre, args.out, RandomImages(pre, args.samples, args.seed),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8 if args.activation == "uint8"
                    else QuantType.QInt8,
                    weight_type=QuantType.QInt8)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
