// Int8 units: DequantizeLinear -> Conv/MatMul/Gemm/Add/Mul [-> Relu/Clip] -> QuantizeLinear as one
// TesseraQLinearConv / TesseraQLinearMatMul / TesseraQLinearAdd / TesseraQLinearMul node
// (core/ops/util/quantized_unit.hpp), so a plugin runs the unit on int8 data with int32 sums
// instead of dequantizing into float and back. It runs before constants fold (folding would turn
// the int8 weights into float ones); a unit whose parts do not all fit (a non-constant scale, a
// bias that is not int32 at x_scale * w_scale, a weight quantized along another axis) stays as it
// was, in float. The reference plugin runs the unit when no other plugin takes it, with the same
// result as any plugin that does. A MaxPool between a DequantizeLinear and a QuantizeLinear of
// the same parameters becomes a MaxPool on the int8 values.
#include "passes/quantized_units.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "util/quantized_unit.hpp"

namespace tessera {
namespace {

using ops::kQBias;
using ops::kQUnitInputs;

// A DequantizeLinear's or QuantizeLinear's operands: the quantized (or float) value and the
// constant scale and zero point (nullptr when the zero point is omitted).
struct QuantNode {
  const Node* node = nullptr;
  ValueId data = kNoValue, scale = kNoValue, zero = kNoValue;
  const Tensor* scale_t = nullptr;
  const Tensor* zero_t = nullptr;
};

class UnitFinder {
 public:
  explicit UnitFinder(Graph& g) : g_(g), producer_(g.producers()), readers_(g.values.size(), 0) {
    for (const Node& n : g.nodes) {
      for (ValueId in : n.inputs) {
        if (in != kNoValue) ++readers_[static_cast<size_t>(in)];
      }
      for (const auto& [name, sub] : n.subgraphs) count_outer_reads(*sub);
    }
    for (ValueId out : g.outputs) ++readers_[static_cast<size_t>(out)];
  }

  // Fails naming the node when a DequantizeLinear or QuantizeLinear has a bad constant scale, or
  // a DequantizeLinear's zero point is not of its input's known type.
  void check_scales() const {
    for (const Node& n : g_.nodes) {
      if (n.op_type != "DequantizeLinear" && n.op_type != "QuantizeLinear") continue;
      const Tensor* s = n.inputs.size() > 1 ? constant(n.inputs[1]) : nullptr;
      if (s != nullptr && s->dtype() == DType::kFloat32) {
        const std::string why = ops::bad_scale(*s);
        if (!why.empty()) throw Error(g_.describe(n) + ": " + why);
      }
      const Tensor* z = n.inputs.size() > 2 ? constant(n.inputs[2]) : nullptr;
      const DType x = n.inputs.empty() || n.inputs[0] == kNoValue ? DType::kUndefined
                                                                  : g_.value(n.inputs[0]).dtype;
      if (n.op_type == "DequantizeLinear" && z != nullptr && x != DType::kUndefined &&
          z->dtype() != x) {
        throw Error(g_.describe(n) + ": the zero point is " + dtype_name(z->dtype()) +
                    " but the quantized input is " + dtype_name(x) + "; they must match");
      }
    }
  }

  int run() {
    int made = 0;
    std::vector<Node> out;
    std::set<const Node*> replaced;
    std::map<const Node*, Node> unit_at;  // the unit replaces its QuantizeLinear here
    for (const Node& n : g_.nodes) {
      std::optional<std::pair<const Node*, Node>> unit = match_unit(n);
      if (!unit) continue;
      replaced.insert(&n);
      const Node* act = activation_between(n, *unit->first);
      if (act != nullptr) replaced.insert(act);
      replaced.insert(unit->first);
      unit_at.emplace(unit->first, std::move(unit->second));
      ++made;
    }
    if (made == 0) return 0;
    for (Node& n : g_.nodes) {
      auto it = unit_at.find(&n);
      if (it != unit_at.end()) {
        out.push_back(std::move(it->second));
      } else if (replaced.count(&n) == 0) {
        out.push_back(std::move(n));
      }
    }
    g_.nodes = std::move(out);
    g_.remove_dead_nodes();
    mark_orphans();
    return made;
  }

