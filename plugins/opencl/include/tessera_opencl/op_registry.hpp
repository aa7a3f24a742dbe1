// Op-registry pieces shared by the OpenCL plugins' ops/op.hpp and op.cpp: the per-plugin tables
// from op type to lowering / tuning function (filled by static registrars in the op files),
// choosing the requested config (templates, here), and the checks and conversions every op file
// uses (compiled into libtessera-opencl, src/op_registry.cpp). Each plugin keeps its own types
// (OpLowering, Config, Lowering) and instantiates these.
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
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/error.hpp"
#include "tessera_opencl/plugin_support.hpp"

namespace tessera::opencl::support {

// The op registry of one plugin: its OpLoweringT (which has a `const char* op_type`) and
// TuningFnT per op type, filled by static registrars in the op files. The tables are
// function-local statics so registrars in any translation unit may run first; the plugin's own
// Tag type keeps the plugins' tables apart.
template <class OpLoweringT, class TuningFnT, class Tag>
struct OpRegistry {
  using Op = OpLoweringT;
  using Tuning = TuningFnT;
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

// The lowering that runs a node, from the first of a plugin's tables whose op of the node's type
// accepts it (OpenClPlugin asks Traits::select for it).
template <class OpT, class TuningT>
struct SelectedOp {
  const OpT* lowering = nullptr;
  TuningT tuning = nullptr;
  bool known = false;  // some table has the op type
  std::string reason;  // why none accepts the node (each table's reason)
};

// Tries `Registries` in order: the first whose op of the node's type accepts the node runs it.
template <class... Registries, class DeviceT>
auto select_in(const NodeView& node, const DeviceT& device) {
  using First = std::tuple_element_t<0, std::tuple<Registries...>>;
  SelectedOp<typename First::Op, typename First::Tuning> out;
  const std::string type = node.op_type();
  auto try_one = [&](const auto* op, auto tuning) {
    if (out.lowering || !op) return;
    out.known = true;
    const std::string reason = op->check(node, device);
    if (reason.empty()) {
      out.lowering = op;
      out.tuning = tuning;
      return;
    }
    out.reason += (out.reason.empty() ? "" : "; ") + reason;
  };
  (try_one(Registries::find_lowering(type), Registries::find_tuning(type)), ...);
  if (!out.known) out.reason = "no kernel for op '" + type + "'";
  return out;
}

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
std::string check_float_tensor(const tsr_tensor& t, const std::string& what,
                               const char* float_only);

// "" when every present input of `node` passes check_float_tensor; else the first reason.
std::string check_float_inputs(const NodeView& node, const char* float_only);

// "" when input i is present and has constant data; else the reason.
std::string check_constant(const NodeView& node, int32_t i, const char* what);

// The constant float data of input i (check_constant must have passed).
const float* constant_floats(const NodeView& node, int32_t i);

// Clip: "" when the optional min/max inputs (opset 11+) are constant scalars; else the reason.
std::string check_clip_bounds(const NodeView& node);

// Clip's {min, max}: attributes before opset 11, constant inputs from 11; absent = unbounded.
std::pair<float, float> clip_bounds(const NodeView& node);

// BatchNormalization (inference): "" when scale, B, mean and var are constants with one value per
// channel of X and training_mode is off; else the reason.
std::string check_batch_norm_params(const NodeView& node);

// BatchNormalization folded into y = x * scale[c] + shift[c] (check_batch_norm_params passed).
void fold_batch_norm(const NodeView& node, std::vector<float>& scale_out,
                     std::vector<float>& shift_out);

// `v` as int32; throws tessera::Error naming the node when it does not fit.
int32_t to_i32(int64_t v, const NodeView& node);

// A reduction's axes (ReduceMean etc.: the `axes` attribute before opset 18, a constant input
// from 18), normalised and sorted; nullopt with `why` set when absent, computed or out of range.
std::optional<std::vector<int64_t>> reduced_axes(const NodeView& node, std::string* why);

// Resize in mode "linear" over H and W of a rank-4 float tensor (what the GPU plugins' bilinear
// kernels and CLML's resize op compute): "" when supported, else the reason. Sampling follows
// the ratio of the sizes, so explicit scales must equal it.
std::string check_resize_bilinear(const NodeView& node);

// How a bilinear Resize (check_resize_bilinear passed) maps output to input coordinates:
// 0 asymmetric (x / scale), 1 half-pixel centres ((x + 0.5) / scale - 0.5), 2 align corners.
int32_t resize_coordinate_mode(const NodeView& node);

// "" when `node` (ReduceMean) averages over exactly every spatial axis (2 .. rank - 1), the global
// average pool the GPU plugins run it as; else the reason.
std::string check_mean_over_spatial_axes(const NodeView& node);

// LayerNormalization normalising the contiguous rows from `axis` (default -1) to the last axis:
// {rows, cols}; the checks every OpenCL plugin's row kernel (kernels/layer_norm.cl) needs: axis in
// range, float stash, constant Scale (and B) with one value per row element, no optional outputs.
std::pair<int64_t, int64_t> layer_norm_rows(const NodeView& node);

std::string check_layer_norm(const NodeView& node);

// Binds the arguments layer_norm_rows_f32 and layer_norm_group_f32 share (kernels/layer_norm.cl);
// `bias` nullptr = none. The group kernel's __local scratch follows on `args`.
void bind_layer_norm(KernelArgs& args, cl_mem x, cl_mem scale, cl_mem bias, cl_mem y,
                     const NodeView& node);

// Knob values over a schedule's defaults, as the plugins' default_config takes them.
using ConfigOverrides = std::vector<std::pair<const char*, int32_t>>;

// layer_norm.group's heuristic threads_per_row for rows of `cols`: a power of two, about four
// columns each, at most 256.
int32_t layer_norm_threads(int64_t cols);

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
SplitLaunch layer_norm_group_launch(const NodeView& node, const Config& config);

// Softmax over contiguous rows (kernels/softmax.cl): before opset 13 the input is viewed as 2-D
// at `axis` (default 1), from 13 the axis (default -1) must be the last. {rows, cols}.
int64_t softmax_axis(const NodeView& node);

std::string check_softmax_rows(const NodeView& node);

std::pair<int64_t, int64_t> softmax_rows(const NodeView& node);

// MatMul as batched row-major GEMMs (kernels/matmul.cl): A (..., M, K) times B (..., K, N) with
// the batch dims flattened, B either with A's batch dims or 2-D (shared by every batch).
std::string check_matmul_batched(const NodeView& node);

// Gemm / 2-D MatMul operands of the shared gemm_split_f32 (matmul.cl) and the plugins' gemm_f32:
// sizes, A' and B' strides (transposes as strides) and C's broadcast strides.
struct GemmOperands {
  int32_t m = 0, n = 0, k = 0;
  std::array<int32_t, 4> st{};  // A row, A column, B row, B column strides
  std::array<int32_t, 4> cs{};  // C row stride, C column stride, has C, 0
};

// `y` = alpha * op(`a`) * op(b) + beta * `c` (c: nullptr = none, else rank <= 2).
GemmOperands gemm_operands(const NodeView& node, const tsr_tensor& a, const tsr_tensor* c,
                           bool trans_a, bool trans_b);

// Binds gemm_f32's arguments (gemm_split_f32 takes its __local scratch after them).
KernelArgs& bind_gemm(KernelArgs& args, cl_mem a, cl_mem b, cl_mem c, cl_mem y,
                      const GemmOperands& g, float alpha, float beta);

// gemm.split's heuristic k_split: split while the outputs leave the device idle, each slice
// keeping at least 64 of K.
int32_t gemm_default_split(const GemmOperands& g, const DeviceInfo& device);

// gemm_batched_f32's M, N, K, A and B batch strides, and the batch count.
struct BatchedMatMul {
  int32_t m, n, k, a_batch, b_batch;
  size_t batches;
};

BatchedMatMul batched_matmul(const NodeView& node);

// Binds gemm_batched_f32's arguments (kernels/matmul.cl).
void bind_batched_matmul(const Kernel& k, cl_mem a, cl_mem b, cl_mem y, const BatchedMatMul& mm);

// The global range of gemm_batched_f32 with a rows x cols output tile per work-item.
std::vector<size_t> batched_matmul_range(const BatchedMatMul& mm, int64_t rows, int64_t cols);

// matmul.tiled (gemm_tiled_f32): a group_side x group_side work-group computes a
// (group_side * per_item)^2 tile of the product through __local memory, k_tile deep.
struct TiledMatMul {
  int32_t side = 16, per_item = 4, k_tile = 16;
};

// __local bytes of gemm_tiled_f32's two slices.
int64_t tiled_matmul_local_bytes(const TiledMatMul& t);

// Whether `device` can launch `t`: the group within its work-group limit and the slices within
// its local memory (a tuner's config beyond them is refused for the node, not run).
bool tiled_matmul_fits(const TiledMatMul& t, const DeviceInfo& device);

// `t` with its group side halved (down to 4) until the device can launch it; whether it can.
bool shrink_to_fit(TiledMatMul& t, const DeviceInfo& device);

// The heuristic's matmul.tiled knobs, or nullopt where matmul.batched (one output per
// work-item) runs first: CPU devices (PoCL runs the plain loop well, barriers cost it) and
// products under 16 x 16, where most of a tile would be padding. The tile starts at 64 x 64 (16 x
// 16 work-items of 4 x 4 outputs) and shrinks, fewer outputs per work-item first, until the
// launch has four groups per compute unit: swin_t's last stage (M = 49, N = 3072) gets 16 x 16
// tiles where 64 x 64 ones left most of an H100's units idle.
std::optional<TiledMatMul> matmul_tiled_default(const BatchedMatMul& mm, const DeviceInfo& device);

TiledMatMul tiled_matmul_of(const Config& config);

// gemm_tiled_f32's global and local ranges.
std::pair<std::vector<size_t>, std::vector<size_t>> tiled_matmul_range(const BatchedMatMul& mm,
                                                                       const TiledMatMul& t);

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

std::optional<Broadcast4> coalesce_broadcast(const tsr_tensor& a, const tsr_tensor& b,
                                             const tsr_tensor& out);
}  // namespace tessera::opencl::support

// Declares, in a plugin's namespace, the op tables of its `LoweringT` entries and `TuningFnT`
// tuning functions (Registry and its two registrars), their lookups find_lowering/find_tuning,
// and choose_config (the requested config, else the heuristic's).
#define TESSERA_OPENCL_OP_REGISTRY(LoweringT, TuningFnT, Tag)                         \
  using Registry = ::tessera::opencl::support::OpRegistry<LoweringT, TuningFnT, Tag>; \
  using OpLoweringRegistrar = Registry::LoweringRegistrar;                            \
  using TuningRegistrar = Registry::TuningRegistrar;                                  \
  inline const LoweringT* find_lowering(const std::string& op_type) {                 \
    return Registry::find_lowering(op_type);                                          \
  }                                                                                   \
  inline TuningFnT find_tuning(const std::string& op_type) {                          \
    return Registry::find_tuning(op_type);                                            \
  }                                                                                   \
  using ::tessera::opencl::support::choose_config

#define TSR_OPENCL_CONCAT_INNER(a, b) a##b
#define TSR_OPENCL_CONCAT(a, b) TSR_OPENCL_CONCAT_INNER(a, b)
// Registers an op in the table TESSERA_OPENCL_OP_REGISTRY declared in namespace tessera::`ns`:
// the arguments are the fields of that namespace's OpLowering.
#define TESSERA_OPENCL_PLUGIN_OP(ns, ...)                            \
  static const ::tessera::ns::OpLoweringRegistrar TSR_OPENCL_CONCAT( \
      tsr_op_, __LINE__)(::tessera::ns::OpLowering{__VA_ARGS__})
// Registers the tuning function `fn` (the configs worth measuring) of `op_type` there.
#define TESSERA_OPENCL_PLUGIN_TUNABLE(ns, op_type, fn) \
  static const ::tessera::ns::TuningRegistrar TSR_OPENCL_CONCAT(tsr_tunable_, __LINE__)(op_type, fn)
