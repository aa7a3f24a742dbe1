#!/usr/bin/env python3
"""Models as users bring them, made the way outside tools make them, checked against ONNX Runtime.

Every case builds its model here (no file of it is kept in the repository) with the tool that
writes such models in the wild, runs it through the `tessera` command, and compares each output
with ONNX Runtime on the same file and inputs:
  - ONNX Runtime's quantizer, QOperator form (QLinearConv, com.microsoft QLinearAdd /
    QLinearGlobalAveragePool / QLinearConcat ..., QLinearMatMul) and QDQ form, from a float CNN
    with a residual add, a concat and a classifier;
  - the com.microsoft ops ONNX Runtime's transformer optimizer and graph fusions write (Gelu,
    FastGelu, BiasGelu, QuickGelu, SkipLayerNormalization, LayerNormalization, FusedConv,
    FusedGemm, Attention);
  - a voice-activity-detector-like model that picks its branch with If from a sample-rate input;
  - an image model whose height and width are open, written as -1 (Paddle2ONNX's way), run at
    three sizes;
  - a detector exported with its post-processing (NonMaxSuppression, NonZero, an If on the
    number of boxes kept), whose shapes follow from the data;
  - a scripted recurrence: Loop with a trip count input, carried state and a scan output.
Float outputs must agree within 1e-3 of max |ref| (1e-4 relative where noted); quantized ones by
cosine >= 0.98 and the same argmax, since requantization may round one step differently.

Usage: check_wild.py --tessera PATH [--targets LIST] [CASE...]; exit 0 when every case matches,
1 otherwise, 77 (skip) when onnxruntime is missing.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover - reported as a skip
    print(f"skip: {e}")
    sys.exit(77)

RNG = np.random.RandomState(7)
OPSET = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, inits, opset=OPSET):
    g = helper.make_graph(nodes, "wild", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=opset, producer_name="tessera-wild")
    m.ir_version = 8
    return m


def float_cnn():
    """A small CNN: stem conv, residual block, concat, global pool, classifier."""
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Add", ["r0", "r1"], ["res"]),
        helper.make_node("Conv", ["res", "w2", "b2"], ["c2"], group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["s2"]),
        helper.make_node("Concat", ["res", "s2"], ["cat"], axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["logits"], transB=1),
    ]
    inits = [init("w0", w(8, 3, 3, 3)), init("b0", w(8)), init("w1", w(8, 8, 3, 3)),
             init("b1", w(8)), init("w2", w(8, 1, 3, 3)), init("b2", w(8)),
             init("wf", w(10, 16)), init("bf", w(10))]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                 [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits,
                 [helper.make_opsetid("", 13)])


def quantized(fmt, per_channel, activation):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": RNG.rand(1, 3, 32, 32).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.data, None)

    def make(dir):
        src = os.path.join(dir, "float.onnx")
        onnx.save(float_cnn(), src)
        dst = os.path.join(dir, "int8.onnx")
        quantize_static(src, dst, Reader(),
                        quant_format=QuantFormat.QOperator if fmt == "qop" else QuantFormat.QDQ,
                        per_channel=per_channel,
                        activation_type=QuantType.QUInt8 if activation == "u8" else QuantType.QInt8,
                        weight_type=QuantType.QInt8)
        return dst
    return make


def contrib_transformer():
    """A transformer block as ONNX Runtime's optimizer leaves it, with every contrib op."""
    d = 16
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    ms = "com.microsoft"
    nodes = [
        # ONNX Runtime registers LayerNormalization in the default domain at every opset (its
        # com.microsoft copy is gone from recent releases); Tessera reads both.
        helper.make_node("LayerNormalization", ["x", "g0", "b0"], ["ln0"], axis=-1,
                         epsilon=1e-5),
        helper.make_node("MatMul", ["ln0", "w1"], ["m1"]),
        helper.make_node("BiasGelu", ["m1", "bias1"], ["g1"], domain=ms),
        helper.make_node("MatMul", ["g1", "w2"], ["m2"]),
        helper.make_node("SkipLayerNormalization", ["m2", "x", "g2", "b2", "bias2"],
                         ["sln", "", "", "sum"], domain=ms, epsilon=1e-5),
        helper.make_node("FastGelu", ["sln", "bias3"], ["fg"], domain=ms),
        helper.make_node("Gelu", ["fg"], ["ge"], domain=ms),
        helper.make_node("QuickGelu", ["ge"], ["qg"], domain=ms, alpha=1.5),
        helper.make_node("FusedGemm", ["flat_in", "wg", "bg"], ["fgemm"], domain=ms,
                         activation="LeakyRelu", activation_alpha=0.2, transB=1),
    ]
    inits = [init("g0", w(d) + 1), init("b0", w(d)), init("w1", w(d, 2 * d)),
             init("bias1", w(2 * d)), init("w2", w(2 * d, d)), init("g2", w(d) + 1),
             init("b2", w(d)), init("bias2", w(d)), init("bias3", w(d)),
             init("wg", w(5, d)), init("bg", w(5))]
    return model(nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, d]),
                  helper.make_tensor_value_info("flat_in", TensorProto.FLOAT, [4, d])],
                 [helper.make_tensor_value_info("qg", TensorProto.FLOAT, None),
                  helper.make_tensor_value_info("sum", TensorProto.FLOAT, None),
                  helper.make_tensor_value_info("fgemm", TensorProto.FLOAT, None)], inits)