 private:
  // The values of the nodes the units replaced stay in the value list without a producer, and
  // shape inference never reaches them: they are float32 (dequantized data and what the float
  // ops made of it), which a package records like any other value.
  void mark_orphans() {
    std::vector<bool> produced(g_.values.size(), false);
    for (const Node& n : g_.nodes) {
      for (ValueId o : n.outputs) {
        if (o != kNoValue) produced[static_cast<size_t>(o)] = true;
      }
    }
    for (size_t v = 0; v < producer_.size(); ++v) {
      Value& value = g_.values[v];
      if (producer_[v] >= 0 && !produced[v] && value.dtype == DType::kUndefined) {
        value.dtype = DType::kFloat32;
      }
    }
  }

  // Values a subgraph reads by name from the outer graph count as read.
  void count_outer_reads(const Graph& sub) {
    for (const Node& n : sub.nodes) {
      for (ValueId in : n.inputs) {
        if (in == kNoValue) continue;
        const ValueId outer = g_.find_value(sub.value(in).name);
        if (outer != kNoValue) ++readers_[static_cast<size_t>(outer)];
      }
      for (const auto& [name, s] : n.subgraphs) count_outer_reads(*s);
    }
  }

  const Tensor* constant(ValueId v) const {
    return v == kNoValue ? nullptr : g_.value(v).constant.get();
  }
  const Node* producer(ValueId v) const {
    const int p = v == kNoValue ? -1 : producer_[static_cast<size_t>(v)];
    return p < 0 ? nullptr : &g_.nodes[static_cast<size_t>(p)];
  }
  int readers(ValueId v) const { return readers_[static_cast<size_t>(v)]; }
  // The one node reading v, when v has exactly one reader and it is a node.
  const Node* only_reader(ValueId v) const {
    if (readers(v) != 1) return nullptr;
    for (const Node& n : g_.nodes) {
      for (ValueId in : n.inputs) {
        if (in == v) return &n;
      }
    }
    return nullptr;
  }

  // `node` as a DequantizeLinear/QuantizeLinear with a constant float scale and a constant zero
  // point of int8/uint8 (or int32 for a bias), or nullopt.
  std::optional<QuantNode> quant_node(const Node* node, const char* op) const {
    if (node == nullptr || node->op_type != op || node->inputs.size() < 2) return std::nullopt;
    if (node->attrs.get_int("block_size", 0) != 0) return std::nullopt;
    QuantNode q;
    q.node = node;
    q.data = node->inputs[0];
    q.scale = node->inputs[1];
    q.zero = node->inputs.size() > 2 ? node->inputs[2] : kNoValue;
    q.scale_t = constant(q.scale);
    q.zero_t = constant(q.zero);
    if (q.scale_t == nullptr || q.scale_t->dtype() != DType::kFloat32) return std::nullopt;
    if (q.zero != kNoValue && q.zero_t == nullptr) return std::nullopt;
    if (q.zero_t != nullptr && q.zero_t->numel() != q.scale_t->numel()) {
      return std::nullopt;
    }
    return q;
  }

  // An activation (int8/uint8) DequantizeLinear with one scale and zero point.
  std::optional<QuantNode> activation_dq(ValueId v) const {
    std::optional<QuantNode> q = quant_node(producer(v), "DequantizeLinear");
    if (!q || constant(q->data) != nullptr || q->zero_t == nullptr) return std::nullopt;
    if (q->scale_t->numel() != 1 || q->zero_t->dtype() == DType::kInt32) return std::nullopt;
    return q;
  }

  // A constant int8 weight's DequantizeLinear with zero points of 0 (symmetric, as ONNX
  // Runtime's quantizer and most tools write weights), per tensor or along `channel_axis` of a
  // weight of rank `rank`. Other weights stay in float: units are defined for the form every int8
  // plugin kernel takes, so a target list without the reference plugin loses nothing.
  std::optional<QuantNode> weight_dq(ValueId v, size_t rank, int64_t channel_axis) const {
    std::optional<QuantNode> q = quant_node(producer(v), "DequantizeLinear");
    if (!q) return std::nullopt;
    const Tensor* w = constant(q->data);
    if (w == nullptr || w->shape().size() != rank || w->dtype() != DType::kInt8) {
      return std::nullopt;
    }
    for (int64_t i = 0; q->zero_t != nullptr && i < q->zero_t->numel(); ++i) {
      if (ops::quant_element(*q->zero_t, i) != 0) return std::nullopt;
    }
    if (q->scale_t->numel() != 1) {
      int64_t axis = q->node->attrs.get_int("axis", 1);
      if (axis < 0) axis += static_cast<int64_t>(rank);
      if (axis != channel_axis || q->scale_t->shape().size() != 1 ||
          q->scale_t->numel() != w->shape()[static_cast<size_t>(axis)]) {
        return std::nullopt;
      }
    }
    return q;
  }

