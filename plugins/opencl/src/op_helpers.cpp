// Helpers shared by the OpenCL ops (tessera_opencl/op_helpers.hpp).
#include "tessera_opencl/op_helpers.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

namespace tessera::opencl {

std::string check_float_io(const NodeView& node, const char* plugin) {
  const std::string float_only = std::string("(") + plugin + " runs float32 only)";
  const std::string r = support::check_float_inputs(node, float_only.c_str());
  if (!r.empty()) return r;
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return "output 0 is missing";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  return support::check_float_tensor(node.output(0), "output 0", float_only.c_str());
}

std::string check_float_data_io(const NodeView& node, const char* plugin) {
  if (!node.has_input(0) || node.input(0).dtype != TSR_DTYPE_FLOAT32) {
    return std::string("input 0 is not float32 (") + plugin + " runs float32 only)";
  }
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  if (node.output_index(0) < 0 || node.output(0).dtype != TSR_DTYPE_FLOAT32) {
    return "output 0 is not float32";
  }
  return "";
}

std::string check_alias(const NodeView& node, const Device&) {
  return support::check_alias(node);
}

void lower_alias(Lowering& lw, const NodeView& node, int32_t) {
  lw.alias(node.output_index(0), node.input_index(0));
}

StoragePlan follow_input0(const NodeView& node, const Lowering& lowering) {
  if (node.input(0).rank != 4 || lowering.storage(node.input_index(0)) != Storage::kNchw4c) {
    return {};
  }
  return {Storage::kNchw4c, {0}};
}

void lower_strided_copy(Lowering& lw, const NodeView& node, int32_t index,
                        const support::StridedCopy& copy, int32_t output) {
  const int64_t n = plugin::tensor_numel(node.output(output));
  const Config config = lw.config_for("copy.strided", n);
  Kernel k = lw.kernel(config);
  support::bind_strided_copy(k, lw.buffer(node.input_index(0)),
                             lw.buffer(node.output_index(output)), to_i32(n, node), copy);
  lw.add_1d_step(index, std::move(k), n, config);
}

support::StridedCopy strided_copy_6d(const NodeView& node, const std::array<int64_t, 6>& dims,
                                     const std::array<int64_t, 6>& strides) {
  support::StridedCopy copy;
  for (size_t d = 0; d < 6; ++d) {
    copy.dims[d] = to_i32(dims[d], node);
    copy.strides[d] = to_i32(strides[d], node);
  }
  return copy;
}

}  // namespace tessera::opencl

namespace tessera::opencl {
namespace {

const Schedule kUnaryAny{"eltwise.any.unary", "unary.cl", "unary_any_f32", {wg_x_knob()}};
const Schedule kBinaryStrided{
    "eltwise.buffer.binary", "binary.cl", "binary_strided_f32", {wg_x_knob()}};
const Schedule kReduceAxes{"reduce.axes", "reduce.cl", "reduce_axes_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kUnaryAny);
TESSERA_OPENCL_SCHEDULE(kBinaryStrided);
TESSERA_OPENCL_SCHEDULE(kReduceAxes);

constexpr int kMaxReduceRank = 8;

// The axes a Reduce* node reduces (sorted, non-negative), or nullopt with `why`.
std::optional<std::vector<int64_t>> reduce_axes_of(const NodeView& node, std::string* why) {
  const bool from_input = node.num_inputs() > 1 && node.has_input(1);
  const bool listed = from_input || !node.attr_ints("axes", {}).empty();
  if (listed) return support::reduced_axes(node, why);
  if (node.attr_int("noop_with_empty_axes", 0) != 0) {
    *why = "noop_with_empty_axes with no axes (an identity) is left to another plugin";
    return std::nullopt;
  }
  std::vector<int64_t> all(static_cast<size_t>(node.input(0).rank));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  return all;
}

}  // namespace

std::string check_unary_any(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  if (plugin::tensor_numel(node.input(0)) != plugin::tensor_numel(node.output(0))) {
    return "input and output element counts differ";
  }
  return "";
}

void lower_unary_any(Lowering& lw, const NodeView& node, int32_t index, UnaryCode code, float a,
                     float b) {
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for(kUnaryAny.id, n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(static_cast<int32_t>(code))
      .f32(a)
      .f32(b);
  lw.add_1d_step(index, std::move(k), n, config);
}

std::string check_binary_strided(const NodeView& node, const Device& device) {
  if (node.num_inputs() != 2 || !node.has_input(0) || !node.has_input(1)) {
    return "expects exactly 2 inputs";
  }
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  if (node.output(0).rank > 6) return "output rank above 6";
  return support::coalesce_broadcast(node.input(0), node.input(1), node.output(0))
             ? ""
             : "a broadcast that needs more than 4 dims after merging contiguous ones";
}

void lower_binary_strided(Lowering& lw, const NodeView& node, int32_t index, BinaryCode code) {
  const support::Broadcast4 b =
      *support::coalesce_broadcast(node.input(0), node.input(1), node.output(0));
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for(kBinaryStrided.id, n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.input_index(1)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32x4(to_i32(b.dims[0], node), to_i32(b.dims[1], node), to_i32(b.dims[2], node),
             to_i32(b.dims[3], node))
      .i32x4(to_i32(b.sa[0], node), to_i32(b.sa[1], node), to_i32(b.sa[2], node),
             to_i32(b.sa[3], node))
      .i32x4(to_i32(b.sb[0], node), to_i32(b.sb[1], node), to_i32(b.sb[2], node),
             to_i32(b.sb[3], node))
      .i32(static_cast<int32_t>(code));
  lw.add_step(index, std::move(k), {static_cast<size_t>(std::max<int64_t>(n, 1))}, config);
}

std::string check_reduce_axes(const NodeView& node, const Device& device) {
  const std::string r = check_float_data_io(node, device.flavor.name);
  if (!r.empty()) return r;
  const tsr_tensor& x = node.input(0);
  if (x.rank < 1 || x.rank > kMaxReduceRank) {
    return "rank " + std::to_string(x.rank) + " (1 to 8 reduce here)";
  }
  std::string why;
  if (!reduce_axes_of(node, &why)) return why;
  return support::check_float_tensor(x, "input 0", "");
}

void lower_reduce_axes(Lowering& lw, const NodeView& node, int32_t index, ReduceCode code) {
  std::string why;
  lower_reduce_over(lw, node, index, code, *reduce_axes_of(node, &why));
}

void lower_reduce_over(Lowering& lw, const NodeView& node, int32_t index, ReduceCode code,
                       const std::vector<int64_t>& axes) {
  const tsr_tensor& x = node.input(0);
  std::array<int32_t, 8> out_dims{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<int32_t, 8> red_dims{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<int32_t, 8> strides{0, 0, 0, 0, 0, 0, 0, 0};
  // Right-aligned in the 8 slots so the leading (unused) ones are 1 x stride 0.
  const int32_t shift = kMaxReduceRank - x.rank;
  int64_t stride = 1, count = 1;
  for (int32_t d = x.rank - 1; d >= 0; --d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    (reduced ? red_dims : out_dims)[shift + d] = to_i32(x.dims[d], node);
    strides[shift + d] = to_i32(stride, node);
    stride *= x.dims[d];
    if (reduced) count *= x.dims[d];
  }
  const int64_t n_out = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for(kReduceAxes.id, n_out);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n_out, node))
      .i32(to_i32(count, node))
      .i32x8(out_dims)
      .i32x8(red_dims)
      .i32x8(strides)
      .i32(static_cast<int32_t>(code));
  lw.add_1d_step(index, std::move(k), n_out, config);
}

}  // namespace tessera::opencl
