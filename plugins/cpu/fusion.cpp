// Fusion patterns (fusion.hpp): Conv+BatchNormalization, then +Add, +Relu/Clip, +MaxPool or
// +depthwise Conv; MatMul + bias/residual Add; Gemm/MatMul/Add/BN/pools + Relu/Clip; a pointwise op
// (SiLU and GELU patterns, QDQ pairs) after any node writing its own buffer; squeeze-excitation
// blocks; LayerNorm2d. Each applies only where the intermediate value has no other reader.
#include "fusion.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace tessera::cpu {

namespace {

// Whether node input i is a float32 scalar constant within 1e-4 of `want`.
bool is_scalar(const NodeView& node, int32_t i, float want) {
  const tsr_tensor* t = node.input(i);
  const float* v = constant_f32(t);
  return v != nullptr && numel(*t) == 1 && std::fabs(v[0] - want) <= 1e-4f;
}

}  // namespace

SqueezeExcite Fusion::squeeze_excite_block() const {
  SqueezeExcite block = se;
  block.fc1 = se_fc1 ? &*se_fc1 : nullptr;
  block.fc2 = se_fc2 ? &*se_fc2 : nullptr;
  return block;
}

FusionPlanner::FusionPlanner(const RegionView& region)
    : region_(region),
      readers_(static_cast<size_t>(region.num_values())),
      producer_(static_cast<size_t>(region.num_values()), -1),
      is_output_(static_cast<size_t>(region.num_values()), false),
      absorbed_(static_cast<size_t>(region.num_nodes()), false) {
  for (int32_t i = 0; i < region.num_outputs(); ++i) {
    is_output_[static_cast<size_t>(region.output_index(i))] = true;
  }
  for (int32_t n = 0; n < region.num_nodes(); ++n) {
    const NodeView node = region.node(n);
    for (int32_t i = 0; i < node.num_inputs(); ++i) {
      if (node.input_index(i) >= 0) readers_[static_cast<size_t>(node.input_index(i))].push_back(n);
    }
    for (int32_t i = 0; i < node.num_outputs(); ++i) {
      if (node.output_index(i) >= 0) producer_[static_cast<size_t>(node.output_index(i))] = n;
    }
  }
}

Fusion FusionPlanner::plan(int32_t n, const OpEntry& entry) {
  Fusion f(region_.node(n));
  fold_conv_batch_norm(f);
  fuse_column_bias(f);
  fuse_residual(f);
  fuse_fake_quant(f);
  fuse_silu(f);
  fuse_channel_layer_norm(f);
  fuse_squeeze_excite(f);
  fuse_activation(f);
  fuse_max_pool(f);
  fuse_depthwise(f);
  fuse_pointwise(f, entry);
  return f;
}

void FusionPlanner::take(Fusion& f, int32_t r, const char* how, bool keep_last,
                         const NodeView* who) {
  const NodeView node = region_.node(r);
  absorbed_[static_cast<size_t>(r)] = true;
  f.absorbed.push_back(r);
  f.output = node.output_index(0);
  if (!keep_last) f.last = r;
  f.notes.push_back(std::string((who != nullptr ? *who : f.node).name()) + ": " + how + " " +
                    node.describe());
}

// ---- The patterns, in the order plan() tries them.

// A BatchNormalization that alone reads a Conv's output folds into its weights.
void FusionPlanner::fold_conv_batch_norm(Fusion& f) {
  if (f.node.op_type() != "Conv") return;
  const int32_t r = bn_after(f.node, f.output, f.node.index());
  if (r < 0) return;
  f.bn.emplace(region_.node(r));
  take(f, r, "folded");
}

// nn.Linear on activations of rank 3 or more exports as MatMul then an Add of the constant
// bias, in transformer blocks often followed by the residual Add: both run in the GEMM's
// epilogue, and a GELU after them fuses below as a post op (vit_small: 85 such Adds were
// separate passes over the MatMul outputs).
void FusionPlanner::fuse_column_bias(Fusion& f) {
  if (f.node.op_type() != "MatMul") return;
  const int32_t r = sole_reader(f.output, f.last);
  if (r >= 0 && query_binary(region_, region_.node(r)).empty()) {
    f.col_bias = matmul_column_bias(region_.node(r), f.output);
  }
  if (f.col_bias != nullptr) take(f, r, "fused");
}

