#!/usr/bin/env python3
"""Small, valid seed inputs for the onnx and npy fuzzers, written into OUT/onnx and OUT/npy.

  make_seeds.py OUT

The fuzzers learn most from small inputs that reach deep: the ONNX models here mirror what the
zoo networks and PyTorch exports contain (Conv/BatchNormalization/Relu/pooling/Gemm, the
Shape->Gather->Concat->Reshape chain that constant folding removes, Resize/Pad/Slice with
constant inputs, external data in tests/fuzz/external/weights.bin) with tiny weights; the .npy
files cover every dtype read_npy accepts and each header version. Their output is committed in
tests/fuzz/seeds/ (each under 1 KiB, with an .expected of `accepted`); run this again when
changing them. tools/run-fuzz.sh adds the ONNX backend node models and the repository's YAML.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def save_model(path, nodes, inputs, outputs, initializers=(), opset=OPSET):
    graph = helper.make_graph(nodes, os.path.basename(path), inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def onnx_seeds(out):
    rng = np.random.default_rng(0)
    w = lambda *s: rng.standard_normal(s).astype(np.float32)
    # A zoo-like block: conv + batch norm + relu + max pool + global pool + flatten + gemm.
    save_model(os.path.join(out, "conv_block.onnx"), [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"]),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ], [f32("x", ["N", 2, 6, 6])], [f32("y", None)], [
        const("w", w(4, 2, 3, 3)), const("b", w(4)), const("s", w(4)), const("bb", w(4)),
        const("m", w(4)), const("v", np.abs(w(4)) + 0.5), const("fw", w(3, 4)), const("fb", w(3)),
    ])
    # The exporter's shape chain, folded to a constant Reshape target by prepare_graph.
    save_model(os.path.join(out, "shape_chain.onnx"), [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "i0"], ["d0"], axis=0),
        helper.make_node("Unsqueeze", ["d0", "ax"], ["d0u"]),
        helper.make_node("Concat", ["d0u", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ], [f32("x", [2, 3, 4])], [f32("y", None)], [
        const("i0", np.array(0, np.int64)), const("ax", np.array([0], np.int64)),
        const("minus1", np.array([-1], np.int64)),
    ])
    # Shape-producing ops fed by constants (the classes issue 17 found overflows in).
    save_model(os.path.join(out, "shape_ops.onnx"), [
        helper.make_node("Range", ["r0", "r1", "r2"], ["rng"]),
        helper.make_node("ConstantOfShape", ["cs"], ["zeros"],
                         value=numpy_helper.from_array(np.array([1.5], np.float32))),
        helper.make_node("Expand", ["x", "es"], ["ex"]),
        helper.make_node("Pad", ["ex", "pads"], ["pd"], mode="constant"),
        helper.make_node("Slice", ["pd", "st", "en", "axs", "stp"], ["sl"]),
        helper.make_node("Add", ["sl", "zeros"], ["y"]),
        helper.make_node("Tile", ["rng", "reps"], ["t"]),
    ], [f32("x", [1, 4])], [f32("y", None), helper.make_tensor_value_info("t", TensorProto.INT64, None)], [
        const("r0", np.array(0, np.int64)), const("r1", np.array(6, np.int64)),
        const("r2", np.array(2, np.int64)), const("cs", np.array([3, 4], np.int64)),
        const("es", np.array([3, 4], np.int64)), const("pads", np.array([1, 1, 1, 1], np.int64)),
        const("st", np.array([1, 1], np.int64)), const("en", np.array([4, 5], np.int64)),
        const("axs", np.array([0, 1], np.int64)), const("stp", np.array([1, 1], np.int64)),
        const("reps", np.array([2], np.int64)),
    ])
    # Resize / Transpose / Softmax / Split / Concat on a small input.
    save_model(os.path.join(out, "tensor_ops.onnx"), [
        helper.make_node("Resize", ["x", "", "scales"], ["rs"], mode="nearest"),
        helper.make_node("Transpose", ["rs"], ["tr"], perm=[0, 1, 3, 2]),
        helper.make_node("Split", ["tr", "split"], ["a", "b"], axis=3),
        helper.make_node("Concat", ["b", "a"], ["cc"], axis=3),
        helper.make_node("Softmax", ["cc"], ["y"], axis=-1),
    ], [f32("x", [1, 1, 2, 2])], [f32("y", None)], [
        const("scales", np.array([1, 1, 2, 2], np.float32)),
        const("split", np.array([2, 2], np.int64)),
    ])
    # External data: the initializer's bytes come from tests/fuzz/external/weights.bin.
    ext = TensorProto(name="ew", data_type=TensorProto.FLOAT, dims=[4, 4])
    ext.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "64"), ("length", "64")):
        entry = ext.external_data.add()
        entry.key, entry.value = k, v
    save_model(os.path.join(out, "external_data.onnx"), [
        helper.make_node("MatMul", ["x", "ew"], ["y"]),
    ], [f32("x", [2, 4])], [f32("y", None)], [ext])


def control_flow_seeds(out):
    """If (nested, with captures, a shape condition) and ONNX Runtime's contrib ops."""
    branch = lambda name, op, src, dst: helper.make_graph(
        [helper.make_node(op, [src], [dst])], name, [], [f32(dst, None)])
    inner = helper.make_graph(
        [helper.make_node("If", ["wide"], ["iy"], then_branch=branch("t2", "Relu", "x", "a"),
                          else_branch=branch("e2", "Neg", "x", "b"))],
        "t1", [], [f32("iy", None)])
    save_model(os.path.join(out, "if_branches.onnx"), [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "i2"], ["h"], axis=0),
        helper.make_node("Greater", ["h", "four"], ["wide"]),
        helper.make_node("If", ["wide"], ["y"], then_branch=inner,
                         else_branch=branch("e1", "Sigmoid", "x", "c")),
    ], [f32("x", [1, 2, "H", 3])], [f32("y", None)], [
        const("i2", np.array(2, np.int64)), const("four", np.array(4, np.int64)),
    ], opset=13)
    ms = "com.microsoft"
    graph = helper.make_graph([
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("QLinearAdd", ["q", "s", "z", "q", "s", "z", "s", "z"], ["qa"], domain=ms),
        helper.make_node("DequantizeLinear", ["qa", "s", "z"], ["d"]),
        helper.make_node("FastGelu", ["d"], ["g"], domain=ms),
        helper.make_node("FusedConv", ["g", "w"], ["y"], domain=ms, activation="Relu"),
    ], "contrib_ops.onnx", [f32("x", [1, 1, 2, 2])], [f32("y", None)], [
        const("s", np.array(0.1, np.float32)), const("z", np.array(128, np.uint8)),
        const("w", np.ones((1, 1, 1, 1), np.float32)),
    ])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid(ms, 1)])
    model.ir_version = 8
    with open(os.path.join(out, "contrib_ops.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def npy_seeds(out):
    arrays = {
        "f32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f16_4": np.array([1, -2, 0.5, 65504], np.float16),
        "i64_scalar": np.array(7, np.int64),
        "i32_2x2": np.array([[1, -1], [2, -2]], np.int32),
        "i8_3": np.array([-128, 0, 127], np.int8),
        "u8_1x3": np.array([[0, 128, 255]], np.uint8),
        "bool_2": np.array([True, False]),
        "f32_empty_0x3": np.zeros((0, 3), np.float32),
    }
    for name, a in arrays.items():
        np.save(os.path.join(out, name + ".npy"), a)
    # Header versions 2.0 and 3.0 (numpy writes them when asked).
    for version in ((2, 0), (3, 0)):
        with open(os.path.join(out, "f32_v%d.npy" % version[0]), "wb") as f:
            np.lib.format.write_array(f, arrays["f32_2x3"], version=version)


def main(argv):
    if len(argv) != 2:
        raise SystemExit("usage: make_seeds.py OUT")
    out = argv[1]
    for sub, make in (("onnx", onnx_seeds), ("onnx", control_flow_seeds), ("npy", npy_seeds)):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
        make(os.path.join(out, sub))


if __name__ == "__main__":
    main(sys.argv)
