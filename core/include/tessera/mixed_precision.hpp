// The mixed-precision pass (after TVM's ToMixedPrecision): which nodes of a graph run in the
// session's reduced precision (fp16, fp16-acc32) and which stay fp32, decided per op type.
//
//   always  run reduced: the heavy multiply-add ops whose fp16 error stays small (Conv, Gemm...)
//   follow  run reduced when every float input they read comes from a reduced node (element-wise,
//           pooling, data movement; ReduceMean too, the squeeze-excitation form of
//           GlobalAveragePool), else fp32: they never start a reduced stretch
//   never   stay fp32: sums, normalisations and transcendental ops that overflow or lose too
//           much in fp16 (Softmax, LayerNormalization, ReduceSum, Exp, Erf...)
// An op type on no list is treated as `never`, and said so (explicit beats silent).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera {

enum class MixedPrecisionClass { kAlways, kFollow, kNever };

const char* mixed_precision_class_name(MixedPrecisionClass c);  // "always" | "follow" | "never"

struct MixedPrecisionSettings {
  bool enabled = false;
  // Op type -> class, over the default lists (a deployment's `mixed_precision:` lists).
  std::map<std::string, MixedPrecisionClass> overrides;
  // Largest relative error against fp32 the deployment accepts (0 = none). The session does not
  // read it: `tessera run --check-accuracy` measures against it and, when the lists miss it,
  // searches op types to move to `never`.
  double accuracy_budget = 0.0;
};

// The class of `op_type` under the default lists and `overrides`; `listed` says whether any list
// names it (an unlisted op is kNever).
MixedPrecisionClass mixed_precision_class(const std::string& op_type,
                                          const MixedPrecisionSettings& settings,
                                          bool* listed = nullptr);

// Per graph node (graph.nodes order): true = run in the reduced precision. Nodes are visited in
// topological order, so `follow` sees its producers' decisions. Constants and graph inputs do not
// make a follow node fp32 (they are converted where a reduced region reads them).
std::vector<bool> assign_reduced_precision(const Graph& graph,
                                           const MixedPrecisionSettings& settings);

}  // namespace tessera
