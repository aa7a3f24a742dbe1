// Definitions of the shared op checks and conversions declared in tessera_opencl/op_registry.hpp.
#include "tessera_opencl/op_registry.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace tessera::opencl::support {

std::string check_float_tensor(const tsr_tensor& t, const std::string& what,
                               const char* float_only) {
  if (t.dtype != TSR_DTYPE_FLOAT32) return what + " is not float32 " + float_only;
  return check_data_tensor(t, what);
}

std::string check_float_inputs(const NodeView& node, const char* float_only) {
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const std::string r =
        check_float_tensor(node.input(i), "input " + std::to_string(i), float_only);
    if (!r.empty()) return r;
  }
  return "";
}

std::string check_constant(const NodeView& node, int32_t i, const char* what) {
  if (!node.has_input(i)) return std::string(what) + " (input " + std::to_string(i) + ") missing";
  if (!node.input(i).data) {
    return std::string(what) + " (input " + std::to_string(i) + ") must be a constant";
  }
  return "";
}

const float* constant_floats(const NodeView& node, int32_t i) {
  return static_cast<const float*>(node.input(i).data);
}

std::string check_clip_bounds(const NodeView& node) {
  if (!node.has_input(0)) return "input 0 missing";
  for (int32_t i = 1; i < node.num_inputs() && i < 3; ++i) {
    if (!node.has_input(i)) continue;
    const std::string r = check_constant(node, i, i == 1 ? "min" : "max");
    if (!r.empty()) return r;
    if (plugin::tensor_numel(node.input(i)) != 1) return "min/max must be scalars";
  }
  return "";
}

std::pair<float, float> clip_bounds(const NodeView& node) {
  float lo = -std::numeric_limits<float>::max();
  float hi = std::numeric_limits<float>::max();
  if (node.opset() < 11) {
    lo = node.attr_float("min", lo);
    hi = node.attr_float("max", hi);
  } else {
    if (node.has_input(1)) lo = constant_floats(node, 1)[0];
    if (node.num_inputs() > 2 && node.has_input(2)) hi = constant_floats(node, 2)[0];
  }
  return {lo, hi};
}

std::string check_batch_norm_params(const NodeView& node) {
  const char* names[] = {"scale", "B", "mean", "var"};
  for (int32_t i = 1; i < 5; ++i) {
    const std::string r = check_constant(node, i, names[i - 1]);
    if (!r.empty()) return r;
    if (plugin::tensor_numel(node.input(i)) != node.input(0).dims[1]) {
      return std::string(names[i - 1]) + " must have one value per channel";
    }
  }
  if (node.attr_int("training_mode", 0) != 0) return "training_mode = 1 is not supported";
  return "";
}

void fold_batch_norm(const NodeView& node, std::vector<float>& scale_out,
                     std::vector<float>& shift_out) {
  const int64_t channels = node.input(0).dims[1];
  const float eps = node.attr_float("epsilon", 1e-5f);
  const float* scale = constant_floats(node, 1);
  const float* bias = constant_floats(node, 2);
  const float* mean = constant_floats(node, 3);
  const float* var = constant_floats(node, 4);
  scale_out.resize(static_cast<size_t>(channels));
  shift_out.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    scale_out[c] = scale[c] / std::sqrt(var[c] + eps);
    shift_out[c] = bias[c] - mean[c] * scale_out[c];
  }
}

int32_t to_i32(int64_t v, const NodeView& node) {
  if (v < INT_MIN || v > INT_MAX) {
    throw Error(node.describe() + ": size " + std::to_string(v) +
                " exceeds 32-bit kernel indexing");
  }
  return static_cast<int32_t>(v);
}