// A residual Add after the conv (resnet blocks, mobilenet_v2's projections) or the MatMul
// (transformer blocks) runs in its epilogue; a Relu after the Add fuses below as usual.
void FusionPlanner::fuse_residual(Fusion& f) {
  if (f.node.op_type() != "Conv" && f.node.op_type() != "MatMul") return;
  const int32_t r = sole_reader(f.output, f.last);
  if (r >= 0) f.residual = residual_input(region_.node(r), f.output, f.node.index());
  if (f.residual >= 0) take(f, r, "fused");
}

// A QuantizeLinear -> DequantizeLinear pair that had nothing to fuse into (it reads a region
// input, a view, or a value with other readers): one fake-quantization pass over floats
// instead of a pass to 8 bits and one back (a QDQ model's input: 187 us of mobilenet_v2's 6.8
// ms at 2 threads went to the scalar QuantizeLinear).
void FusionPlanner::fuse_fake_quant(Fusion& f) {
  if (f.node.op_type() != "QuantizeLinear") return;
  const int32_t d = sole_reader(f.output, f.node.index());
  UnaryFn fn;
  if (d >= 0 && query_quantize(region_, region_.node(d)).empty() &&
      quant_pair_fn(f.node, region_.node(d), &fn)) {
    f.fake_quant = fn;
    take(f, d, "fake quantization with");
  }
}

// A Sigmoid whose reader multiplies it by the Sigmoid's input computes SiLU in one pass.
void FusionPlanner::fuse_silu(Fusion& f) {
  if (f.node.op_type() != "Sigmoid") return;
  const int32_t m = silu_mul(f.node, f.node.input_index(0), f.node.index());
  if (m < 0) return;
  f.silu = true;
  take(f, m, "SiLU with");
}

// timm's LayerNorm2d as exported (ConvNeXt, EdgeNeXt): Transpose to NHWC, LayerNormalization
// over the channels, and usually the Transpose back to NCHW, as one pass over the NCHW
// tensor: neither transposed copy is made.
void FusionPlanner::fuse_channel_layer_norm(Fusion& f) {
  if (f.node.op_type() != "Transpose") return;
  const int32_t r = only_reader(f.output, f.node.index());
  if (r < 0 || !channel_layer_norm_fusable(region_, f.node, region_.node(r))) return;
  f.channel_ln.emplace(region_.node(r));
  take(f, r, "fused");
  const int32_t t = only_reader(f.output, r);
  if (t >= 0 && is_transpose(region_.node(t), {0, 3, 1, 2})) take(f, t, "fused");
}

// Squeeze-excitation (squeeze_excite.cpp): the pool, its two 1x1 convs with the activation
// between them, the gate and the Mul back onto the pooled tensor run as one step.
void FusionPlanner::fuse_squeeze_excite(Fusion& f) {
  const std::vector<int32_t> chain = squeeze_excite_chain(f.node, f.node.index(), &f.se);
  if (chain.empty()) return;
  f.se_fc1.emplace(region_.node(chain.front()));
  f.se_fc2.emplace(region_.node(chain[chain.size() - 3]));
  for (const int32_t c : chain) take(f, c, "squeeze-excitation with");
}

// A Relu/Clip after an op whose step clamps its result with ctx.act.
void FusionPlanner::fuse_activation(Fusion& f) {
  const std::string op(f.node.op_type());
  const bool takes_clamp =
      !f.squeeze_excite() &&
      (op == "Conv" || op == "Gemm" || op == "MatMul" || op == "BatchNormalization" ||
       op == "GlobalAveragePool" || query_binary(region_, f.node).empty() ||
       query_unary(region_, f.node).empty() || op.rfind("Reduce", 0) == 0);
  if (!takes_clamp) return;
  const int32_t r = activation_after(f.output, f.last, &f.act);
  if (r >= 0) take(f, r, "fused");
}

