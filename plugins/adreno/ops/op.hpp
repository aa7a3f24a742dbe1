// How an adreno op plugs in: one file per op registers an OpLowering with check() (can this node
// run here? "" = yes, else the reason) and lower() (turn it into kernel launches).
#pragma once

#include <array>
#include <string>

#include "region.hpp"
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::adreno {

// The adreno op table: the texture kernels.
TESSERA_OPENCL_LOWERING_OPS(AdrenoOpsTag);

#define TESSERA_ADRENO_OP(op_type, check_fn, lower_fn) \
  TESSERA_OPENCL_PLUGIN_OP(adreno, op_type, check_fn, lower_fn, nullptr)

// ---- helpers shared by the op files ----

// The shared ops' helpers (plugins/opencl/ops/common.hpp).
using opencl::check_alias;
using opencl::lower_alias;
using opencl::lower_strided_copy;
inline std::string check_float_io(const NodeView& node) {
  return opencl::check_float_io(node, "adreno");
}

// check_float_io plus: every present non-constant input and output 0 is rank 4 (rank <= 4 with
// `any_rank`, for element-wise ops) and fits the device's image2d limits (layout: region.hpp).
std::string check_image_io(const NodeView& node, const Device& device, bool any_rank = false);
// check_constant, constant_floats, to_i32: tessera_opencl/op_registry.hpp.
using opencl::support::check_constant;
using opencl::support::constant_floats;
using opencl::support::to_i32;
// (N, C4, H, W) of a rank-4 tensor, for kernel arguments.
std::array<int32_t, 4> blocked_dims(const tsr_tensor& t, const NodeView& node);
// Float values of length ceil(C/4)*4, zero-padded (per-channel scale, shift, bias).
std::vector<float> pad_channels(const std::vector<float>& v);

}  // namespace tessera::adreno
