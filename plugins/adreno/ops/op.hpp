// How an adreno op plugs in: one file per op registers an OpLowering with check() (can this node
// run here? "" = yes, else the reason) and lower() (turn it into kernel launches).
#pragma once

#include <array>
#include <string>

#include "region.hpp"
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::adreno {

using opencl::OpLowering;
using opencl::TuningOptionsFn;

// The adreno op tables (looked up before the shared ops of plugins/opencl/ops), their lookups
// and choose_config: tessera_opencl/op_registry.hpp.
struct AdrenoOpsTag;
TESSERA_OPENCL_OP_REGISTRY(OpLowering, TuningOptionsFn, AdrenoOpsTag);

#define TSR_ADRENO_CONCAT_INNER(a, b) a##b
#define TSR_ADRENO_CONCAT(a, b) TSR_ADRENO_CONCAT_INNER(a, b)
#define TESSERA_ADRENO_OP(op_type, check_fn, lower_fn)                   \
  static const ::tessera::adreno::OpLoweringRegistrar TSR_ADRENO_CONCAT( \
      adreno_op_, __LINE__)(::tessera::adreno::OpLowering{op_type, check_fn, lower_fn, nullptr})

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