def contrib_attention():
    """ONNX Runtime's fused BERT Attention (its transformer optimizer's output) with a raw mask."""
    hidden, heads = 16, 4
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    nodes = [helper.make_node("Attention", ["x", "qkv_w", "qkv_b", "mask"], ["y"],
                              domain="com.microsoft", num_heads=heads)]
    return model(nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, hidden]),
                  helper.make_tensor_value_info("mask", TensorProto.INT32, [2, 5])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                 [init("qkv_w", w(hidden, 3 * hidden)), init("qkv_b", w(3 * hidden))])


def contrib_fused_conv():
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    ms = "com.microsoft"
    nodes = [
        helper.make_node("FusedConv", ["x", "w0", "b0"], ["a"], domain=ms, activation="Relu",
                         pads=[1, 1, 1, 1]),
        helper.make_node("FusedConv", ["a", "w1", "b1", "x8"], ["b"], domain=ms,
                         activation="Clip", activation_params=[-0.5, 0.7], pads=[1, 1, 1, 1]),
        helper.make_node("FusedConv", ["b", "w1", "b1"], ["c"], domain=ms,
                         activation="HardSigmoid", activation_params=[0.3, 0.4], pads=[1, 1, 1, 1]),
    ]
    inits = [init("w0", w(8, 3, 3, 3)), init("b0", w(8)), init("w1", w(8, 8, 3, 3)),
             init("b1", w(8))]
    return model(nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12]),
                  helper.make_tensor_value_info("x8", TensorProto.FLOAT, [1, 8, 12, 12])],
                 [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)], inits)


def vad_if():
    """Silero-VAD-like: the sample rate input picks the branch (and the branch's shapes)."""
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    then = helper.make_graph(
        [helper.make_node("Conv", ["audio", "w16"], ["y16"], strides=[2]),
         helper.make_node("Relu", ["y16"], ["out16"])],
        "sr16k", [], [helper.make_tensor_value_info("out16", TensorProto.FLOAT, None)])
    other = helper.make_graph(
        [helper.make_node("Conv", ["audio", "w8"], ["y8"]),
         helper.make_node("Tanh", ["y8"], ["out8"])],
        "sr8k", [], [helper.make_tensor_value_info("out8", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Equal", ["sr", "k16000"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["feat"], then_branch=then, else_branch=other),
             helper.make_node("ReduceMean", ["feat"], ["score"], axes=[2], keepdims=0)]
    inits = [init("k16000", np.array(16000, dtype=np.int64)), init("w16", w(4, 1, 8)),
             init("w8", w(4, 1, 4))]
    return model(nodes,
                 [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 1, 512]),
                  helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                 [helper.make_tensor_value_info("score", TensorProto.FLOAT, None)], inits,
                 [helper.make_opsetid("", 13)])


def open_hw():
    """An FCN whose batch, height and width are -1 (Paddle2ONNX writes open dims so)."""
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Resize", ["r0", "", "scales"], ["up"], mode="nearest"),
        helper.make_node("Conv", ["up", "w1"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["prob"]),
    ]
    inits = [init("w0", w(8, 3, 3, 3)), init("w1", w(1, 8, 1, 1)),
             init("scales", np.array([1, 1, 2, 2], dtype=np.float32))]
    m = model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, -1, -1])],
              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, None)], inits,
              [helper.make_opsetid("", 13)])
    return m