  // The int32 bias of `channels` outputs, when v is DequantizeLinear of an int32 constant at
  // scale x_scale * w_scale (a constant equal to that product, or the Mul of the two values as
  // the importer writes for QLinearConv) with zero point 0.
  const Tensor* int_bias(ValueId v, const QuantNode& x, const QuantNode& w, int64_t channels) const {
    const Node* dq = producer(v);
    if (dq == nullptr || dq->op_type != "DequantizeLinear" || dq->inputs.size() < 2) return nullptr;
    const Tensor* b = constant(dq->inputs[0]);
    if (b == nullptr || b->dtype() != DType::kInt32 || b->numel() != channels) return nullptr;
    if (dq->inputs.size() > 2 && dq->inputs[2] != kNoValue) {
      const Tensor* z = constant(dq->inputs[2]);
      if (z == nullptr) return nullptr;
      for (int64_t i = 0; i < z->numel(); ++i) {
        if (ops::quant_element(*z, i) != 0) return nullptr;
      }
    }
    const ValueId scale = dq->inputs[1];
    if (const Node* mul = producer(scale); mul != nullptr && mul->op_type == "Mul") {
      const std::set<ValueId> operands(mul->inputs.begin(), mul->inputs.end());
      return operands == std::set<ValueId>{x.scale, w.scale} ? b : nullptr;
    }
    const Tensor* s = constant(scale);
    if (s == nullptr || s->dtype() != DType::kFloat32) return nullptr;
    const float xs = x.scale_t->data<float>()[0];
    const float* ws = w.scale_t->data<float>();
    for (int64_t c = 0; c < channels; ++c) {
      const float want = xs * ws[w.scale_t->numel() == 1 ? 0 : c];
      if (s->data<float>()[s->numel() == 1 ? 0 : c] != want) return nullptr;
    }
    return b;
  }

  // Relu, or Clip with constant bounds, as [lo, hi]; nullopt for anything else.
  std::optional<std::pair<float, float>> activation_bounds(const Node& n) const {
    constexpr float inf = std::numeric_limits<float>::infinity();
    if (n.op_type == "Relu") return std::make_pair(0.0f, inf);
    if (n.op_type != "Clip") return std::nullopt;
    if (g_.opset < 11) {
      return std::make_pair(n.attrs.get_float("min", -inf), n.attrs.get_float("max", inf));
    }
    float bound[2] = {-inf, inf};
    for (size_t i = 1; i < 3; ++i) {
      if (i >= n.inputs.size() || n.inputs[i] == kNoValue) continue;
      const Tensor* t = constant(n.inputs[i]);
      if (t == nullptr || t->dtype() != DType::kFloat32 || t->numel() != 1) return std::nullopt;
      bound[i - 1] = t->data<float>()[0];
    }
    if (std::isnan(bound[0]) || std::isnan(bound[1])) return std::nullopt;
    return std::make_pair(bound[0], bound[1]);
  }

  const Node* activation_between(const Node& op, const Node& q) const {
    const Node* p = producer(q.inputs[0]);
    return p == &op ? nullptr : p;
  }

  std::optional<std::pair<const Node*, Node>> match_unit(const Node& n) const;
  std::optional<std::pair<const Node*, Node>> add_unit(const Node& n) const;
  std::optional<std::pair<const Node*, Node>> int8_max_pool(const Node& n) const;
  std::optional<Node> conv_unit(const Node& n, const QuantNode& x) const;
  std::optional<Node> matmul_unit(const Node& n, const QuantNode& x) const;
  void add_output_side(const Node& n, Node* unit, const Node** q_out) const;
  ValueId zero_like(const QuantNode& w, const Tensor& weight) const;
  ValueId add_constant(const std::string& name, Tensor t) const;

