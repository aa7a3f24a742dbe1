// Header-only op-registry pieces shared by the OpenCL plugins' ops/op.hpp and op.cpp: the
// per-plugin tables from op type to lowering / tuning function (filled by static registrars in
// the op files), choosing the requested config, and the checks and conversions every op file
// uses. Each plugin keeps its own types (OpLowering, Config, Lowering) and instantiates these.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/error.hpp"
#include "tessera_opencl/plugin_support.hpp"

namespace tessera::opencl::support {

// The op registry of one plugin: its OpLoweringT (which has a `const char* op_type`) and
// TuningFnT per op type, filled by static registrars in the op files. The tables are
// function-local statics so registrars in any translation unit may run first; the plugin's own
// OpLoweringT keeps the plugins' tables apart.
template <class OpLoweringT, class TuningFnT>
struct OpRegistry {
  static std::map<std::string, OpLoweringT>& lowerings() {
    static std::map<std::string, OpLoweringT> table;
    return table;
  }
  static std::map<std::string, TuningFnT>& tunings() {
    static std::map<std::string, TuningFnT> table;
    return table;
  }
  // nullptr when the op is not implemented.
  static const OpLoweringT* find_lowering(const std::string& op_type) {
    auto it = lowerings().find(op_type);
    return it == lowerings().end() ? nullptr : &it->second;
  }
  // nullptr when the op has nothing to tune.
  static TuningFnT find_tuning(const std::string& op_type) {
    auto it = tunings().find(op_type);
    return it == tunings().end() ? nullptr : it->second;
  }
  struct LoweringRegistrar {
    explicit LoweringRegistrar(const OpLoweringT& op) { lowerings()[op.op_type] = op; }
  };
  struct TuningRegistrar {
    TuningRegistrar(const char* op_type, TuningFnT fn) { tunings()[op_type] = fn; }
  };
};

// The config core requested for node `index` if it is one of `options` with valid knob values,
// else options[0] (the heuristic's).
template <class LoweringT, class ConfigT>
ConfigT choose_config(const LoweringT& lowering, int32_t index,
                      const std::vector<ConfigT>& options) {
  auto it = lowering.requests.find(index);
  if (it != lowering.requests.end()) {
    if (auto c = apply_request(&it->second, options)) return *c;
  }
  return options.front();
}

// "" when `t` (called `what`) is float32 with a known shape small enough for 32-bit kernel
// indexing; else the reason. `float_only` ends the not-float32 reason, e.g. "(mali runs ...)".
inline std::string check_float_tensor(const tsr_tensor& t, const std::string& what,
                                      const char* float_only) {
  if (t.dtype != TSR_DTYPE_FLOAT32) return what + " is not float32 " + float_only;
  if (t.rank < 0 || t.rank > TESSERA_MAX_RANK) return what + " has an unknown rank";
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.dims[d] < 0) return what + " has an unknown dim";
  }
  if (plugin::tensor_numel(t) > INT_MAX / 2) {
    return what + " is too large for 32-bit kernel indexing";
  }
  return "";
}

// "" when every present input of `node` passes check_float_tensor; else the first reason.
inline std::string check_float_inputs(const NodeView& node, const char* float_only) {
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const std::string r =
        check_float_tensor(node.input(i), "input " + std::to_string(i), float_only);
    if (!r.empty()) return r;
  }
  return "";
}

// "" when input i is present and has constant data; else the reason.
inline std::string check_constant(const NodeView& node, int32_t i, const char* what) {
  if (!node.has_input(i)) return std::string(what) + " (input " + std::to_string(i) + ") missing";
  if (!node.input(i).data) {
    return std::string(what) + " (input " + std::to_string(i) + ") must be a constant";
  }
  return "";
}

// The constant float data of input i (check_constant must have passed).
inline const float* constant_floats(const NodeView& node, int32_t i) {
  return static_cast<const float*>(node.input(i).data);
}