def detector_nms():
    """A detector's head and post-processing exported whole: boxes and scores from a
    convolution, NonMaxSuppression, the kept boxes gathered, confident cells by NonZero, and an
    If on whether any box was kept. Every count depends on the data."""
    c = lambda name, a: init(name, a)
    inits = [c("w", (RNG.randn(5, 8, 1, 1) * 0.5).astype(np.float32)),
             c("shape_b", np.array([1, 5, 64], np.int64)), c("rows", np.array([64, 4], np.int64)),
             c("zero", np.array([0], np.int64)), c("four", np.array([4], np.int64)),
             c("five", np.array([5], np.int64)), c("one", np.array([1], np.int64)),
             c("max_out", np.array([6], np.int64)), c("iou", np.array([0.4], np.float32)),
             c("score_min", np.array([0.35], np.float32)), c("two", np.array(2, np.int64)),
             c("half", np.array(0.6, np.float32)), c("none", np.array(0, np.int64))]
    any_kept_then = helper.make_graph(
        [helper.make_node("ReduceMax", ["kept"], ["best"], keepdims=0)], "some", [],
        [helper.make_tensor_value_info("best", TensorProto.FLOAT, None)])
    any_kept_else = helper.make_graph(
        [helper.make_node("ReduceMax", ["scores"], ["fallback"], keepdims=0)], "none", [],
        [helper.make_tensor_value_info("fallback", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("Conv", ["features", "w"], ["head"]),
        helper.make_node("Reshape", ["head", "shape_b"], ["flat"]),
        helper.make_node("Slice", ["flat", "zero", "four", "one"], ["coords"]),
        helper.make_node("Transpose", ["coords"], ["boxes"], perm=[0, 2, 1]),
        helper.make_node("Slice", ["flat", "four", "five", "one"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["scores"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_min"],
                         ["selected"]),
        helper.make_node("Gather", ["selected", "two"], ["box_index"], axis=1),
        helper.make_node("Reshape", ["boxes", "rows"], ["box_rows"]),
        helper.make_node("Gather", ["box_rows", "box_index"], ["kept"]),
        helper.make_node("Greater", ["scores", "half"], ["sure"]),
        helper.make_node("NonZero", ["sure"], ["confident"]),
        helper.make_node("Size", ["box_index"], ["count"]),
        helper.make_node("Greater", ["count", "none"], ["some"]),
        helper.make_node("If", ["some"], ["summary"], then_branch=any_kept_then,
                         else_branch=any_kept_else),
    ]
    return model(nodes, [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 8, 8, 8])],
                 [helper.make_tensor_value_info("kept", TensorProto.FLOAT, None),
                  helper.make_tensor_value_info("selected", TensorProto.INT64, None),
                  helper.make_tensor_value_info("confident", TensorProto.INT64, None),
                  helper.make_tensor_value_info("summary", TensorProto.FLOAT, None)], inits,
                 [helper.make_opsetid("", 13)])


def loop_recurrence():
    """A scripted recurrence as torch.jit.script exports a `for` loop: Loop with a trip count
    input, a carried state, a scan output and outer-scope weights read by the body."""
    w = (RNG.randn(6, 6) * 0.4).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h", "W"], ["hw"]),
         helper.make_node("Add", ["hw", "x"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_next"]),
         helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["h_next", "i_f"], ["weighted"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "step",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 6])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_next", TensorProto.FLOAT, [1, 6]),
         helper.make_tensor_value_info("weighted", TensorProto.FLOAT, [1, 6])])
    nodes = [helper.make_node("Loop", ["steps", "", "h0"], ["h_final", "h_all"], body=body)]
    return model(nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6]),
                  helper.make_tensor_value_info("steps", TensorProto.INT64, [])],
                 [helper.make_tensor_value_info("h_final", TensorProto.FLOAT, None),
                  helper.make_tensor_value_info("h_all", TensorProto.FLOAT, None)],
                 [init("W", w), init("h0", np.zeros((1, 6), np.float32))],
                 [helper.make_opsetid("", 13)])