  Graph& g_;
  std::vector<int> producer_;
  std::vector<int> readers_;
};

ValueId UnitFinder::add_constant(const std::string& name, Tensor t) const {
  Value v;
  std::string unique = name;
  for (int k = 2; g_.find_value(unique) != kNoValue; ++k) unique = name + "_" + std::to_string(k);
  v.name = unique;
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.shape_known = true;
  v.constant = std::make_shared<const Tensor>(std::move(t));
  return g_.add_value(std::move(v));
}

// w's zero point, or a zero of w's type shaped like its scale when it has none.
ValueId UnitFinder::zero_like(const QuantNode& w, const Tensor& weight) const {
  if (w.zero != kNoValue) return w.zero;
  return add_constant(w.node->name + "/zero_point",
                      Tensor(weight.dtype(), w.scale_t->shape()));
}

}  // namespace

namespace {

// The unit of n (a Conv, MatMul or Gemm), and the QuantizeLinear it replaces.
std::optional<std::pair<const Node*, Node>> UnitFinder::match_unit(const Node& n) const {
  if (n.op_type == "Add" || n.op_type == "Mul") return add_unit(n);
  if (n.op_type == "MaxPool") return int8_max_pool(n);
  if (n.op_type != "Conv" && n.op_type != "MatMul" && n.op_type != "Gemm") return std::nullopt;
  if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.outputs[0] == kNoValue) return std::nullopt;
  const std::optional<QuantNode> x = activation_dq(n.inputs[0]);
  if (!x) return std::nullopt;
  // The output side: [Relu/Clip ->] QuantizeLinear with one scale and zero point.
  const Node* q = nullptr;
  Node probe;
  add_output_side(n, &probe, &q);
  if (q == nullptr) return std::nullopt;
  std::optional<Node> unit = n.op_type == "Conv" ? conv_unit(n, *x) : matmul_unit(n, *x);
  if (!unit) return std::nullopt;
  unit->inputs[ops::kQYScale] = probe.inputs[0];
  unit->inputs[ops::kQYZero] = probe.inputs[1];
  for (const auto& [name, value] : probe.attrs.all()) unit->attrs.set(name, value);
  unit->outputs = {q->outputs[0]};
  return std::make_pair(q, std::move(*unit));
}

// An Add or Mul of two dequantized activations, quantized again.
std::optional<std::pair<const Node*, Node>> UnitFinder::add_unit(const Node& n) const {
  if (n.inputs.size() != 2 || n.outputs.size() != 1 || n.outputs[0] == kNoValue) {
    return std::nullopt;
  }
  const std::optional<QuantNode> a = activation_dq(n.inputs[0]);
  const std::optional<QuantNode> b = activation_dq(n.inputs[1]);
  if (!a || !b) return std::nullopt;
  const Node* q = nullptr;
  Node unit;
  add_output_side(n, &unit, &q);
  if (q == nullptr) return std::nullopt;
  const ValueId y_scale = unit.inputs[0], y_zero = unit.inputs[1];
  unit.name = n.name;
  unit.op_type = n.op_type == "Add" ? ops::kQLinearAddUnit : ops::kQLinearMulUnit;
  unit.inputs = {a->data, a->scale, a->zero, b->data, b->scale, b->zero, y_scale, y_zero};
  unit.outputs = {q->outputs[0]};
  return std::make_pair(q, std::move(unit));
}

// DequantizeLinear -> MaxPool -> QuantizeLinear with one scale and zero point on both sides is
// MaxPool on the int8 values (opset 12 on): max commutes with the non-decreasing Q and DQ, and
// Q(DQ(a)) = a when their parameters are equal. The pool's window attributes stay as they are.
std::optional<std::pair<const Node*, Node>> UnitFinder::int8_max_pool(const Node& n) const {
  if (g_.opset < 12 || n.inputs.size() != 1 || n.outputs.size() != 1 || n.outputs[0] == kNoValue) {
    return std::nullopt;
  }
  const std::optional<QuantNode> x = activation_dq(n.inputs[0]);
  if (!x) return std::nullopt;
  const std::optional<QuantNode> q = quant_node(only_reader(n.outputs[0]), "QuantizeLinear");
  if (!q || q->zero_t == nullptr || q->scale_t->numel() != 1 || q->node->outputs.size() != 1 ||
      q->node->attrs.has("output_dtype") || q->zero_t->dtype() != x->zero_t->dtype() ||
      q->scale_t->data<float>()[0] != x->scale_t->data<float>()[0] ||
      ops::quant_element(*q->zero_t, 0) != ops::quant_element(*x->zero_t, 0)) {
    return std::nullopt;
  }
  Node pool = n;
  pool.inputs = {x->data};
  pool.outputs = {q->node->outputs[0]};
  return std::make_pair(q->node, std::move(pool));
}

// Finds n's QuantizeLinear (through one Relu/Clip) and puts its scale and zero point in
// unit->inputs[0..1] and the activation's quantized bounds in unit->attrs; *q_out stays null
// when the output side does not fit.
void UnitFinder::add_output_side(const Node& n, Node* unit, const Node** q_out) const {
  const ValueId y = n.outputs[0];
  const Node* next = only_reader(y);
  if (next == nullptr) return;
  std::optional<std::pair<float, float>> bounds;
  if (next->op_type == "Relu" || next->op_type == "Clip") {
    bounds = activation_bounds(*next);
    if (!bounds || next->outputs.size() != 1 || next->inputs[0] != y) return;
    next = only_reader(next->outputs[0]);
  }
  const std::optional<QuantNode> q = quant_node(next, "QuantizeLinear");
  if (!q || q->zero_t == nullptr || q->scale_t->numel() != 1) return;
  if (q->zero_t->dtype() != DType::kInt8 && q->zero_t->dtype() != DType::kUInt8) return;
  if (q->node->outputs.size() != 1 || q->node->attrs.has("output_dtype")) return;
  if (!ops::bad_scale(*q->scale_t).empty()) return;
  unit->inputs = {q->scale, q->zero};
  if (bounds) {
    // Q(v) = saturate(round(v / scale) + zero), the QuantizeLinear of each bound.
    const DType t = q->zero_t->dtype();
    const float scale = q->scale_t->data<float>()[0];
    const float zero = static_cast<float>(ops::quant_element(*q->zero_t, 0));
    const auto quantize = [&](float v) {
      const float r = std::nearbyint(v / scale) + zero;
      return static_cast<int64_t>(std::min(std::max(r, static_cast<float>(ops::qtype_min(t))),
                                           static_cast<float>(ops::qtype_max(t))));
    };
    unit->attrs.set("output_min", quantize(bounds->first));
    unit->attrs.set("output_max", quantize(bounds->second));
  }
  *q_out = q->node;
}

std::optional<Node> UnitFinder::conv_unit(const Node& n, const QuantNode& x) const {
  const std::optional<QuantNode> w = weight_dq(n.inputs[1], 4, 0);
  if (!w) return std::nullopt;
  const Tensor& weight = *constant(w->data);
  Node unit;
  unit.name = n.name;
  unit.op_type = ops::kQLinearConvUnit;
  unit.attrs = n.attrs;
  unit.inputs = {x.data, x.scale, x.zero, w->data, w->scale, zero_like(*w, weight),
                 kNoValue, kNoValue};
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    const Tensor* bias = int_bias(n.inputs[2], x, *w, weight.shape()[0]);
    if (bias == nullptr) return std::nullopt;
    unit.inputs.push_back(producer(n.inputs[2])->inputs[0]);
  }
  return unit;
}

