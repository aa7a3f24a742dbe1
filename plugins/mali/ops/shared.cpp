// Shared lowerings (see shared.hpp).
#include "ops/shared.hpp"

#include <algorithm>
#include <tuple>

#include "tessera/error.hpp"

namespace tessera::mali {

std::vector<Config> unary_options(const NodeView& node, const Device& device) {
  return {device.config("eltwise.unary", plugin::tensor_numel(node.output(0)))};
}

std::vector<Config> binary_options(const NodeView& node, const Device& device) {
  return {device.config("eltwise.binary", plugin::tensor_numel(node.output(0)))};
}

void lower_unary(Lowering& lw, const NodeView& node, int32_t index, UnaryOp op, float a, float b) {
  const tsr_tensor& y = node.output(0);
  const bool c4 = writes_nchw4c(lw, node);
  // NCHW4c: the whole padded buffer; the kernel keeps the padded lanes zero.
  const int64_t n = stored_numel(y, c4 ? Storage::kNchw4c : Storage::kNchw);
  const Config config = elementwise_config(lw, index, "eltwise.unary", n);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(static_cast<int32_t>(op))
      .f32(a)
      .f32(b)
      .i32x4(c4 ? to_i32(y.dims[1], node) : 0, c4 ? to_i32(y.dims[2] * y.dims[3], node) : 1,
             c4 ? to_i32((y.dims[1] + 3) / 4, node) : 1, c4 && y.dims[1] % 4 != 0 ? 1 : 0);
  lw.add_1d_step(index, std::move(k), n, config);
}

std::string check_binary(const NodeView& node, const Device&) {
  if (node.num_inputs() != 2) return "expects 2 inputs";
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (!opencl::support::coalesce_broadcast(node.input(0), node.input(1), node.output(0))) {
    return "a broadcast that needs more than 4 dims after merging contiguous ones";
  }
  return "";
}

StoragePlan binary_layout(const NodeView& node, const Lowering& lw) {
  const tsr_tensor& y = node.output(0);
  if (y.rank != 4) return {};
  for (int32_t i = 0; i < 2; ++i) {
    const tsr_tensor& t = node.input(i);
    if (t.rank != 4 || !std::equal(t.dims, t.dims + 4, y.dims)) return {};  // broadcasts: NCHW
  }
  if (lw.storage(node.input_index(0)) != Storage::kNchw4c &&
      lw.storage(node.input_index(1)) != Storage::kNchw4c) {
    return {};
  }
  return {Storage::kNchw4c, {0, 1}};
}

void lower_binary(Lowering& lw, const NodeView& node, int32_t index, BinaryOp op) {
  const tsr_tensor& y = node.output(0);
  std::array<int64_t, 4> dims;
  std::array<int32_t, 4> sa, sb;
  if (writes_nchw4c(lw, node)) {
    // Same shapes, same layout: one flat pass over the padded buffers (0 + 0 and 0 * 0 keep the
    // padding zero).
    dims = {1, 1, 1, stored_numel(y, Storage::kNchw4c)};
    sa = sb = {0, 0, 0, 1};
  } else {
    const opencl::support::Broadcast4 b =
        *opencl::support::coalesce_broadcast(node.input(0), node.input(1), y);
    dims = b.dims;
    for (size_t d = 0; d < 4; ++d) {
      sa[d] = to_i32(b.sa[d], node);
      sb[d] = to_i32(b.sb[d], node);
    }
  }
  const int64_t n = dims[0] * dims[1] * dims[2] * dims[3];
  const Config config = elementwise_config(lw, index, "eltwise.binary", n);
  // The flat NCHW4c pass writes padded lanes unmasked: only activations keeping 0 at 0 fuse.
  const FusedActivation act = fuse_activation(lw, node, /*keep_zero=*/true);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.input_index(1)))
      .buffer(lw.buffer(act.output))
      .i32x4(to_i32(dims[0], node), to_i32(dims[1], node), to_i32(dims[2], node),
             to_i32(dims[3], node))
      .i32x4(sa[0], sa[1], sa[2], sa[3])
      .i32x4(sb[0], sb[1], sb[2], sb[3])
      .i32(static_cast<int32_t>(op))
      .i32(act.code)
      .f32(act.a)
      .f32(act.b);
  lw.add_1d_step(index, std::move(k), n, config);
}

FusedActivation fuse_activation(Lowering& lw, const NodeView& node, bool keep_zero) {
  FusedActivation f;
  const int32_t out = node.output_index(0);
  f.output = out;
  const std::vector<int32_t>& users = lw.consumers(out);
  if (users.size() != 1 || lw.is_region_output(out)) return f;
  const NodeView act(lw.region(), users[0]);
  const std::string op = act.op_type();
  if (act.input_index(0) != out || act.num_outputs() < 1 || act.output_index(0) < 0) return f;
  if (op == "Relu") {
    f.code = 1;
  } else if (op == "Clip") {
    std::tie(f.a, f.b) = opencl::support::clip_bounds(act);
    if (keep_zero && !(f.a <= 0.0f && 0.0f <= f.b)) return FusedActivation{0, 0.0f, 0.0f, out};
    f.code = 2;
  } else if (op == "LeakyRelu") {
    f.code = 3;
    f.a = act.attr_float("alpha", 0.01f);
  } else {
    return f;
  }
  lw.fuse(users[0], lw.storage(out));
  f.output = act.output_index(0);
  return f;
}