// A 3x3 stride-2 MaxPool after a stem conv (and its Relu) pools the conv's rows while they
// are in cache: the full-size conv output is never stored.
void FusionPlanner::fuse_max_pool(Fusion& f) {
  if (f.node.op_type() != "Conv" || f.residual >= 0) return;
  const int32_t r = only_reader(f.output, f.node.index());
  if (r >= 0 && region_.node(r).op_type() == "MaxPool" &&
      query_pool(region_, region_.node(r)).empty() && conv_pool_fusable(f.node, region_.node(r))) {
    f.pool.emplace(region_.node(r));
    take(f, r, "fused", /*keep_last=*/true);
  }
}

// A depthwise conv after a 1x1 conv (mobilenet_v2's expansions) computes its rows from the
// 1x1 conv's rows while they are in cache: the expanded tensor is never stored.
void FusionPlanner::fuse_depthwise(Fusion& f) {
  if (f.node.op_type() != "Conv" || f.residual >= 0 || f.pool) return;
  const int32_t r = only_reader(f.output, f.node.index());
  if (r < 0 || region_.node(r).op_type() != "Conv" ||
      !query_conv(region_, region_.node(r)).empty() ||
      !conv_depthwise_fusable(f.node, region_.node(r))) {
    return;
  }
  f.dw.emplace(region_.node(r));
  take(f, r, "fused", /*keep_last=*/true);
  const int32_t b = bn_after(*f.dw, f.output, r);
  if (b >= 0) {
    f.dw_bn.emplace(region_.node(b));
    take(f, b, "folded", /*keep_last=*/true, &*f.dw);
  }
  const int32_t a = activation_after(f.output, b >= 0 ? b : r, &f.dw_act);
  if (a >= 0) take(f, a, "fused", /*keep_last=*/true, &*f.dw);
}

// A pointwise op after the chain (HardSwish, SiLU, Sigmoid, GELU, ...) runs in place over
// the chain's output right after its step. Not after ops whose output aliases another
// value (reshape-likes, Concat's in-place inputs) or after a pointwise op itself.
void FusionPlanner::fuse_pointwise(Fusion& f, const OpEntry& entry) {
  const bool writes_own_buffer = entry.build != build_view && entry.build != build_cast &&
                                 entry.build != build_concat && entry.build != build_unary;
  if (!writes_own_buffer || f.silu) return;
  std::vector<int32_t> fused;
  if (pointwise_after(f.output, std::max(f.last, f.node.index()), &f.post, &fused) < 0) return;
  for (const int32_t p : fused) take(f, p, "fused", /*keep_last=*/true);
}

// ---- Readers and producers.

// The single later reader of `value`, when nothing else (other nodes, core) reads it.
int32_t FusionPlanner::sole_reader(int32_t value, int32_t after) const {
  const std::vector<int32_t>& r = readers_[static_cast<size_t>(value)];
  return is_output_[static_cast<size_t>(value)] || r.size() != 1 || r[0] <= after ? -1 : r[0];
}

// The same, when it reads `value` as its first input (an op applied to it).
int32_t FusionPlanner::only_reader(int32_t value, int32_t after) const {
  const int32_t r = sole_reader(value, after);
  return r >= 0 && region_.node(r).input_index(0) == value ? r : -1;
}

// The sole later reader of `value` when it is `op` reading `value` as one of its inputs, or -1.
int32_t FusionPlanner::next_op(int32_t value, int32_t after, const char* op) const {
  const int32_t r = sole_reader(value, after);
  return r >= 0 && region_.node(r).op_type() == op ? r : -1;
}

// The other input of `add`, a reader of `value`, when the Add can run in the epilogue of
// `value`'s producer `n`: a same-shape float32 Add whose other input is ready before n runs.
// -1 otherwise.
int32_t FusionPlanner::residual_input(const NodeView& add, int32_t value, int32_t n) const {
  if (!same_shape_add(add)) return -1;
  const int32_t a = add.input_index(0), b = add.input_index(1);
  const int32_t other = a == value ? b : a;
  if (other < 0 || other == value) return -1;
  return producer_[static_cast<size_t>(other)] < n ? other : -1;
}

// ---- Single nodes after a value.

