// What the cpu plugin's int8 unit ops (qlinear_conv.cpp, qlinear_matmul.cpp) share: reading a
// unit's constant scales and zero points into the requantization of kernels/int8.hpp, with the
// same float arithmetic as core's reference kernels (core/ops/util/quantized_unit.hpp), so the
// two agree bit for bit. Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, [bias].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/int8.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

struct Int8UnitParams {
  bool x_signed = false;        // int8 activations: shifted by 128 into unsigned bytes
  int32_t x_zero = 0;           // as given (signed for int8)
  int32_t x_zero_unsigned = 0;  // after the shift: the byte that stands for zero
  std::vector<float> multiplier;  // per output channel
  std::vector<int32_t> bias;      // per output channel (zeros when absent)
  Int8Requant rq;                 // lo, hi, zero, is_signed; pointers set by the op
};

// "" when the node's parameters are all constants the int8 kernels take (int8 weights with zero
// points of 0, per-tensor or `channels` per-channel scales), else why not.
std::string query_int8_unit(const NodeView& node, int64_t channels);
// The parameters of a node query_int8_unit accepted.
Int8UnitParams int8_unit_params(const NodeView& node, int64_t channels);

// Unit ops (core's TesseraQLinearConv, TesseraQLinearMatMul and TesseraQLinearAdd).
std::string query_qlinear_conv(const RegionView&, const NodeView&);
Step build_qlinear_conv(BuildContext&);
std::string query_qlinear_matmul(const RegionView&, const NodeView&);
Step build_qlinear_matmul(BuildContext&);
std::string query_qlinear_add(const RegionView&, const NodeView&);
Step build_qlinear_add(BuildContext&);

}  // namespace tessera::cpu