def gpu_gaps():
    """The op kinds that kept exported CNNs and ViTs off the GPU plugins: nearest upsampling (a
    YOLO/FPN neck), LayerNorm as opset-13 exporters decompose it (ReduceMean, Pow, Sqrt), a mean
    over channels (LeViT), InstanceNorm (MobileViT-v2), a BatchNorm1d after a Linear layer
    (rank 2), Identity, PRelu. On a GPU plugin every node must stay on it."""
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("PRelu", ["c1", "slope"], ["p1"]),
        helper.make_node("Resize", ["p1", "", "scales"], ["up"], mode="nearest"),
        helper.make_node("Identity", ["up"], ["up_id"]),
        helper.make_node("Concat", ["up_id", "x"], ["cat"], axis=1),
        helper.make_node("InstanceNormalization", ["cat", "in_scale", "in_bias"], ["inorm"]),
        helper.make_node("ReduceMean", ["inorm"], ["chan_mean"], axes=[1], keepdims=1),
        helper.make_node("Mul", ["inorm", "chan_mean"], ["gated"]),
        # Tokens [1, H*W, C] and LayerNorm as exported at opset 13.
        helper.make_node("Reshape", ["gated", "tok_shape"], ["tok_c"]),
        helper.make_node("Transpose", ["tok_c"], ["tok"], perm=[0, 2, 1]),
        helper.make_node("ReduceMean", ["tok"], ["mu"], axes=[-1], keepdims=1),
        helper.make_node("Sub", ["tok", "mu"], ["d"]),
        helper.make_node("Pow", ["d", "two"], ["d2"]),
        helper.make_node("ReduceMean", ["d2"], ["var"], axes=[-1], keepdims=1),
        helper.make_node("Add", ["var", "eps"], ["var_eps"]),
        helper.make_node("Sqrt", ["var_eps"], ["std"]),
        helper.make_node("Div", ["d", "std"], ["normed"]),
        helper.make_node("Mul", ["normed", "ln_scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "ln_bias"], ["ln"]),
        helper.make_node("ReduceMean", ["ln"], ["pooled"], axes=[1], keepdims=0),
        helper.make_node("Gemm", ["pooled", "fc_w", "fc_b"], ["fc"], transB=1),
        helper.make_node("BatchNormalization", ["fc", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"]),
        helper.make_node("Sigmoid", ["bn"], ["y"]),
    ]
    c = 11
    inits = [init("w1", w(8, 3, 3, 3)), init("slope", np.abs(w(8, 1, 1)) + 0.1),
             init("scales", np.array([1, 1, 2, 2], np.float32)),
             init("in_scale", w(c) + 1.0), init("in_bias", w(c)),
             init("tok_shape", np.array([1, c, 16 * 16], np.int64)),
             init("two", np.array(2.0, np.float32)), init("eps", np.array(1e-5, np.float32)),
             init("ln_scale", w(c) + 1.0), init("ln_bias", w(c)),
             init("fc_w", w(10, c)), init("fc_b", w(10)),
             init("bn_s", w(10) + 1.0), init("bn_b", w(10)), init("bn_m", w(10)),
             init("bn_v", np.abs(w(10)) + 0.5)]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits,
                 [helper.make_opsetid("", 13)])


def gpu_decoder():
    """A segmentation-style decoder of the kinds that used to leave the GPU plugins: a strided
    ConvTranspose upsampling (output_padding, groups of 1), a softmax over channels (axis 1 at
    opset 13) and a Tile of the class map. On a GPU plugin every node must stay on it."""
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("ConvTranspose", ["r1", "wt", "bt"], ["up"], strides=[2, 2],
                         pads=[1, 1, 1, 1], output_padding=[1, 1]),
        helper.make_node("Softmax", ["up"], ["prob"], axis=1),
        helper.make_node("Tile", ["prob", "reps"], ["y"]),
    ]
    inits = [init("w1", w(6, 3, 3, 3)), init("wt", w(6, 5, 3, 3)), init("bt", w(5)),
             init("reps", np.array([1, 1, 1, 2], np.int64))]
    return model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, 32, 64])], inits,
                 [helper.make_opsetid("", 13)])