std::optional<std::vector<int64_t>> reduced_axes(const NodeView& node, std::string* why) {
  std::vector<int64_t> axes;
  if (node.has_input(1)) {
    const tsr_tensor& a = node.input(1);
    if (a.data == nullptr || a.dtype != TSR_DTYPE_INT64 || a.rank != 1) {
      *why = "axes (input 1) must be a constant int64 vector";
      return std::nullopt;
    }
    const int64_t* v = static_cast<const int64_t*>(a.data);
    axes.assign(v, v + a.dims[0]);
  } else {
    axes = node.attr_ints("axes", {});
  }
  const int64_t rank = node.input(0).rank;
  if (axes.empty()) {
    *why = "no axes (a mean over every axis) is not a global average pool";
    return std::nullopt;
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) {
      *why = "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank);
      return std::nullopt;
    }
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

std::string check_resize_bilinear(const NodeView& node) {
  if (!node.has_input(0) || node.num_outputs() < 1 || node.output_index(0) < 0) {
    return "input 0 or output 0 missing";
  }
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  if (x.dtype != TSR_DTYPE_FLOAT32 || y.dtype != TSR_DTYPE_FLOAT32) return "not float32";
  if (x.rank != 4 || y.rank != 4) return "only rank-4 tensors";
  if (x.dims[0] != y.dims[0] || x.dims[1] != y.dims[1]) return "only H and W may be resized";
  if (node.attr_string("mode", "nearest") != "linear") return "only mode 'linear' (bilinear)";
  if (node.attr_int("antialias", 0) != 0) return "antialias is not supported";
  if (node.find_attribute("axes") != nullptr) {
    return "the axes attribute (opset 18) is not supported";
  }
  const int32_t scales = node.opset() < 11 ? 1 : 2;
  if (node.num_inputs() > scales && node.has_input(scales) &&
      plugin::tensor_numel(node.input(scales)) != 0 &&
      plugin::tensor_numel(node.input(scales)) != 4) {
    return "scales must hold one value per axis";
  }
  if (node.num_inputs() > scales && node.has_input(scales) &&
      plugin::tensor_numel(node.input(scales)) == 4) {
    const tsr_tensor& s = node.input(scales);
    if (!s.data || s.dtype != TSR_DTYPE_FLOAT32) return "scales must be a constant";
    const float* f = static_cast<const float*>(s.data);
    for (int d = 2; d < 4; ++d) {
      if (static_cast<double>(f[d]) * static_cast<double>(x.dims[d]) !=
          static_cast<double>(y.dims[d])) {
        return "scales that are not the ratio of the output and input sizes";
      }
    }
  }
  const std::string ct = node.opset() < 11
                             ? "asymmetric"
                             : node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (ct == "pytorch_half_pixel" && (y.dims[2] == 1 || y.dims[3] == 1)) {
    return "pytorch_half_pixel with an output dim of 1";
  }
  if (ct != "half_pixel" && ct != "pytorch_half_pixel" && ct != "align_corners" &&
      ct != "asymmetric") {
    return "coordinate_transformation_mode '" + ct + "' is not supported";
  }
  return "";
}

int32_t resize_coordinate_mode(const NodeView& node) {
  const std::string ct = node.opset() < 11
                             ? "asymmetric"
                             : node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (ct == "align_corners") return 2;
  return ct == "asymmetric" ? 0 : 1;
}

std::string check_mean_over_spatial_axes(const NodeView& node) {
  const int32_t rank = node.input(0).rank;
  if (rank < 3) return "input must have spatial dims";
  std::string why;
  const std::optional<std::vector<int64_t>> axes = reduced_axes(node, &why);
  if (!axes) return why;
  std::vector<int64_t> spatial;
  for (int64_t d = 2; d < rank; ++d) spatial.push_back(d);
  if (*axes != spatial) {
    return "only a mean over every spatial axis (2.." + std::to_string(rank - 1) +
           ") is implemented";
  }
  return "";
}

std::pair<int64_t, int64_t> layer_norm_rows(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  int64_t axis = node.attr_int("axis", -1);
  if (axis < 0) axis += x.rank;
  int64_t cols = 1;
  for (int64_t d = axis; d < x.rank; ++d) cols *= x.dims[d];
  return {cols == 0 ? 0 : plugin::tensor_numel(x) / cols, cols};
}

std::string check_layer_norm(const NodeView& node) {
  const int64_t rank = node.input(0).rank;
  int64_t axis = node.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (rank == 0 || axis < 0 || axis >= rank) return "axis out of range";
  if (node.attr_int("stash_type", 1) != 1) return "only stash_type 1 (float) is implemented";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) return "the optional Mean / InvStdDev outputs are not supported";
  }
  std::string r = check_constant(node, 1, "scale");
  if (!r.empty()) return r;
  const int64_t cols = layer_norm_rows(node).second;
  if (plugin::tensor_numel(node.input(1)) != cols) {
    return "scale must hold one value per row element";
  }
  if (node.has_input(2)) {
    r = check_constant(node, 2, "bias");
    if (!r.empty()) return r;
    if (plugin::tensor_numel(node.input(2)) != cols) {
      return "bias must hold one value per row element";
    }
  }
  return "";
}