// MatMul with a 2-D constant B, or Gemm (alpha = beta = 1, no transA) whose B becomes [K, N].
std::optional<Node> UnitFinder::matmul_unit(const Node& n, const QuantNode& x) const {
  const bool gemm = n.op_type == "Gemm";
  if (gemm && (n.attrs.get_int("transA", 0) != 0 || n.attrs.get_float("alpha", 1.0f) != 1.0f ||
               n.attrs.get_float("beta", 1.0f) != 1.0f)) {
    return std::nullopt;
  }
  const bool trans_b = gemm && n.attrs.get_int("transB", 0) != 0;
  const std::optional<QuantNode> w = weight_dq(n.inputs[1], 2, trans_b ? 0 : 1);
  if (!w) return std::nullopt;
  const Tensor& weight = *constant(w->data);
  const int64_t k = weight.shape()[trans_b ? 1 : 0], cols = weight.shape()[trans_b ? 0 : 1];
  const Tensor* bias = nullptr;
  if (gemm && n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    bias = int_bias(n.inputs[2], x, *w, cols);
    if (bias == nullptr) return std::nullopt;
  }
  ValueId wv = w->data;
  if (trans_b) {
    Tensor t(weight.dtype(), {k, cols});
    const auto* src = static_cast<const uint8_t*>(weight.raw());
    auto* dst = static_cast<uint8_t*>(t.raw());
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = src[c * k + r];
    }
    wv = add_constant(w->node->name + "/transposed", std::move(t));
  }
  Node unit;
  unit.name = n.name;
  unit.op_type = ops::kQLinearMatMulUnit;
  unit.inputs = {x.data, x.scale, x.zero, wv, w->scale, zero_like(*w, weight), kNoValue, kNoValue};
  if (bias != nullptr) {
    Tensor flat = bias->reshaped({cols});
    unit.inputs.push_back(add_constant(n.name + "/bias", std::move(flat)));
  }
  return unit;
}

}  // namespace

int fuse_quantized_units(Graph& graph) {
  UnitFinder finder(graph);
  finder.check_scales();
  return finder.run();
}

}  // namespace tessera
