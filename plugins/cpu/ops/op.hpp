// Shared shapes of the cpu plugin's ops: the per-node capability check and the step builder each
// op file provides, and the compile-time context (fusion decisions, values, options).
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/elementwise.hpp"
#include "schedules.hpp"
#include "tessera/plugin.hpp"

namespace tessera::cpu {

using plugin::NodeView;
using plugin::RegionView;

// At execute time every value of the region is a float pointer (inputs, outputs, owned scratch,
// or an alias of another value for reshape-like ops).
using Step = std::function<void(std::vector<float*>& values)>;

struct Activation {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};

// A value stored inside another: value's buffer is base's buffer + offset floats (a Concat input
// written straight into its slice of the Concat output).
struct View {
  int32_t value, base;
  int64_t offset;
};

struct BuildContext {
  const RegionView& region;
  const NodeView& node;
  int64_t threads;
  int32_t output;                     // value the (possibly fused) result is written to
  Activation act;                     // fused Relu/Clip
  const NodeView* bn;                 // fused BatchNormalization after a Conv, or nullptr
  const std::vector<bool>* external;  // per value: core's buffer (region input or output)
  std::vector<int32_t>* aliases;      // value -> value it aliases (reshape-likes), -1 = none
  std::vector<View>* views;           // values placed inside others (set before each run)
  std::vector<std::string>* notes;    // chosen schedules, for messages
  const plugin::NodeConfig* config;   // requested by core (pack or tuner), nullptr = heuristic
  int32_t residual = -1;           // Conv: value of a fused Add's other input, added before `act`
  const NodeView* pool = nullptr;  // Conv: fused MaxPool after `act` (conv_pool_fusable)
  // Conv: a fused depthwise Conv after `act` (conv_depthwise_fusable), its folded
  // BatchNormalization (or nullptr) and its activation; `output` is the depthwise chain's.
  const NodeView* dw = nullptr;
  const NodeView* dw_bn = nullptr;
  Activation dw_act;
  // A pointwise op fused after the node (and after `act`): region.cpp runs it in place over
  // `output` right after the node's step, while the data is still in cache.
  UnaryFn post;
  // Sigmoid: its only reader multiplies it by the Sigmoid's input, so the step computes SiLU.
  bool silu = false;
  // Transpose to NHWC: the LayerNormalization over channels that alone reads it
  // (channel_layer_norm_fusable); `output` is its output, or the Transpose back to NCHW's.
  const NodeView* channel_ln = nullptr;
  // MatMul: a fused Add's constant bias, one value per output column (nn.Linear on 3-D
  // activations exports as MatMul + Add), added in the GEMM's epilogue before `residual`.
  const float* col_bias = nullptr;
  // Set by a builder whose kernels apply `post` themselves (block by block, in cache); region.cpp
  // otherwise runs it as a pass after the step.
  bool post_done = false;
};

// The post op for a kernel's Epilogue::post, owned by the step (nullptr when there is none), and
// marks it done in ctx.
std::shared_ptr<const UnaryFn> take_post(BuildContext& ctx);

// The config a node runs: ctx.config when it fits the heuristic's schedule, else the heuristic
// (with a note saying why the request was dropped). Notes the choice either way.
Config choose_config(BuildContext& ctx, const Config& heuristic, const std::string& prefix = "");

// Exported LayerNorm2d (layer_norm.cpp): `transpose` (perm 0 2 3 1, rank 4) read alone by `ln`,
// which normalises the channels only, with constant scale and bias.
bool is_transpose(const NodeView& node, const std::vector<int64_t>& perm);
bool channel_layer_norm_fusable(const RegionView& region, const NodeView& transpose,
                                const NodeView& ln);
Step build_channel_layer_norm(BuildContext& ctx);

// A squeeze-excitation block the pool node starts (squeeze_excite.cpp; fusion.cpp finds it):
// fc1 and fc2 are its 1x1 convs, act1 the activation between them (a clamp or a pointwise op),
// gate the Sigmoid / HardSigmoid before the Mul onto the pooled tensor.
struct SqueezeExcite {
  const NodeView* fc1 = nullptr;
  const NodeView* fc2 = nullptr;
  UnaryFn act1;
  UnaryFn gate;
};
// Whether `conv` can be one of the block's convs: 1x1, group 1, no pads, on [N, in_channels, 1,
// 1], with constant weights and bias.
bool squeeze_excite_fc(const RegionView& region, const NodeView& conv, int64_t in_channels);
Step build_squeeze_excite(BuildContext& ctx, const SqueezeExcite& se);

// "" when supported, else why not. Each op file implements its own.
using QueryFn = std::string (*)(const RegionView&, const NodeView&);
using BuildFn = Step (*)(BuildContext&);

struct OpEntry {
  const char* op_type;
  QueryFn query;
  BuildFn build;
};

const std::vector<OpEntry>& op_table();
const OpEntry* find_op(std::string_view op_type);

// Helpers shared by op files.
bool is_f32(const tsr_tensor* t);
// Bytes per element when x and y share a dtype of 1, 2, 4 or 8 bytes, else 0: the ops that only
// move data (Transpose, Slice, Split, Tile, Expand, Gather) take any such type (int64 ids, bool
// masks) as bit copies.
int64_t copy_element_bytes(const tsr_tensor* x, const tsr_tensor* y);
std::vector<int64_t> dims(const tsr_tensor& t);
int64_t numel(const tsr_tensor& t);
const float* constant_f32(const tsr_tensor* t);  // nullptr when not a float32 constant
// An int32/int64 constant's values as int64; false when t is absent, not constant or not integer.
bool constant_ints(const tsr_tensor* t, std::vector<int64_t>* out);
// Index i of an axis of extent e (negative counts from the end) as an offset in [0, e); an index
// outside [-e, e) fails the run with an error naming `node`: indices given at run time (Gather,
// GatherElements, GatherND) are checked before any read.
[[noreturn]] void index_out_of_range(int64_t i, int64_t e, const std::string& node);
inline int64_t checked_index(int64_t i, int64_t e, const std::string& node) {
  if (i < -e || i >= e) index_out_of_range(i, e, node);
  return i < 0 ? i + e : i;
}
// A Conv's operands as every conv path needs them (float32 throughout, constant weights, a
// constant bias if any) and its input rank one of `ranks`; throws plugin::Failure naming the node.
void check_conv_operands(const NodeView& node, std::initializer_list<int32_t> ranks,
                         const char* rank_message);
// The GEMM epilogue of a conv: per-output-channel bias (rows of C), then the fused activation.
Epilogue bias_clamp(const float* bias, const Activation& act);
// Folds a BatchNormalization after a conv into its weights (oc rows of k) and bias (oc):
// y = s * (conv(x) + b - mean) + beta, s = gamma / sqrt(var + eps).
void fold_batch_norm(const NodeView& bn, int64_t oc, int64_t k, float* weights, float* bias);
// Relu or Clip with constant bounds: fills `act` and returns true.
bool activation_of(const RegionView& region, const NodeView& node, Activation* act);

// The heuristic's config of a node the tuner may change (a GEMM-path Conv; Gemm and 2-D MatMul),
// nullopt for nodes with nothing to tune or that cpu cannot run.
// Convs may have several (3x3 stride 1: im2col GEMM and Winograd), the heuristic's first.
std::vector<Config> tunable_conv(const RegionView& region, const NodeView& node, int64_t threads);
std::optional<Config> tunable_gemm(const RegionView& region, const NodeView& node, int64_t threads);

std::string query_conv(const RegionView&, const NodeView&);
Step build_conv(BuildContext&);
// Conv with a rank-5 input (conv3d.cpp), which query_conv / build_conv hand it to.
bool is_conv3d(const NodeView& node);
std::string query_conv3d(const RegionView&, const NodeView&);
Step build_conv3d(BuildContext&);
std::string query_gemm(const RegionView&, const NodeView&);
Step build_gemm(BuildContext&);
std::string query_matmul(const RegionView&, const NodeView&);
// The constant bias `add` adds to MatMul output `value`: a float32 vector of the output's last
// dimension, broadcast over the other axes, with `add`'s output shaped like `value`. nullptr
// when `add` is anything else.
const float* matmul_column_bias(const NodeView& add, int32_t value);
// Rows of the GEMM a MatMul runs: batch * M with constant 2-D weights (one GEMM), else M.
int64_t matmul_gemm_rows(const NodeView& node);
Step build_matmul(BuildContext&);
// Broadcasting arithmetic (binary.cpp): Add, Sub, Mul, Div, Min, Max, Pow, PRelu, Sum, Mean.
std::string query_binary(const RegionView&, const NodeView&);
Step build_binary(BuildContext&);
// The same ops on int8/uint8/int32/int64 (binary_int.cpp): Add, Sub, Mul, Div, Min, Max with
// wrap-around and truncating division, Min/Max of any input count; query_binary and build_binary
// hand such nodes to these.
bool is_int_binary(const NodeView& node);
std::string query_binary_int(const RegionView&, const NodeView&);
Step build_binary_int(BuildContext&);
// A two-input float32 Add whose inputs and output share one shape (a residual Add).
bool same_shape_add(const NodeView& node);
// Pointwise activations and math (unary.cpp); unary_fn_of maps a node to its function (Relu and
// Clip to a clamp) and returns false for ops or attributes it does not cover.
bool unary_fn_of(const RegionView& region, const NodeView& node, UnaryFn* fn);
std::string query_unary(const RegionView&, const NodeView&);
// CumSum over float32/int32/int64 with a constant axis (cum_sum.cpp).
std::string query_cum_sum(const RegionView&, const NodeView&);
Step build_cum_sum(BuildContext&);
// GatherElements over any 1/2/4/8-byte element type (gather_elements.cpp).
std::string query_gather_elements(const RegionView&, const NodeView&);
Step build_gather_elements(BuildContext&);
// GatherND over any 1/2/4/8-byte element type with int64 indices (gather_nd.cpp).
std::string query_gather_nd(const RegionView&, const NodeView&);
Step build_gather_nd(BuildContext&);
// Trilu over any 1/2/4/8-byte element type with a constant k (trilu.cpp).
std::string query_trilu(const RegionView&, const NodeView&);
Step build_trilu(BuildContext&);
std::string query_grid_sample(const RegionView&, const NodeView&);
Step build_grid_sample(BuildContext&);
std::string query_lrn(const RegionView&, const NodeView&);
Step build_lrn(BuildContext&);
// QuantizeLinear / DequantizeLinear (quantize.cpp), and the fake quantization (kFakeQuant) of a
// per-tensor QuantizeLinear -> DequantizeLinear pair with one scale and zero point.
std::string query_quantize(const RegionView&, const NodeView&);
Step build_quantize(BuildContext&);
bool quant_pair_fn(const NodeView& quantize, const NodeView& dequantize, UnaryFn* fn);
// The pair as one step from the QuantizeLinear's input to ctx.output.
Step build_fake_quant(BuildContext& ctx, const UnaryFn& fn);
Step build_unary(BuildContext&);
std::string query_batch_norm(const RegionView&, const NodeView&);
Step build_batch_norm(BuildContext&);
// A MaxPool/AveragePool node's window as the kernels take it (c = batch x channels planes).
ConvGeometry pool_geometry(const NodeView& pool);
// Whether `pool` (a supported MaxPool reading conv's output) can run inside conv's step: a
// non-depthwise conv on phase planes, with a 3x3 stride-2 pool (phase_gemm_conv_pool).
bool conv_pool_fusable(const NodeView& conv, const NodeView& pool);
// Whether `depthwise` (a Conv reading conv's output) can run inside conv's step: a 1x1 stride-1
// conv, then a 3x3 pad-1 depthwise conv (pointwise_depthwise_conv), on rows >= 28 wide.
bool conv_depthwise_fusable(const NodeView& conv, const NodeView& depthwise);

std::string query_pool(const RegionView&, const NodeView&);
Step build_pool(BuildContext&);
// MaxPool on int8/uint8 (pool_int8.cpp); query_pool and build_pool hand such nodes to these.
bool is_int8_pool(const NodeView& node);
std::string query_pool_int8(const RegionView&, const NodeView&);
Step build_pool_int8(BuildContext&);
std::string query_global_average_pool(const RegionView&, const NodeView&);
Step build_global_average_pool(BuildContext&);
// Reductions over adjacent axes (reduce.cpp).
std::string query_reduce(const RegionView&, const NodeView&);
Step build_reduce(BuildContext&);
std::string query_softmax(const RegionView&, const NodeView&);
Step build_softmax(BuildContext&);
// MaxPool / AveragePool on rank-5 tensors (pool3d.cpp), which build_pool hands on once
// query_pool has checked them.
Step build_pool3d(BuildContext&);
std::string query_compare(const RegionView&, const NodeView&);
Step build_compare(BuildContext&);
// IsNaN / IsInf (detect_positive, detect_negative) on float32 into bool (compare.cpp).
std::string query_is_nan_inf(const RegionView&, const NodeView&);
Step build_is_nan_inf(BuildContext&);
std::string query_not(const RegionView&, const NodeView&);
Step build_not(BuildContext&);
std::string query_where(const RegionView&, const NodeView&);
Step build_where(BuildContext&);
std::string query_cast(const RegionView&, const NodeView&);
Step build_cast(BuildContext&);
std::string query_layer_norm(const RegionView&, const NodeView&);
Step build_layer_norm(BuildContext&);
// Data movement: strided copies (transpose.cpp, slice.cpp, split.cpp, gather.cpp, expand.cpp),
// pads (pad.cpp) and spatial resizing (resize.cpp).
std::string query_transpose(const RegionView&, const NodeView&);
Step build_transpose(BuildContext&);
std::string query_slice(const RegionView&, const NodeView&);
Step build_slice(BuildContext&);
std::string query_split(const RegionView&, const NodeView&);
Step build_split(BuildContext&);
std::string query_gather(const RegionView&, const NodeView&);
Step build_gather(BuildContext&);
std::string query_expand(const RegionView&, const NodeView&);
Step build_expand(BuildContext&);
std::string query_pad(const RegionView&, const NodeView&);
Step build_pad(BuildContext&);
std::string query_resize(const RegionView&, const NodeView&);
Step build_resize(BuildContext&);
std::string query_view(const RegionView&, const NodeView&);
Step build_view(BuildContext&);
std::string query_concat(const RegionView&, const NodeView&);
Step build_concat(BuildContext&);
// Transposed conv as GEMM + col2im (conv_transpose.cpp).
std::string query_conv_transpose(const RegionView&, const NodeView&);
Step build_conv_transpose(BuildContext&);
// Block rearrangements and repeats as strided copies (depth_to_space.cpp, space_to_depth.cpp,
// tile.cpp).
std::string query_depth_to_space(const RegionView&, const NodeView&);
Step build_depth_to_space(BuildContext&);
std::string query_space_to_depth(const RegionView&, const NodeView&);
Step build_space_to_depth(BuildContext&);
std::string query_tile(const RegionView&, const NodeView&);
Step build_tile(BuildContext&);
// InstanceNormalization and GroupNormalization (group_norm.cpp).
std::string query_group_norm(const RegionView&, const NodeView&);
Step build_group_norm(BuildContext&);
std::string query_global_max_pool(const RegionView&, const NodeView&);
Step build_global_max_pool(BuildContext&);
// LSTM and GRU on the packed SGEMM (recurrent.cpp).
std::string query_recurrent(const RegionView&, const NodeView&);
Step build_recurrent(BuildContext&);
// ScatterND with constant indices, reduction none (scatter_nd.cpp).
std::string query_scatter_nd(const RegionView&, const NodeView&);
Step build_scatter_nd(BuildContext&);
// Index-producing ops: ArgMax and ArgMin (arg_max.cpp; float32/int32/int64 in), TopK (top_k.cpp);
// int64 outputs.
std::string query_arg_max(const RegionView&, const NodeView&);
Step build_arg_max(BuildContext&);
std::string query_top_k(const RegionView&, const NodeView&);
Step build_top_k(BuildContext&);

}  // namespace tessera::cpu