void bind_layer_norm(KernelArgs& args, cl_mem x, cl_mem scale, cl_mem bias, cl_mem y,
                     const NodeView& node) {
  const auto [rows, cols] = layer_norm_rows(node);
  args.buffer(x)
      .buffer(scale)
      .buffer(bias != nullptr ? bias : scale)  // unused without B
      .buffer(y)
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node))
      .f32(node.attr_float("epsilon", 1e-5f))
      .i32(bias != nullptr ? 1 : 0);
}

int32_t layer_norm_threads(int64_t cols) {
  int32_t threads = 8;
  while (threads < 256 && threads * 4 < cols) threads *= 2;
  return threads;
}

SplitLaunch layer_norm_group_launch(const NodeView& node, const Config& config) {
  const int64_t rows = layer_norm_rows(node).first;
  const int64_t threads = config.get("threads_per_row"), per_group = config.get("rows_per_group");
  SplitLaunch l;
  l.global = {
      static_cast<size_t>(threads),
      static_cast<size_t>((std::max<int64_t>(rows, 1) + per_group - 1) / per_group * per_group)};
  l.local = {static_cast<size_t>(threads), static_cast<size_t>(per_group)};
  l.scratch_bytes = static_cast<size_t>(threads * per_group) * sizeof(float);
  return l;
}

int64_t softmax_axis(const NodeView& node) {
  const int64_t axis = node.attr_int("axis", node.opset() < 13 ? 1 : -1);
  return axis < 0 ? axis + node.input(0).rank : axis;
}

std::string check_softmax_rows(const NodeView& node) {
  const int64_t rank = node.input(0).rank;
  const int64_t axis = softmax_axis(node);
  if (rank == 0 || axis < 0 || axis >= rank) return "axis out of range";
  if (node.opset() >= 13 && axis != rank - 1) return "only the last axis is implemented";
  return "";
}

std::pair<int64_t, int64_t> softmax_rows(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  int64_t rows = 1;
  for (int64_t d = 0; d < softmax_axis(node); ++d) rows *= x.dims[d];
  return {rows, rows == 0 ? 0 : plugin::tensor_numel(x) / rows};
}

std::string check_matmul_batched(const NodeView& node) {
  if (node.num_inputs() != 2 || !node.has_input(0) || !node.has_input(1)) return "expects 2 inputs";
  const tsr_tensor& a = node.input(0);
  const tsr_tensor& b = node.input(1);
  if (a.rank < 2 || b.rank < 2) return "1-D operands are not supported";
  if (a.dims[a.rank - 1] != b.dims[b.rank - 2]) return "inner dims differ";
  if (b.rank > 2 && (b.rank != a.rank || !std::equal(a.dims, a.dims + a.rank - 2, b.dims))) {
    return "B's batch dims must equal A's (or B be 2-D)";
  }
  if (plugin::tensor_numel(node.output(0)) > INT_MAX || plugin::tensor_numel(a) > INT_MAX ||
      plugin::tensor_numel(b) > INT_MAX) {
    return "more elements than 32-bit kernel indexing";
  }
  int64_t batches = 1;
  for (int32_t d = 0; d + 2 < a.rank; ++d) batches *= a.dims[d];
  if (batches > INT_MAX) return "more batches than 32-bit kernel indexing";
  return "";
}