def gpu_masks():
    """The non-float32 values of transformer and OCR models, which used to bounce activations
    through the host around each node: an int64 attention mask turned into an additive bias
    (Unsqueeze, Cast, Sub, Mul), padded positions zeroed with Equal and Where, and a CTC-style
    greedy decode (ArgMax to int64, compared with the blank). On a GPU plugin every node must
    stay on it."""
    w = lambda *s: (RNG.randn(*s) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"]),
        helper.make_node("Div", ["qk", "root_d"], ["scores"]),
        helper.make_node("Unsqueeze", ["mask", "axis1"], ["mask3"]),
        helper.make_node("Cast", ["mask3"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "maskf"], ["inv"]),
        helper.make_node("Mul", ["inv", "big"], ["bias"]),
        helper.make_node("Add", ["scores", "bias"], ["biased"]),
        helper.make_node("Softmax", ["biased"], ["attn"], axis=-1),
        helper.make_node("MatMul", ["attn", "x"], ["ctx"]),
        helper.make_node("Equal", ["mask", "zero_i"], ["pad"]),
        helper.make_node("Unsqueeze", ["pad", "axis2"], ["pad3"]),
        helper.make_node("Where", ["pad3", "zero_f", "ctx"], ["kept"]),
        helper.make_node("MatMul", ["kept", "wc"], ["logits"]),
        helper.make_node("ArgMax", ["logits"], ["ids"], axis=2, keepdims=0),
        helper.make_node("Greater", ["ids", "zero_i"], ["not_blank"]),
        helper.make_node("And", ["not_blank", "valid"], ["emit"]),
    ]
    d = 16
    inits = [init("wq", w(d, d)), init("wk", w(d, d)), init("wc", w(d, 5)),
             init("root_d", np.array(4.0, np.float32)), init("axis1", np.array([1], np.int64)),
             init("axis2", np.array([2], np.int64)), init("one", np.array(1.0, np.float32)),
             init("big", np.array(-10000.0, np.float32)), init("zero_i", np.array(0, np.int64)),
             init("zero_f", np.array(0.0, np.float32))]
    return model(nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, d]),
                  helper.make_tensor_value_info("mask", TensorProto.INT64, [2, 6]),
                  helper.make_tensor_value_info("valid", TensorProto.BOOL, [2, 6])],
                 [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [2, 6, 5]),
                  helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 6]),
                  helper.make_tensor_value_info("emit", TensorProto.BOOL, [2, 6])], inits,
                 [helper.make_opsetid("", 13)])


def saver(make_model):
    def make(dir):
        path = os.path.join(dir, "model.onnx")
        onnx.save(make_model(), path)
        return path
    return make


# name -> (model maker, list of input feeds, "float" | "int8")
CASES = {
    "qop_u8_per_channel": (quantized("qop", True, "u8"), "image", "int8"),
    "qop_s8_per_tensor": (quantized("qop", False, "s8"), "image", "int8"),
    "qdq_u8_per_channel": (quantized("qdq", True, "u8"), "image", "int8"),
    "contrib_transformer": (saver(contrib_transformer), "transformer", "float"),
    "contrib_fused_conv": (saver(contrib_fused_conv), "fused_conv", "float"),
    "contrib_attention": (saver(contrib_attention), "attention", "float"),
    "if_sample_rate": (saver(vad_if), "vad", "float"),
    "open_hw_minus_one": (saver(open_hw), "open_hw", "float"),
    "detector_nms": (saver(detector_nms), "detector", "float"),
    "loop_recurrence": (saver(loop_recurrence), "recurrence", "float"),
    "gpu_gaps": (saver(gpu_gaps), "small_image", "float"),
    "gpu_decoder": (saver(gpu_decoder), "small_image", "float"),
    "gpu_masks": (saver(gpu_masks), "masked_tokens", "float"),
}
# Cases whose every node a GPU target (mali, adreno) must run itself.
ALL_ON_GPU = {"gpu_gaps", "gpu_decoder", "gpu_masks"}