// Clip: "" when the optional min/max inputs (opset 11+) are constant scalars; else the reason.
inline std::string check_clip_bounds(const NodeView& node) {
  if (!node.has_input(0)) return "input 0 missing";
  for (int32_t i = 1; i < node.num_inputs() && i < 3; ++i) {
    if (!node.has_input(i)) continue;
    const std::string r = check_constant(node, i, i == 1 ? "min" : "max");
    if (!r.empty()) return r;
    if (plugin::tensor_numel(node.input(i)) != 1) return "min/max must be scalars";
  }
  return "";
}

// Clip's {min, max}: attributes before opset 11, constant inputs from 11; absent = unbounded.
inline std::pair<float, float> clip_bounds(const NodeView& node) {
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

// BatchNormalization (inference): "" when scale, B, mean and var are constants with one value per
// channel of X and training_mode is off; else the reason.
inline std::string check_batch_norm_params(const NodeView& node) {
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

// BatchNormalization folded into y = x * scale[c] + shift[c] (check_batch_norm_params passed).
inline void fold_batch_norm(const NodeView& node, std::vector<float>& scale_out,
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

// `v` as int32; throws tessera::Error naming the node when it does not fit.
inline int32_t to_i32(int64_t v, const NodeView& node) {
  if (v < INT_MIN || v > INT_MAX) {
    throw Error(node.where() + ": size " + std::to_string(v) + " exceeds 32-bit kernel indexing");
  }
  return static_cast<int32_t>(v);
}

// A reduction's axes (ReduceMean etc.: the `axes` attribute before opset 18, a constant input
// from 18), normalised and sorted; nullopt with `why` set when absent, computed or out of range.
inline std::optional<std::vector<int64_t>> reduced_axes(const NodeView& node, std::string* why) {
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

// Resize in mode "linear" over H and W of a rank-4 float tensor (what the GPU plugins' bilinear
// kernels and CLML's resize op compute): "" when supported, else the reason. Sampling follows
// the ratio of the sizes, so explicit scales must equal it.
inline std::string check_resize_bilinear(const NodeView& node) {
  if (!node.has_input(0) || node.num_outputs() < 1 || node.output_id(0) < 0) {
    return "input 0 or output 0 missing";
  }
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  if (x.dtype != TSR_DTYPE_FLOAT32 || y.dtype != TSR_DTYPE_FLOAT32) return "not float32";
  if (x.rank != 4 || y.rank != 4) return "only rank-4 tensors";
  if (x.dims[0] != y.dims[0] || x.dims[1] != y.dims[1]) return "only H and W may be resized";
  if (node.attr_string("mode", "nearest") != "linear") return "only mode 'linear' (bilinear)";
  if (node.attr_int("antialias", 0) != 0) return "antialias is not supported";
  if (node.attr("axes") != nullptr) return "the axes attribute (opset 18) is not supported";
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

// How a bilinear Resize (check_resize_bilinear passed) maps output to input coordinates:
// 0 asymmetric (x / scale), 1 half-pixel centres ((x + 0.5) / scale - 0.5), 2 align corners.
inline int32_t resize_coordinate_mode(const NodeView& node) {
  const std::string ct = node.opset() < 11
                             ? "asymmetric"
                             : node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (ct == "align_corners") return 2;
  return ct == "asymmetric" ? 0 : 1;
}

// "" when `node` (ReduceMean) averages over exactly every spatial axis (2 .. rank - 1), the global
// average pool the GPU plugins run it as; else the reason.
inline std::string check_mean_over_spatial_axes(const NodeView& node) {
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

// LayerNormalization normalising the contiguous rows from `axis` (default -1) to the last axis:
// {rows, cols}; the checks every OpenCL plugin's row kernel (kernels/layer_norm.cl) needs: axis in
// range, float stash, constant Scale (and B) with one value per row element, no optional outputs.
inline std::pair<int64_t, int64_t> layer_norm_rows(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  int64_t axis = node.attr_int("axis", -1);
  if (axis < 0) axis += x.rank;
  int64_t cols = 1;
  for (int64_t d = axis; d < x.rank; ++d) cols *= x.dims[d];
  return {cols == 0 ? 0 : plugin::tensor_numel(x) / cols, cols};
}

inline std::string check_layer_norm(const NodeView& node) {
  const int64_t rank = node.input(0).rank;
  int64_t axis = node.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (rank == 0 || axis < 0 || axis >= rank) return "axis out of range";
  if (node.attr_int("stash_type", 1) != 1) return "only stash_type 1 (float) is implemented";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_id(i) >= 0) return "the optional Mean / InvStdDev outputs are not supported";
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

// Binds the arguments layer_norm_rows_f32 and layer_norm_group_f32 share (kernels/layer_norm.cl);
// `bias` nullptr = none. The group kernel's __local scratch follows on `args`.
inline void bind_layer_norm(KernelArgs& args, cl_mem x, cl_mem scale, cl_mem bias, cl_mem y,
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

// Knob values over a schedule's defaults, as the plugins' default_config takes them.
using ConfigOverrides = std::vector<std::pair<const char*, int32_t>>;

// layer_norm.group's heuristic threads_per_row for rows of `cols`: a power of two, about four
// columns each, at most 256.
inline int32_t layer_norm_threads(int64_t cols) {
  int32_t threads = 8;
  while (threads < 256 && threads * 4 < cols) threads *= 2;
  return threads;
}

// LayerNormalization's configs in order, for both GPU plugins (`make` as for MatMul): on GPUs
// layer_norm.group (a row per threads_per_row work-items, groups of about 128) first, then
// layer_norm.rows (a work-item per row); CPU devices the other way round.
template <class MakeConfig>
std::vector<Config> layer_norm_options(const NodeView& node, const DeviceInfo& device,
                                       const MakeConfig& make) {
  const auto [rows, cols] = layer_norm_rows(node);
  const int32_t threads = layer_norm_threads(cols);
  const Config per_row = make("layer_norm.rows", rows, ConfigOverrides{});
  const Config group =
      make("layer_norm.group", rows,
           ConfigOverrides{{"threads_per_row", threads},
                           {"rows_per_group", std::max<int32_t>(1, std::min(8, 128 / threads))}});
  if (device.kind == "gpu") return {group, per_row};
  return {per_row, group};
}

// layer_norm_group_f32's launch for `config`: global, local and the __local bytes.
inline SplitLaunch layer_norm_group_launch(const NodeView& node, const Config& config) {
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

// Softmax over contiguous rows (kernels/softmax.cl): before opset 13 the input is viewed as 2-D
// at `axis` (default 1), from 13 the axis (default -1) must be the last. {rows, cols}.
inline int64_t softmax_axis(const NodeView& node) {
  const int64_t axis = node.attr_int("axis", node.opset() < 13 ? 1 : -1);
  return axis < 0 ? axis + node.input(0).rank : axis;
}

inline std::string check_softmax_rows(const NodeView& node) {
  const int64_t rank = node.input(0).rank;
  const int64_t axis = softmax_axis(node);
  if (rank == 0 || axis < 0 || axis >= rank) return "axis out of range";
  if (node.opset() >= 13 && axis != rank - 1) return "only the last axis is implemented";
  return "";
}

inline std::pair<int64_t, int64_t> softmax_rows(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  int64_t rows = 1;
  for (int64_t d = 0; d < softmax_axis(node); ++d) rows *= x.dims[d];
  return {rows, rows == 0 ? 0 : plugin::tensor_numel(x) / rows};
}

// MatMul as batched row-major GEMMs (kernels/matmul.cl): A (..., M, K) times B (..., K, N) with
// the batch dims flattened, B either with A's batch dims or 2-D (shared by every batch).
inline std::string check_matmul_batched(const NodeView& node) {
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

// Gemm / 2-D MatMul operands of the shared gemm_split_f32 (matmul.cl) and the plugins' gemm_f32:
// sizes, A' and B' strides (transposes as strides) and C's broadcast strides.
struct GemmOperands {
  int32_t m = 0, n = 0, k = 0;
  std::array<int32_t, 4> st{};  // A row, A column, B row, B column strides
  std::array<int32_t, 4> cs{};  // C row stride, C column stride, has C, 0
};

// `y` = alpha * op(`a`) * op(b) + beta * `c` (c: nullptr = none, else rank <= 2).
inline GemmOperands gemm_operands(const NodeView& node, const tsr_tensor& a, const tsr_tensor* c,
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

// Binds gemm_f32's arguments (gemm_split_f32 takes its __local scratch after them).
inline KernelArgs& bind_gemm(KernelArgs& args, cl_mem a, cl_mem b, cl_mem c, cl_mem y,
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

// gemm.split's heuristic k_split: split while the outputs leave the device idle, each slice
// keeping at least 64 of K.
inline int32_t gemm_default_split(const GemmOperands& g, const DeviceInfo& device) {
  return default_split(static_cast<int64_t>(g.m) * g.n, g.k / 16, device);
}

// gemm_batched_f32's M, N, K, A and B batch strides, and the batch count.
struct BatchedMatMul {
  int32_t m, n, k, a_batch, b_batch;
  size_t batches;
};

inline BatchedMatMul batched_matmul(const NodeView& node) {
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

// Binds gemm_batched_f32's arguments (kernels/matmul.cl).
inline void bind_batched_matmul(const Kernel& k, cl_mem a, cl_mem b, cl_mem y,
                                const BatchedMatMul& mm) {
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

// The global range of gemm_batched_f32 with a rows x cols output tile per work-item.
inline std::vector<size_t> batched_matmul_range(const BatchedMatMul& mm, int64_t rows,
                                                int64_t cols) {
  return {static_cast<size_t>((mm.n + cols - 1) / cols),
          static_cast<size_t>((mm.m + rows - 1) / rows), mm.batches};
}

// matmul.tiled (gemm_tiled_f32): a group_side x group_side work-group computes a
// (group_side * per_item)^2 tile of the product through __local memory, k_tile deep.
struct TiledMatMul {
  int32_t side = 16, per_item = 4, k_tile = 16;
};

// __local bytes of gemm_tiled_f32's two slices.
inline int64_t tiled_matmul_local_bytes(const TiledMatMul& t) {
  const int64_t tile = static_cast<int64_t>(t.side) * t.per_item;
  return static_cast<int64_t>(t.k_tile) * (2 * tile + 1) * static_cast<int64_t>(sizeof(float));
}

// Whether `device` can launch `t`: the group within its work-group limit and the slices within
// its local memory (a tuner's config beyond them is refused for the node, not run).
inline bool tiled_matmul_fits(const TiledMatMul& t, const DeviceInfo& device) {
  const int64_t max_group = device.max_work_group_size > 0 ? device.max_work_group_size : 64;
  const int64_t local_limit = device.local_memory_bytes > 0 ? device.local_memory_bytes : 16384;
  return static_cast<int64_t>(t.side) * t.side <= max_group &&
         tiled_matmul_local_bytes(t) <= local_limit;
}

// `t` with its group side halved (down to 4) until the device can launch it; whether it can.
inline bool shrink_to_fit(TiledMatMul& t, const DeviceInfo& device) {
  while (t.side > 4 && !tiled_matmul_fits(t, device)) t.side /= 2;
  return tiled_matmul_fits(t, device);
}

// The heuristic's matmul.tiled knobs, or nullopt where matmul.batched (one output per
// work-item) runs first: CPU devices (PoCL runs the plain loop well, barriers cost it) and
// products under 16 x 16, where most of a tile would be padding. The tile starts at 64 x 64 (16 x
// 16 work-items of 4 x 4 outputs) and shrinks, fewer outputs per work-item first, until the
// launch has four groups per compute unit: swin_t's last stage (M = 49, N = 3072) gets 16 x 16
// tiles where 64 x 64 ones left most of an H100's units idle.
inline std::optional<TiledMatMul> matmul_tiled_default(const BatchedMatMul& mm,
                                                       const DeviceInfo& device) {
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

inline TiledMatMul tiled_matmul_of(const Config& config) {
  return {config.get("group_side"), config.get("per_item"), config.get("k_tile")};
}

// gemm_tiled_f32's global and local ranges.
inline std::pair<std::vector<size_t>, std::vector<size_t>> tiled_matmul_range(
    const BatchedMatMul& mm, const TiledMatMul& t) {
  const int64_t tile = static_cast<int64_t>(t.side) * t.per_item;
  const auto groups = [&](int64_t n) { return static_cast<size_t>((n + tile - 1) / tile); };
  const size_t side = static_cast<size_t>(t.side);
  return {{groups(mm.n) * side, groups(mm.m) * side, mm.batches}, {side, side, 1}};
}

// A batched MatMul's configs in order, for both GPU plugins (`make` is the plugin's
// default_config for a schedule, dim 0 and overrides): matmul.tiled with its heuristic's knobs
// first where that runs it, then matmul.batched (one output per work-item); elsewhere
// matmul.batched first and a small matmul.tiled second, so the tuner still sees it.
template <class MakeConfig>
std::vector<Config> batched_matmul_options(const BatchedMatMul& mm, const DeviceInfo& device,
                                           const MakeConfig& make) {
  const Config batched = make("matmul.batched", mm.n, ConfigOverrides{});
  const std::optional<TiledMatMul> first = matmul_tiled_default(mm, device);
  TiledMatMul t = first.value_or(TiledMatMul{8, 2, 16});
  shrink_to_fit(t, device);  // the second choice is listed even where it cannot launch
  const Config tiled =
      make("matmul.tiled", mm.n,
           ConfigOverrides{{"group_side", t.side}, {"per_item", t.per_item}, {"k_tile", t.k_tile}});
  if (first) return {tiled, batched};
  return {batched, tiled};
}

// A broadcast element-wise op over the output's shape (rank <= 6) seen as at most 4 dims: each
// operand's row-major strides aligned to the output (0 along its broadcast dims), size-1 dims
// dropped and neighbours merged where both operands run contiguously across them (a rank-5
// attention-mask Add becomes rank 4). nullopt when more than 4 dims remain.
struct Broadcast4 {
  std::array<int64_t, 4> dims{1, 1, 1, 1};
  std::array<int64_t, 4> sa{}, sb{};
};

inline std::optional<Broadcast4> coalesce_broadcast(const tsr_tensor& a, const tsr_tensor& b,
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

// Declares, in a plugin's namespace, the op tables of its `LoweringT` entries and `TuningFnT`
// tuning functions (Registry and its two registrars), their lookups find_lowering/find_tuning,
// and choose_config (the requested config, else the heuristic's).
#define TESSERA_OPENCL_OP_REGISTRY(LoweringT, TuningFnT)                         \
  using Registry = ::tessera::opencl::support::OpRegistry<LoweringT, TuningFnT>; \
  using OpLoweringRegistrar = Registry::LoweringRegistrar;                       \
  using TuningRegistrar = Registry::TuningRegistrar;                             \
  inline const LoweringT* find_lowering(const std::string& op_type) {            \
    return Registry::find_lowering(op_type);                                     \
  }                                                                              \
  inline TuningFnT find_tuning(const std::string& op_type) {                     \
    return Registry::find_tuning(op_type);                                       \
  }                                                                              \
  using ::tessera::opencl::support::choose_config