// The BatchNormalization that alone reads conv's output `value` and can fold into it, or -1.
int32_t FusionPlanner::bn_after(const NodeView& conv, int32_t value, int32_t after) const {
  const int32_t r = only_reader(value, after);
  if (r < 0) return -1;
  const NodeView bn = region_.node(r);
  const bool folds = bn.op_type() == "BatchNormalization" &&
                     query_batch_norm(region_, bn).empty() && bn.input(1) != nullptr &&
                     numel(*bn.input(1)) == conv.output(0)->dims[1];
  return folds ? r : -1;
}

// The Relu/Clip that alone reads `value` and can run in its producer's epilogue, or -1.
int32_t FusionPlanner::activation_after(int32_t value, int32_t after, Activation* act) const {
  const int32_t r = only_reader(value, after);
  if (r < 0 || !query_unary(region_, region_.node(r)).empty()) return -1;
  return activation_of(region_, region_.node(r), act) ? r : -1;
}

// The Mul that alone reads `a` and multiplies it by `b` (in either order), or -1.
int32_t FusionPlanner::mul_with(int32_t a, int32_t b, int32_t after) const {
  const int32_t m = sole_reader(a, after);
  if (m < 0) return -1;
  const NodeView mul = region_.node(m);
  const bool pair = mul.op_type() == "Mul" && mul.num_inputs() == 2 &&
                    ((mul.input_index(0) == a && mul.input_index(1) == b) ||
                     (mul.input_index(0) == b && mul.input_index(1) == a));
  return pair && query_binary(region_, mul).empty() ? m : -1;
}

// The Mul that makes `sigmoid` (reading `x`) a SiLU: it alone reads the Sigmoid's output and
// multiplies it by x. -1 otherwise.
int32_t FusionPlanner::silu_mul(const NodeView& sigmoid, int32_t x, int32_t after) const {
  if (sigmoid.op_type() != "Sigmoid" || sigmoid.input_index(0) != x) return -1;
  return mul_with(sigmoid.output_index(0), x, after);
}

// ---- Chains that end in a pointwise op.

// GELU as PyTorch exports it before opset 20, reading x from `div` (one of x's two readers):
// Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5). Returns the nodes after x, or an empty list.
std::vector<int32_t> FusionPlanner::gelu_erf_chain(const NodeView& div, int32_t x,
                                                   int32_t after) const {
  std::vector<int32_t> none;
  if (div.op_type() != "Div" || div.input_index(0) != x || !is_scalar(div, 1, 1.41421356f))
    return none;
  const int32_t e = next_op(div.output_index(0), after, "Erf");
  if (e < 0) return none;
  const int32_t a = next_op(region_.node(e).output_index(0), after, "Add");
  if (a < 0) return none;
  const NodeView add = region_.node(a);
  const int32_t erf_out = region_.node(e).output_index(0);
  const int32_t one = add.input_index(0) == erf_out ? 1 : 0;
  if (add.input_index(1 - one) != erf_out || !is_scalar(add, one, 1.0f)) return none;
  const int32_t m = next_op(add.output_index(0), after, "Mul");
  if (m < 0) return none;
  const NodeView mul = region_.node(m);
  const bool pair = (mul.input_index(0) == x && mul.input_index(1) == add.output_index(0)) ||
                    (mul.input_index(1) == x && mul.input_index(0) == add.output_index(0));
  if (!pair) return none;
  const int32_t h = next_op(mul.output_index(0), after, "Mul");
  if (h < 0) return none;
  const NodeView half = region_.node(h);
  const int32_t k = half.input_index(0) == mul.output_index(0) ? 1 : 0;
  if (half.input_index(1 - k) != mul.output_index(0) || !is_scalar(half, k, 0.5f)) return none;
  for (int32_t n : {e, a, m, h}) {
    if (!query_unary(region_, region_.node(n)).empty() &&
        !query_binary(region_, region_.node(n)).empty()) {
      return none;
    }
  }
  return std::vector<int32_t>{e, a, m, h};
}