std::string check_pool(const NodeView& node, const Device&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  const int32_t rank = node.input(0).rank;
  if (rank != 3 && rank != 4) {
    return "only 1-D and 2-D pooling (rank-3 NCL or rank-4 NCHW input) is implemented";
  }
  return "";
}

void lower_pool(Lowering& lw, const NodeView& node, int32_t index, int32_t mode) {
  // NCHW dims, a 1-D pool's as height 1.
  const std::array<int64_t, 4> x = opencl::support::nchw_dims(node.input(0));
  const std::array<int64_t, 4> y = opencl::support::nchw_dims(node.output(0));
  const auto [k, s, d, p] = opencl::support::pool_window_2d(node);
  const int32_t include_pad = static_cast<int32_t>(node.attr_int("count_include_pad", 0));
  // NCHW4c: the same kernel shape over channel blocks, one float4 per work-item.
  const bool c4 = writes_nchw4c(lw, node);
  const int64_t channels = c4 ? (x[1] + 3) / 4 : x[1];
  const int64_t n = y[0] * channels * y[2] * y[3];
  const Config config = lw.config_for(c4 ? "pool2d.nchw4c" : "pool2d.direct", n);
  opencl::Kernel kern = lw.kernel(config);
  kern.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32x4(to_i32(x[0], node), to_i32(channels, node), to_i32(x[2], node),
             to_i32(x[3], node))
      .i32x4(to_i32(y[0], node), to_i32(channels, node), to_i32(y[2], node),
             to_i32(y[3], node))
      .i32x4(to_i32(k[0], node), to_i32(k[1], node), mode, include_pad)
      .i32x4(to_i32(s[0], node), to_i32(s[1], node), to_i32(p[0], node), to_i32(p[1], node))
      .i32x4(to_i32(d[0], node), to_i32(d[1], node), to_i32(p[2], node), to_i32(p[3], node));
  lw.add_1d_step(index, std::move(kern), n, config);
}

std::vector<Config> gemm_options(const NodeView& node, const Device& device) {
  const bool has_c = node.op_type() == "Gemm" && node.num_inputs() > 2 && node.has_input(2);
  const bool trans_a = node.op_type() == "Gemm" && node.attr_int("transA", 0) != 0;
  const opencl::support::GemmOperands g =
      opencl::support::gemm_operands(node, node.input(0), has_c ? &node.input(2) : nullptr, trans_a,
                                     node.op_type() == "Gemm" && node.attr_int("transB", 0) != 0);
  const int32_t ks = opencl::support::gemm_default_split(g, device);
  Config split = device.config("gemm.split", g.n, {{"k_split", ks}});
  split.set("wg_x", g.n < std::max(1, 64 / ks) ? default_wg_x(*split.schedule, device, g.n) : 0);
  Config naive = device.config("gemm.naive", g.n);
  // The split kernel first where it splits (a GPU with too few outputs to fill it).
  if (ks > 1) return {split, naive};
  return {naive, split};
}

void lower_gemm(Lowering& lw, const NodeView& node, int32_t index, int32_t a, int32_t b, int32_t c,
                bool trans_a, bool trans_b, float alpha, float beta) {
  const opencl::support::GemmOperands g = opencl::support::gemm_operands(
      node, lw.region().values[a], c >= 0 ? &lw.region().values[c] : nullptr, trans_a, trans_b);
  Config config = choose_config(lw, index, gemm_options(node, lw.op_device()));
  std::optional<std::pair<int64_t, int64_t>> group;
  if (std::string(config.schedule->id) == "gemm.split") {
    group = opencl::support::split_group(config.get("wg_x"), config.get("k_split"), sizeof(float),
                                         lw.op_device());
    // A k_split whose partial sums this device cannot hold: one output per work-item.
    if (!group) config = lw.config_for("gemm.naive", g.n);
  }
  opencl::Kernel k = lw.kernel(config);
  opencl::KernelArgs args = k.args();
  opencl::support::bind_gemm(args, lw.buffer(a), lw.buffer(b), c >= 0 ? lw.buffer(c) : nullptr,
                             lw.buffer(node.output_index(0)), g, alpha, beta);
  if (group) {
    const auto l = opencl::support::split_launch(*group, sizeof(float), g.n, g.m);
    args.local(l.scratch_bytes);
    lw.add_step(index, std::move(k), l.global, l.local, config);
    return;
  }
  lw.add_step(index, std::move(k), {static_cast<size_t>(g.n), static_cast<size_t>(g.m)},
              {static_cast<size_t>(config.get("wg_x")), static_cast<size_t>(config.get("wg_y"))},
              config);
}

}  // namespace tessera::mali
