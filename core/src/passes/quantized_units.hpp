// The int8 units pass (quantized_units.cpp), run by prepare.cpp before constants fold.
#pragma once

#include "tessera/graph.hpp"

namespace tessera {

// Rewrites each DequantizeLinear -> Conv/MatMul/Gemm [-> Relu/Clip] -> QuantizeLinear with int8
// activations and constant int8 weights (QDQ models, and the QLinearConv/QLinearMatMul the
// importer lowers to that form) into one TesseraQLinearConv or TesseraQLinearMatMul node, and
// each Add of two dequantized activations, quantized again, into a TesseraQLinearAdd
// (core/ops/util/quantized_unit.hpp), named after the Conv/MatMul/Gemm. Checks the scales of every
// DequantizeLinear and QuantizeLinear with constant scales: one that is zero, negative, NaN or
// Inf is an error naming the node. Returns the number of units made.
int fuse_quantized_units(Graph& graph);

}  // namespace tessera