// A pointwise op that alone reads `value` (or the Sigmoid-Mul pair of a SiLU, or PyTorch's
// Erf form of GELU, whose first nodes both read it) and can run in place right after its
// producer: fills `post` and the nodes it absorbs, returns the value the chain ends in, or -1.
int32_t FusionPlanner::pointwise_after(int32_t value, int32_t after, UnaryFn* post,
                                       std::vector<int32_t>* nodes) const {
  if (is_output_[static_cast<size_t>(value)]) return -1;
  const std::vector<int32_t>& r = readers_[static_cast<size_t>(value)];
  if (r.size() == 1 && r[0] > after) {
    const NodeView u = region_.node(r[0]);
    // A QDQ model's activation quantization: QuantizeLinear read only by the matching
    // DequantizeLinear is a float -> float rounding and clamp.
    if (u.op_type() == "QuantizeLinear" && u.input_index(0) == value) {
      return quant_pair_after(u, r[0], post, nodes);
    }
    if (u.input_index(0) != value || !query_unary(region_, u).empty()) return -1;
    if (!unary_fn_of(region_, u, post) || post->is_clamp_only()) return -1;
    nodes->push_back(r[0]);
    return u.output_index(0);
  }
  if (r.size() == 2 && r[0] > after && r[1] > after) {
    return two_reader_pointwise(value, after, post, nodes);
  }
  return -1;
}

// The DequantizeLinear that alone reads QuantizeLinear `q` (node `at`) and makes the pair a
// fake quantization: fills `post` and the two nodes, returns the pair's output, or -1.
int32_t FusionPlanner::quant_pair_after(const NodeView& q, int32_t at, UnaryFn* post,
                                        std::vector<int32_t>* nodes) const {
  const int32_t d = sole_reader(q.output_index(0), at);
  if (d < 0 || !query_quantize(region_, q).empty() ||
      !query_quantize(region_, region_.node(d)).empty() ||
      !quant_pair_fn(q, region_.node(d), post)) {
    return -1;
  }
  nodes->insert(nodes->end(), {at, d});
  return region_.node(d).output_index(0);
}

// SiLU (Sigmoid-Mul) or GELU (Erf form) over `value`, whose two readers are the pattern's first
// nodes: fills `post` and the nodes, returns the value the pattern ends in, or -1.
int32_t FusionPlanner::two_reader_pointwise(int32_t value, int32_t after, UnaryFn* post,
                                            std::vector<int32_t>* nodes) const {
  const std::vector<int32_t>& r = readers_[static_cast<size_t>(value)];
  for (int32_t s : r) {
    const int32_t m = silu_mul(region_.node(s), value, after);
    if (m < 0 || (m != r[0] && m != r[1])) continue;
    *post = UnaryFn{};
    post->op = UnaryOp::kSilu;
    nodes->insert(nodes->end(), {s, m});
    return region_.node(m).output_index(0);
  }
  for (int32_t d : r) {
    const std::vector<int32_t> chain = gelu_erf_chain(region_.node(d), value, after);
    // The chain's Mul must be x's other reader.
    if (chain.empty() || (chain[2] != r[0] && chain[2] != r[1])) continue;
    *post = UnaryFn{};
    post->op = UnaryOp::kGelu;
    nodes->push_back(d);
    nodes->insert(nodes->end(), chain.begin(), chain.end());
    return region_.node(chain.back()).output_index(0);
  }
  return -1;
}