GemmOperands gemm_operands(const NodeView& node, const tsr_tensor& a, const tsr_tensor* c,
                           bool trans_a, bool trans_b) {
  const tsr_tensor& y = node.output(0);
  GemmOperands g;
  g.m = to_i32(y.dims[0], node);
  g.n = to_i32(y.dims[1], node);
  g.k = to_i32(trans_a ? a.dims[0] : a.dims[1], node);
  g.st = {trans_a ? 1 : g.k, trans_a ? g.m : 1, trans_b ? 1 : g.n, trans_b ? g.k : 1};
  if (c != nullptr) {
    const int64_t rows = c->rank == 2 ? c->dims[0] : 1;
    const int64_t cols = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    g.cs = {rows == 1 ? 0 : to_i32(cols, node), cols == 1 ? 0 : 1, 1, 0};
  }
  return g;
}

KernelArgs& bind_gemm(KernelArgs& args, cl_mem a, cl_mem b, cl_mem c, cl_mem y,
                      const GemmOperands& g, float alpha, float beta) {
  return args.buffer(a)
      .buffer(b)
      .buffer(c != nullptr ? c : a)  // unused without C
      .buffer(y)
      .i32(g.m)
      .i32(g.n)
      .i32(g.k)
      .i32x4(g.st[0], g.st[1], g.st[2], g.st[3])
      .i32x4(g.cs[0], g.cs[1], g.cs[2], g.cs[3])
      .f32(alpha)
      .f32(beta);
}

int32_t gemm_default_split(const GemmOperands& g, const DeviceInfo& device) {
  return default_split(static_cast<int64_t>(g.m) * g.n, g.k / 16, device);
}

BatchedMatMul batched_matmul(const NodeView& node) {
  const tsr_tensor& a = node.input(0);
  const tsr_tensor& b = node.input(1);
  int64_t m = a.dims[a.rank - 2];
  const int64_t k = a.dims[a.rank - 1], n = b.dims[b.rank - 1];
  int64_t z = 1;
  for (int32_t d = 0; d + 2 < a.rank; ++d) z *= a.dims[d];
  // A shared 2-D B (a Linear layer over [B, N, C]): the batches are rows of one product, so
  // tiles span them ([z, M, K] x [K, N] is [z * M, K] x [K, N] in the same memory).
  if (b.rank == 2) {
    m *= z;
    z = 1;
  }
  return {to_i32(m, node),
          to_i32(n, node),
          to_i32(k, node),
          to_i32(m * k, node),
          b.rank > 2 ? to_i32(k * n, node) : 0,
          static_cast<size_t>(z)};
}

void bind_batched_matmul(const Kernel& k, cl_mem a, cl_mem b, cl_mem y, const BatchedMatMul& mm) {
  k.args()
      .buffer(a)
      .buffer(b)
      .buffer(y)
      .i32(mm.m)
      .i32(mm.n)
      .i32(mm.k)
      .i32(mm.a_batch)
      .i32(mm.b_batch)
      .i32(static_cast<int32_t>(mm.batches));
}

std::vector<size_t> batched_matmul_range(const BatchedMatMul& mm, int64_t rows, int64_t cols) {
  return {static_cast<size_t>((mm.n + cols - 1) / cols),
          static_cast<size_t>((mm.m + rows - 1) / rows), mm.batches};
}

int64_t tiled_matmul_local_bytes(const TiledMatMul& t) {
  const int64_t tile = static_cast<int64_t>(t.side) * t.per_item;
  return static_cast<int64_t>(t.k_tile) * (2 * tile + 1) * static_cast<int64_t>(sizeof(float));
}

