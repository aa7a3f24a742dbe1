// Shared lowering of the reductions (shaders/reduce.comp): the reduced axes must be adjacent
// once unit dimensions are set aside, so the input reads as [OUTER, LEN, INNER].
#pragma once

#include "ops/op.hpp"

namespace tessera::vulkan {

// Op codes of shaders/reduce.comp.
enum class ReduceOp {
  kSum = 0,
  kMean = 1,
  kMax = 2,
  kMin = 3,
  kL1 = 4,
  kL2 = 5,
  kSumSquare = 6,
  kLogSumExp = 7,
  kProd = 8,
  kLogSum = 9
};

std::string check_reduce(const NodeView& node);
void lower_reduce(Lowering& lowering, const NodeView& node, ReduceOp op);
// Reduces all of [OUTER, LEN, INNER]'s middle axis of value `in` into value `out`.
void dispatch_reduce(Lowering& lowering, const NodeView& node, ReduceOp op, int64_t outer,
                     int64_t len, int64_t inner);

}  // namespace tessera::vulkan