// A squeeze-excitation block starting at `pool` (node n): the pool's sole reader a 1x1 conv
// (squeeze_excite_fc), a clamp or a fusable pointwise op after it, a second 1x1 conv back to
// the pool's channels, a Sigmoid / HardSigmoid gate, and the Mul of the gate with the pool's
// own input. Returns the block's nodes after the pool (the first conv first, the second conv,
// the gate and the Mul last) and fills se's activations, or an empty list.
std::vector<int32_t> FusionPlanner::squeeze_excite_chain(const NodeView& pool, int32_t n,
                                                         SqueezeExcite* se) const {
  const std::vector<int32_t> none;
  const std::string_view op = pool.op_type();
  const bool pools =
      (op == "GlobalAveragePool" && query_global_average_pool(region_, pool).empty()) ||
      (op == "ReduceMean" && query_reduce(region_, pool).empty());
  const tsr_tensor* x = pool.input(0);
  const tsr_tensor* s0 = pool.output(0);
  if (!pools || x->rank != 4 || s0->rank != 4 || s0->dims[0] != x->dims[0] ||
      s0->dims[1] != x->dims[1] || s0->dims[2] != 1 || s0->dims[3] != 1) {
    return none;
  }
  const int32_t c1 = only_reader(pool.output_index(0), n);
  if (c1 < 0 || !squeeze_excite_fc(region_, region_.node(c1), x->dims[1])) return none;
  std::vector<int32_t> chain = {c1};
  int32_t at = c1;
  UnaryFn act1;
  const int32_t value = se_activation(region_.node(c1).output_index(0), &at, &act1, &chain);
  const int32_t c2 = only_reader(value, at);
  if (c2 < 0 ||
      !squeeze_excite_fc(region_, region_.node(c2), region_.node(c1).output(0)->dims[1]) ||
      region_.node(c2).output(0)->dims[1] != x->dims[1]) {
    return none;
  }
  const int32_t g = only_reader(region_.node(c2).output_index(0), c2);
  UnaryFn gate;
  if (g < 0 ||
      (region_.node(g).op_type() != "Sigmoid" && region_.node(g).op_type() != "HardSigmoid") ||
      !query_unary(region_, region_.node(g)).empty() ||
      !unary_fn_of(region_, region_.node(g), &gate)) {
    return none;
  }
  const int32_t m = mul_with(region_.node(g).output_index(0), pool.input_index(0), g);
  if (m < 0 || dims(*region_.node(m).output(0)) != dims(*x)) return none;
  se->act1 = act1;
  se->gate = gate;
  chain.insert(chain.end(), {c2, g, m});
  return chain;
}

// The activation between a squeeze-excitation block's convs, after `value` (the first conv's
// output, node *at): a clamp or a fusable pointwise op, into act1, its nodes appended to chain
// and *at moved to the latest. Returns the value the second conv must read.
int32_t FusionPlanner::se_activation(int32_t value, int32_t* at, UnaryFn* act1,
                                     std::vector<int32_t>* chain) const {
  Activation clamp;
  std::vector<int32_t> pointwise;
  if (const int32_t a = activation_after(value, *at, &clamp); a >= 0) {
    act1->lo = clamp.lo;
    act1->hi = clamp.hi;
    chain->push_back(a);
    *at = a;
    return region_.node(a).output_index(0);
  }
  if (const int32_t end = pointwise_after(value, *at, act1, &pointwise); end >= 0) {
    chain->insert(chain->end(), pointwise.begin(), pointwise.end());
    *at = *std::max_element(pointwise.begin(), pointwise.end());
    return end;
  }
  return value;
}

// ---- Pricing (query_subgraph).

void price_fusions(const RegionView& region, std::vector<plugin::Support>& answers) {
  FusionPlanner planner(region);
  auto supported = [&](int32_t n) { return answers[static_cast<size_t>(n)].supported; };
  for (int32_t n = 0; n < region.num_nodes(); ++n) {
    if (planner.absorbed(n) || !supported(n)) continue;
    const OpEntry* entry = find_op(region.node(n).op_type());
    if (entry == nullptr) continue;
    const Fusion f = planner.plan(n, *entry);
    if (!std::all_of(f.absorbed.begin(), f.absorbed.end(), supported)) continue;
    std::vector<int32_t> step = f.absorbed;
    step.push_back(n);
    for (const int32_t a : f.absorbed) {
      // The latest node of the step that writes one of a's inputs, else the kept node.
      const NodeView node = region.node(a);
      int32_t into = -1;
      for (int32_t i = 0; i < node.num_inputs(); ++i) {
        const int32_t v = node.input_index(i);
        const int32_t p = v >= 0 ? planner.producer(v) : -1;
        if (p >= 0 && p != a && std::count(step.begin(), step.end(), p) > 0) {
          into = std::max(into, p);
        }
      }
      if (into < 0) into = n;
      plugin::Support& fused = answers[static_cast<size_t>(a)];
      fused.fused_into = into;
      fused.cost_us = 0.0;
      fused.reason = "runs in the kernel of " + region.node(into).describe();
    }
  }
}

}  // namespace tessera::cpu