bool tiled_matmul_fits(const TiledMatMul& t, const DeviceInfo& device) {
  const int64_t max_group = device.max_work_group_size > 0 ? device.max_work_group_size : 64;
  const int64_t local_limit = device.local_memory_bytes > 0 ? device.local_memory_bytes : 16384;
  return static_cast<int64_t>(t.side) * t.side <= max_group &&
         tiled_matmul_local_bytes(t) <= local_limit;
}

bool shrink_to_fit(TiledMatMul& t, const DeviceInfo& device) {
  while (t.side > 4 && !tiled_matmul_fits(t, device)) t.side /= 2;
  return tiled_matmul_fits(t, device);
}

std::optional<TiledMatMul> matmul_tiled_default(const BatchedMatMul& mm, const DeviceInfo& device) {
  if (device.kind != "gpu" || mm.m < 16 || mm.n < 16) return std::nullopt;
  const auto groups = [&](const TiledMatMul& t) {
    const int64_t tile = static_cast<int64_t>(t.side) * t.per_item;
    return ((mm.m + tile - 1) / tile) * ((mm.n + tile - 1) / tile) *
           static_cast<int64_t>(mm.batches);
  };
  const int64_t wanted = 4 * std::max<int64_t>(device.compute_units, 1);
  TiledMatMul t;
  if (!shrink_to_fit(t, device)) return std::nullopt;
  while (groups(t) < wanted && t.per_item > 1) t.per_item /= 2;
  while (groups(t) < wanted && t.side > 8) t.side /= 2;
  return t;
}

TiledMatMul tiled_matmul_of(const Config& config) {
  return {config.get("group_side"), config.get("per_item"), config.get("k_tile")};
}

std::pair<std::vector<size_t>, std::vector<size_t>> tiled_matmul_range(const BatchedMatMul& mm,
                                                                       const TiledMatMul& t) {
  const int64_t tile = static_cast<int64_t>(t.side) * t.per_item;
  const auto groups = [&](int64_t n) { return static_cast<size_t>((n + tile - 1) / tile); };
  const size_t side = static_cast<size_t>(t.side);
  return {{groups(mm.n) * side, groups(mm.m) * side, mm.batches}, {side, side, 1}};
}

std::optional<Broadcast4> coalesce_broadcast(const tsr_tensor& a, const tsr_tensor& b,
                                             const tsr_tensor& out) {
  const int32_t rank = out.rank;
  if (rank > 6 || a.rank > rank || b.rank > rank) return std::nullopt;
  auto strides = [&](const tsr_tensor& t) {
    std::vector<int64_t> s(static_cast<size_t>(rank), 0);
    int64_t stride = 1;
    for (int32_t d = t.rank - 1; d >= 0; --d) {
      const int32_t od = rank - (t.rank - d);
      s[static_cast<size_t>(od)] = t.dims[d] == 1 && out.dims[od] != 1 ? 0 : stride;
      stride *= t.dims[d];
    }
    return s;
  };
  const std::vector<int64_t> sa = strides(a), sb = strides(b);
  std::vector<int64_t> dims, xa, xb;
  for (int32_t d = 0; d < rank; ++d) {
    if (out.dims[d] == 1) continue;
    if (!dims.empty() && xa.back() == sa[d] * out.dims[d] && xb.back() == sb[d] * out.dims[d]) {
      dims.back() *= out.dims[d];
      xa.back() = sa[d];
      xb.back() = sb[d];
      continue;
    }
    dims.push_back(out.dims[d]);
    xa.push_back(sa[d]);
    xb.push_back(sb[d]);
  }
  if (dims.size() > 4) return std::nullopt;
  Broadcast4 r;
  const size_t off = 4 - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    r.dims[off + i] = dims[i];
    r.sa[off + i] = xa[i];
    r.sb[off + i] = xb[i];
  }
  return r;
}

}  // namespace tessera::opencl::support
