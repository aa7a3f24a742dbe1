// The int8 units pass (quantized_units.cpp), run by prepare.cpp before constants fold.
#pragma once

#include "tessera/graph.hpp"

namespace tessera {

// Rewrites each DequantizeLinear -> Conv/MatMul/Gemm [-> Relu/Clip] -> QuantizeLinear with int8
// activations and constant int8 weights of zero point 0 (QDQ models, and the QLinearConv /
// QLinearMatMul the importer lowers to that form) into one TesseraQLinearConv or
// TesseraQLinearMatMul node, each Add or Mul of two dequantized activations, quantized again,
// into a TesseraQLinearAdd / TesseraQLinearMul (core/ops/util/quantized_unit.hpp), named after
// the Conv/MatMul/Gemm/Add/Mul,
// and a MaxPool between equal quantization parameters into a MaxPool on the int8 values. Checks
// every DequantizeLinear and QuantizeLinear with constant parameters: a scale that is zero,
// negative, NaN or Inf, or a zero point of another type than its input, is an error naming the
// node. Returns the number of units made.
int fuse_quantized_units(Graph& graph);

}  // namespace tessera