def feeds(kind):
    r = np.random.RandomState(11)
    if kind == "image":
        return [{"x": r.rand(1, 3, 32, 32).astype(np.float32)} for _ in range(3)]
    if kind == "small_image":
        return [{"x": r.randn(1, 3, 16, 16).astype(np.float32)} for _ in range(2)]
    if kind == "masked_tokens":
        mask = np.ones((2, 6), np.int64)
        mask[1, 4:] = 0  # the second sequence is two tokens shorter
        return [{"x": r.randn(2, 6, 16).astype(np.float32), "mask": mask,
                 "valid": r.rand(2, 6) > 0.3}]
    if kind == "transformer":
        return [{"x": r.randn(1, 6, 16).astype(np.float32),
                 "flat_in": r.randn(4, 16).astype(np.float32)}]
    if kind == "attention":
        mask = np.ones((2, 5), np.int32)
        mask[1, 3:] = 0  # the second sequence is two tokens shorter
        return [{"x": r.randn(2, 5, 16).astype(np.float32), "mask": mask}]
    if kind == "fused_conv":
        return [{"x": r.randn(1, 3, 12, 12).astype(np.float32),
                 "x8": r.randn(1, 8, 12, 12).astype(np.float32)}]
    if kind == "vad":
        audio = r.randn(1, 1, 512).astype(np.float32)
        return [{"audio": audio, "sr": np.array(sr, dtype=np.int64)} for sr in (16000, 8000)]
    if kind == "detector":
        return [{"features": np.random.RandomState(seed).randn(1, 8, 8, 8).astype(np.float32)}
                for seed in (1, 2, 3)]
    if kind == "recurrence":
        return [{"x": r.randn(1, 6).astype(np.float32), "steps": np.array(n, dtype=np.int64)}
                for n in (4, 1, 7)]
    if kind == "open_hw":
        return [{"x": r.rand(n, 3, h, w).astype(np.float32)}
                for n, h, w in ((1, 64, 48), (2, 37, 91), (1, 128, 128))]
    raise ValueError(kind)


def run_tessera(tessera, path, feed, targets, dir):
    args = [tessera, "run", path, "--json", "--repeat", "1", "--output-dir",
            os.path.join(dir, "out"), "--force"]
    if targets:
        args += ["--targets", targets]
    for name, value in feed.items():
        file = os.path.join(dir, f"in_{name}.npy")
        np.save(file, value)
        args += ["--input", f"{name}={file}"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"tessera run failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def compare(kind, want, got):
    if want.shape != got.shape:
        return False, f"shape {got.shape}, ONNX Runtime {want.shape}"
    if want.dtype.kind in "iub":
        same = bool(np.array_equal(want, got))
        return same, "equal" if same else "values differ"
    if kind == "int8" or want.dtype != np.float32:
        a, b = want.astype(np.float64).ravel(), got.astype(np.float64).ravel()
        cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))
        same = int(np.argmax(a)) == int(np.argmax(b))
        return cos >= 0.98 and same, f"cosine {cos:.5f}, argmax {'same' if same else 'differs'}"
    err = float(np.abs(want - got).max() / max(float(np.abs(want).max()), 1e-12))
    return err <= 1e-3, f"max error {err:.2e} of max |ref|"


def check(name, tessera, targets):
    make, feed_kind, kind = CASES[name]
    with tempfile.TemporaryDirectory(prefix=f"wild-{name}-") as dir:
        path = make(dir)
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        outputs = [o.name for o in session.get_outputs()]
        ok = True
        for i, feed in enumerate(feeds(feed_kind)):
            want = session.run(None, feed)
            report = run_tessera(tessera, path, feed, targets, dir)
            placed = " ".join(f"{k}={v}" for k, v in sorted(report["nodes_by_plugin"].items()))
            gpu = targets.split(":")[0] if targets else ""
            if name in ALL_ON_GPU and gpu in ("mali", "adreno") and \
                    set(report["nodes_by_plugin"]) != {gpu}:
                print(f"FAIL {name}: nodes left {gpu}: {placed}")
                ok = False
            for o, ref in zip(outputs, want):
                got = np.load(os.path.join(dir, "out", f"{o}.npy"))
                good, text = compare(kind, ref, got)
                ok = ok and good
                shapes = ", ".join(f"{k} {list(v.shape)}" for k, v in feed.items())
                print(f"{'ok  ' if good else 'FAIL'} {name} [{shapes}] {o}: {text} "
                      f"(nodes {placed}; {report['latency_ms']['median']:.3f} ms)")
        return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--targets", default="", help="--targets for tessera run (default: its own)")
    parser.add_argument("--float-only", action="store_true", help="skip the int8 cases")
    parser.add_argument("--no-if", action="store_true", help="skip the control-flow cases")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    names = args.cases or list(CASES)
    if args.float_only:
        names = [n for n in names if CASES[n][2] == "float"]
    if args.no_if:
        names = [n for n in names if not n.startswith("if_")]
    failed = []
    for name in names:
        try:
            if not check(name, args.tessera, args.targets):
                failed.append(name)
        except Exception as e:  # one case's failure is reported, the others still run
            print(f"FAIL {name}: {e}")
            failed.append(name)
    print(f"{len(names) - len(failed)} of {len(names)} cases match ONNX Runtime"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
