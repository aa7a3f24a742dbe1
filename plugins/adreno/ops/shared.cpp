// Shared lowerings (see shared.hpp).
#include "ops/shared.hpp"

#include <algorithm>
#include <optional>

#include "tessera/error.hpp"

namespace tessera::adreno {

std::vector<size_t> texel_range(const tsr_tensor& t) {
  const auto e = texture_extent(t);
  return {static_cast<size_t>(e[0]), static_cast<size_t>(e[1])};
}

void lower_unary(Lowering& lw, const NodeView& node, int32_t index, UnaryOp op, float a, float b) {
  const tsr_tensor& y = node.output(0);
  const auto range = texel_range(y);
  const Config config = lw.config_for("eltwise.image.unary", range[0]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.image(node.input_index(0)))
      .buffer(lw.image(node.output_index(0)))
      .i32x4(to_i32(range[0], node), to_i32(range[1], node), 0, 0)
      .i32(static_cast<int32_t>(op))
      .f32(a)
      .f32(b);
  lw.add_step(index, std::move(k), range, config);
}

std::string check_pool(const NodeView& node, const Device& device) {
  std::string r = check_image_io(node, device);
  if (!r.empty()) return r;
  if (node.attr_ints("kernel_shape", {}).size() != 2) return "kernel_shape must have 2 values";
  if (node.attr_int("storage_order", 0) != 0) return "storage_order = 1 is not supported";
  return "";
}

void lower_pool(Lowering& lw, const NodeView& node, int32_t index, int32_t mode) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const auto [k, s, d, p] = opencl::support::pool_window_2d(node);
  const int32_t include_pad =
      mode == 1 ? static_cast<int32_t>(node.attr_int("count_include_pad", 0)) : 0;
  const auto in = blocked_dims(x, node);
  const auto out = blocked_dims(y, node);
  const auto range = texel_range(y);
  const Config config = lw.config_for("pool2d.image", range[0]);
  opencl::Kernel kern = lw.kernel(config);
  kern.args()
      .buffer(lw.image(node.input_index(0)))
      .buffer(lw.image(node.output_index(0)))
      .i32x4(in[0], in[1], in[2], in[3])
      .i32x4(out[0], out[1], out[2], out[3])
      .i32x4(to_i32(k[0], node), to_i32(k[1], node), mode, include_pad)
      .i32x4(to_i32(s[0], node), to_i32(s[1], node), to_i32(p[0], node), to_i32(p[1], node))
      .i32x4(to_i32(d[0], node), to_i32(d[1], node), to_i32(p[2], node), to_i32(p[3], node));
  lw.add_step(index, std::move(kern), range, config);
}

}  // namespace tessera::adreno

namespace tessera::adreno {
namespace {

bool same_dims(const tsr_tensor& a, const tsr_tensor& b) {
  return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

// Strides of `b` (NCHW, dense) over the 4-D view of `out`, 0 along broadcast dims; nullopt when
// `b` does not broadcast to `out` (numpy rules: dims aligned right, each equal or 1).
std::optional<std::array<int64_t, 4>> broadcast_strides(const tsr_tensor& b,
                                                        const tsr_tensor& out) {
  if (b.rank > out.rank || out.rank > 4) return std::nullopt;
  std::array<int64_t, 4> dims = {1, 1, 1, 1}, strides = {0, 0, 0, 0};
  for (int32_t i = 0; i < b.rank; ++i) dims[4 - b.rank + i] = b.dims[i];
  const std::array<int64_t, 4> o = view4(out);
  int64_t step = 1;
  for (int d = 3; d >= 0; --d) {
    if (dims[d] != o[d] && dims[d] != 1) return std::nullopt;
    strides[d] = dims[d] == 1 ? 0 : step;
    step *= dims[d];
  }
  return strides;
}

}  // namespace

std::string check_binary(const NodeView& node, const Device& device) {
  if (node.num_inputs() != 2) return "expects 2 inputs";
  if (node.output(0).rank > 4) {
    // Beyond the texture layout's 4 dims: on NCHW buffers when the broadcast fits 4 dims.
    const std::string r = check_float_io(node);
    if (!r.empty()) return r;
    return opencl::support::coalesce_broadcast(node.input(0), node.input(1), node.output(0))
               ? ""
               : "a broadcast that needs more than 4 dims after merging contiguous ones";
  }
  std::string r = check_image_io(node, device, /*any_rank=*/true);
  if (!r.empty()) return r;
  const tsr_tensor& a = node.input(0);
  const tsr_tensor& b = node.input(1);
  const tsr_tensor& y = node.output(0);
  if (same_dims(a, y) && same_dims(b, y)) return "";
  const tsr_tensor& full = same_dims(a, y) ? a : b;
  const tsr_tensor& other = same_dims(a, y) ? b : a;
  if (!same_dims(full, y)) {
    return "neither operand has the output's shape (both broadcast) is not supported";
  }
  if (full.data) return "the full-shape operand is a constant";
  if (!broadcast_strides(other, y)) return "operands do not broadcast to the output";
  return "";
}

void lower_binary(Lowering& lw, const NodeView& node, int32_t index, BinaryOp op) {
  if (node.output(0).rank > 4) {
    opencl::lower_binary_strided(lw, node, index, static_cast<opencl::BinaryCode>(op));
    return;
  }
  const tsr_tensor& a = node.input(0);
  const tsr_tensor& b = node.input(1);
  const tsr_tensor& y = node.output(0);
  const auto range = texel_range(y);
  const std::array<int64_t, 4> o = view4(y);
  if (same_dims(a, y) && same_dims(b, y)) {
    const Config config = lw.config_for("eltwise.image.binary", range[0]);
    opencl::Kernel k = lw.kernel(config);
    k.args()
        .buffer(lw.image(node.input_index(0)))
        .buffer(lw.image(node.input_index(1)))
        .buffer(lw.image(node.output_index(0)))
        .i32x4(to_i32(range[0], node), to_i32(range[1], node), 0, 0)
        .i32(to_i32(o[1], node))
        .i32(to_i32(o[3], node))
        .i32(static_cast<int32_t>(op));
    lw.add_step(index, std::move(k), range, config);
    return;
  }
  const bool swap = !same_dims(a, y);
  const int32_t full = swap ? 1 : 0;
  const std::array<int64_t, 4> s = *broadcast_strides(node.input(1 - full), y);
  const Config config = lw.config_for("eltwise.image.binary_bcast", range[0]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.image(node.input_index(full)))
      .buffer(lw.buffer(node.input_index(1 - full)))
      .buffer(lw.image(node.output_index(0)))
      .i32x4(to_i32(o[0], node), to_i32(o[1], node), to_i32(o[2], node), to_i32(o[3], node))
      .i32x4(to_i32(s[0], node), to_i32(s[1], node), to_i32(s[2], node), to_i32(s[3], node))
      .i32(static_cast<int32_t>(op))
      .i32(swap ? 1 : 0);
  lw.add_step(index, std::move(k), range, config);
}

}  // namespace tessera::adreno

namespace tessera::adreno {}  // namespace tessera::adreno
