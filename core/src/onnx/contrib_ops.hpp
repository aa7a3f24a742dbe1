// ONNX Runtime's own operators (domain com.microsoft) and the default-domain quantized operators
// (QLinearConv, QLinearMatMul) as the default-domain ops Tessera implements.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace tessera::importer {

// Rewrites, in place and in every subgraph, each node that ONNX Runtime's quantizer, transformer
// optimizer or graph fusions write into models users get (QLinearAdd, QLinearMul, QLinearConcat,
// QLinearGlobalAveragePool, QLinearAveragePool, QLinearSigmoid, QLinearLeakyRelu, QGemm,
// QLinearConv, QLinearMatMul, FusedConv, FusedGemm, Gelu, FastGelu, BiasGelu, QuickGelu,
// SkipLayerNormalization, LayerNormalization, Attention) as default-domain nodes computing the
// same: a
// quantized op becomes DequantizeLinear -> float op -> QuantizeLinear, which is its ONNX
// definition and the form the int8 pass groups again. Node names keep the original as prefix
// ("add1/dq_a"). Other com.microsoft ops are left for the importer to refuse naming the domain.
// Throws tessera::Error naming `source` and the node for a malformed one (too few inputs, an
// activation it does not know).
void lower_contrib_ops(onnx::GraphProto& graph, const std::string& source);

}  // namespace tessera::importer
