// The cpu plugin's fusions, in one place: which nodes a kept node's step computes besides itself
// (a folded BatchNormalization, bias and residual Adds, a Relu/Clip, a MaxPool or depthwise conv
// computed from the conv's rows, a pointwise op, SiLU and GELU patterns, squeeze-excitation,
// exported LayerNorm2d, QDQ pairs). Compile (region.cpp) builds one step per Fusion, and
// query_subgraph (plugin.cpp) prices the nodes the same plan absorbs at 0 us, so the two cannot
// disagree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ops/op.hpp"

namespace tessera::cpu {

// What the step of one kept node computes: the node, and the nodes it absorbs with the role each
// plays in the step (the BuildContext fields of the same names).
struct Fusion {
  explicit Fusion(const NodeView& kept) : node(kept), output(kept.output_index(0)) {}

  NodeView node;
  int32_t output;  // value the chain ends in
  // The latest node the chain's epilogue follows; a node fused after it must come later.
  int32_t last = node.index();
  std::vector<int32_t> absorbed;   // in the order they were taken
  std::vector<std::string> notes;  // one line per absorbed node, for CpuRegion::notes()

  std::optional<NodeView> bn;          // Conv: folded BatchNormalization
  const float* col_bias = nullptr;     // MatMul: constant bias Add per output column
  int32_t residual = -1;               // Conv, MatMul: other input of a residual Add
  std::optional<UnaryFn> fake_quant;   // QuantizeLinear: the pair with its DequantizeLinear
  bool silu = false;                   // Sigmoid: multiplied by its own input
  std::optional<NodeView> channel_ln;  // Transpose: exported LayerNorm2d
  // A pool that starts a squeeze-excitation block: its two 1x1 convs; se holds the activations.
  std::optional<NodeView> se_fc1, se_fc2;
  SqueezeExcite se;
  Activation act;                     // Relu/Clip in the epilogue
  std::optional<NodeView> pool;       // Conv: 3x3 stride-2 MaxPool on its rows
  std::optional<NodeView> dw, dw_bn;  // Conv: depthwise conv on its rows, and its folded BN
  Activation dw_act;                  // the depthwise conv's Relu/Clip
  UnaryFn post;                       // pointwise op run in place after the chain

  bool squeeze_excite() const { return se_fc1.has_value(); }
  // se with its convs pointing into this Fusion.
  SqueezeExcite squeeze_excite_block() const;
};

// Plans a region's fusions node by node, in node order. A node absorbed by an earlier kept node
// gets no step of its own.
class FusionPlanner {
 public:
  explicit FusionPlanner(const RegionView& region);

  bool absorbed(int32_t n) const { return absorbed_[static_cast<size_t>(n)]; }
  // The node writing `value`, -1 for a region input or constant.
  int32_t producer(int32_t value) const { return producer_[static_cast<size_t>(value)]; }
  // The step of node n, which is not absorbed and which `entry` (its op) supports; marks the
  // nodes it absorbs.
  Fusion plan(int32_t n, const OpEntry& entry);

 private:
  // The patterns, each adding to `f` when it applies (in this order).
  void fold_conv_batch_norm(Fusion& f);
  void fuse_column_bias(Fusion& f);
  void fuse_residual(Fusion& f);
  void fuse_fake_quant(Fusion& f);
  void fuse_silu(Fusion& f);
  void fuse_channel_layer_norm(Fusion& f);
  void fuse_squeeze_excite(Fusion& f);
  void fuse_activation(Fusion& f);
  void fuse_max_pool(Fusion& f);
  void fuse_depthwise(Fusion& f);
  void fuse_pointwise(Fusion& f, const OpEntry& entry);

  // Takes node r into f's step: the chain now ends in r's output. `last` moves to r unless
  // `keep_last`; the note names `who`'s node (the kept node unless given).
  void take(Fusion& f, int32_t r, const char* how, bool keep_last = false,
            const NodeView* who = nullptr);

  // Readers and producers of values.
  int32_t sole_reader(int32_t value, int32_t after) const;
  int32_t only_reader(int32_t value, int32_t after) const;
  int32_t next_op(int32_t value, int32_t after, const char* op) const;
  int32_t residual_input(const NodeView& add, int32_t value, int32_t n) const;
  // Single nodes that fold or fuse after a value.
  int32_t bn_after(const NodeView& conv, int32_t value, int32_t after) const;
  int32_t activation_after(int32_t value, int32_t after, Activation* act) const;
  int32_t mul_with(int32_t a, int32_t b, int32_t after) const;
  int32_t silu_mul(const NodeView& sigmoid, int32_t x, int32_t after) const;
  // Chains that end in a pointwise op.
  std::vector<int32_t> gelu_erf_chain(const NodeView& div, int32_t x, int32_t after) const;
  int32_t pointwise_after(int32_t value, int32_t after, UnaryFn* post,
                          std::vector<int32_t>* nodes) const;
  int32_t quant_pair_after(const NodeView& q, int32_t after, UnaryFn* post,
                           std::vector<int32_t>* nodes) const;
  int32_t two_reader_pointwise(int32_t value, int32_t after, UnaryFn* post,
                               std::vector<int32_t>* nodes) const;
  std::vector<int32_t> squeeze_excite_chain(const NodeView& pool, int32_t n,
                                            SqueezeExcite* se) const;
  int32_t se_activation(int32_t value, int32_t* at, UnaryFn* act1,
                        std::vector<int32_t>* chain) const;

  const RegionView& region_;
  std::vector<std::vector<int32_t>> readers_;  // per value: the nodes reading it
  std::vector<int32_t> producer_;              // per value: the node writing it, -1 = none
  std::vector<bool> is_output_;                // per value: a region output
  std::vector<bool> absorbed_;                 // per node
};

// query_subgraph's answers with the nodes compile would absorb priced at 0 us, fused_into the
// node of their step that produces their input (the step's kept node when none does). A step is
// priced so only when every node of it is supported; an unsupported node plans nothing.
void price_fusions(const RegionView& region, std::vector<plugin::Support>& answers);

}  // namespace tessera::cpu
