// Size arithmetic for shape inference that fails naming the node instead of overflowing int64:
// output dims such as in * repeats (Tile), C * blocksize^2 (SpaceToDepth) or
// stride * (in - 1) + kernel (ConvTranspose) come from attributes a model controls.
// Header-only for the same reason as broadcast.hpp.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "op.hpp"
#include "tessera/checked_math.hpp"

namespace tessera::ops {

// The engine's throwing forms (tessera/checked_math.hpp) stay visible beside these.
using ::tessera::checked_add;
using ::tessera::checked_mul;

// a * b for a, b >= 0; fails through ctx naming `what` when the product exceeds int64.
inline int64_t checked_mul(const InferContext& ctx, int64_t a, int64_t b, const std::string& what) {
  if (a < 0 || b < 0) {
    ctx.fail(what + ": negative size (" + std::to_string(a) + " * " + std::to_string(b) + ")");
  }
  int64_t out = 0;
  if (!try_mul(a, b, out)) {
    ctx.fail(what + ": " + std::to_string(a) + " * " + std::to_string(b) + " overflows int64");
  }
  return out;
}

// a + b for any signs; fails naming `what` when the sum leaves int64.
inline int64_t checked_add(const InferContext& ctx, int64_t a, int64_t b, const std::string& what) {
  int64_t out = 0;
  if (!try_add(a, b, out)) {
    ctx.fail(what + ": " + std::to_string(a) + " + " + std::to_string(b) + " overflows int64");
  }
  return out;
}

}  // namespace tessera::ops
