// Two-operand Einsum as Transpose / Reshape / MatMul, so every plugin with a batched MatMul runs
// the attention products of maxvit, mvitv2 and the like (no plugin implements Einsum itself).
// Subscripts fall in four groups: batch (both inputs and the output), m (A and the output), n (B
// and the output) and k (both inputs, summed). A goes to [batch..., M, K] and B to
// [batch..., K, N] (a Transpose, then a Reshape merging each group), MatMul gives
// [batch..., M, N], and a Reshape and a Transpose put the output in the equation's order; steps
// that would change nothing are left out. Einsums outside that form (one or three inputs, a
// subscript summed within one input, a repeated subscript, broadcast ellipsis dims, unknown
// shapes) keep the Einsum node and its reference kernel.
#include <map>
#include <numeric>

#include "tessera/passes.hpp"
#include "util/einsum.hpp"

namespace tessera {
namespace {

using ops::EinsumSpec;

struct Lowering {
  Graph& graph;
  const Node& einsum;
  std::vector<Node> nodes;
  int serial = 0;

  ValueId fresh(DType dtype, const Shape& shape, std::shared_ptr<const Tensor> constant = nullptr) {
    Value v;
    do {
      v.name = einsum.name + "/lowered_" + std::to_string(serial++);
    } while (graph.find_value(v.name) != kNoValue);
    v.dtype = dtype;
    v.shape = shape;
    v.shape_known = true;
    v.constant = std::move(constant);
    return graph.add_value(std::move(v));
  }

  Node node(const std::string& op, std::vector<ValueId> inputs, ValueId output) {
    Node n;
    n.name = einsum.name + "/" + op + "_" + std::to_string(nodes.size());
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    return n;
  }

  // x permuted by `perm` (nothing when perm is the identity); `out` is the result when given.
  ValueId transpose(ValueId x, const std::vector<int64_t>& perm, ValueId out = kNoValue) {
    const Value& v = graph.value(x);
    Shape shape;
    for (int64_t p : perm) shape.push_back(v.shape[static_cast<size_t>(p)]);
    std::vector<int64_t> identity(perm.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (perm == identity && out == kNoValue) return x;
    const DType dtype = v.dtype;
    if (out == kNoValue) out = fresh(dtype, shape);
    Node n = node("Transpose", {x}, out);
    n.attrs.set("perm", perm);
    nodes.push_back(std::move(n));
    return out;
  }

  // x reshaped (nothing when the shape is already that); `out` is the result when given.
  ValueId reshape(ValueId x, const Shape& shape, ValueId out = kNoValue) {
    if (graph.value(x).shape == shape && out == kNoValue) return x;
    const DType dtype = graph.value(x).dtype;
    auto target = std::make_shared<const Tensor>(
        Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape));
    const ValueId shape_value = fresh(DType::kInt64, {static_cast<int64_t>(shape.size())}, target);
    if (out == kNoValue) out = fresh(dtype, shape);
    nodes.push_back(node("Reshape", {x, shape_value}, out));
    return out;
  }
};

// Axis of subscript `id` in `term`.
int64_t axis_of(const std::vector<int>& term, int id) {
  return std::find(term.begin(), term.end(), id) - term.begin();
}

bool has(const std::vector<int>& term, int id) {
  return std::find(term.begin(), term.end(), id) != term.end();
}

bool unique(const std::vector<int>& term) {
  std::vector<int> sorted = term;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

// The lowered nodes of `einsum`, or nothing when it is outside the form above.
std::vector<Node> lower(Graph& graph, const Node& einsum) {
  if (einsum.inputs.size() != 2 || einsum.outputs.size() != 1 || einsum.inputs[0] == kNoValue ||
      einsum.inputs[1] == kNoValue) {
    return {};
  }
  // Copies: adding values below may reallocate graph.values.
  const Value a = graph.value(einsum.inputs[0]);
  const Value b = graph.value(einsum.inputs[1]);
  if (!a.shape_known || !b.shape_known || a.dtype != b.dtype) return {};
  EinsumSpec spec;
  try {
    spec = ops::parse_einsum(einsum.attrs.get_string("equation"), {a.shape, b.shape},
                             graph.describe(einsum));
  } catch (const Error&) {
    return {};  // shape inference reports it
  }
  const std::vector<int>& ta = spec.inputs[0];
  const std::vector<int>& tb = spec.inputs[1];
  if (!unique(ta) || !unique(tb)) return {};
  std::vector<int> batch, m, n, k;
  for (int id : spec.output) {
    if (has(ta, id) && has(tb, id)) {
      batch.push_back(id);
    } else if (has(ta, id)) {
      m.push_back(id);
    } else {
      n.push_back(id);
    }
  }
  for (int id : ta) {
    if (has(spec.output, id)) continue;
    if (!has(tb, id)) return {};  // summed within A alone
    k.push_back(id);
  }
  for (int id : tb) {
    if (!has(spec.output, id) && !has(ta, id)) return {};  // summed within B alone
  }
  auto dim = [&](int id) { return spec.dims[static_cast<size_t>(id)]; };
  // Broadcast dims (ellipsis of size 1 against more) would need an Expand: keep the Einsum.
  for (int id : ta) {
    if (a.shape[static_cast<size_t>(axis_of(ta, id))] != dim(id)) return {};
  }
  for (int id : tb) {
    if (b.shape[static_cast<size_t>(axis_of(tb, id))] != dim(id)) return {};
  }
  auto product = [&](const std::vector<int>& ids) {
    int64_t p = 1;
    for (int id : ids) p *= dim(id);
    return p;
  };
  Lowering l{graph, einsum, {}, 0};
  Shape batch_shape;
  for (int id : batch) batch_shape.push_back(dim(id));
  // A: [batch..., m..., k...] -> [batch..., M, K]; B: [batch..., k..., n...] -> [batch..., K, N].
  auto operand = [&](ValueId x, const std::vector<int>& term, const std::vector<int>& first,
                     const std::vector<int>& second) {
    std::vector<int64_t> perm;
    for (const std::vector<int>* group :
         {static_cast<const std::vector<int>*>(&batch), &first, &second}) {
      for (int id : *group) perm.push_back(axis_of(term, id));
    }
    Shape merged = batch_shape;
    merged.push_back(product(first));
    merged.push_back(product(second));
    return l.reshape(l.transpose(x, perm), merged);
  };
  const ValueId am = operand(einsum.inputs[0], ta, m, k);
  const ValueId bm = operand(einsum.inputs[1], tb, k, n);
  Shape mn = batch_shape;
  mn.push_back(product(m));
  mn.push_back(product(n));
  // [batch..., m..., n...], then the equation's order.
  std::vector<int> grouped = batch;
  grouped.insert(grouped.end(), m.begin(), m.end());
  grouped.insert(grouped.end(), n.begin(), n.end());
  Shape grouped_shape;
  for (int id : grouped) grouped_shape.push_back(dim(id));
  std::vector<int64_t> perm;
  for (int id : spec.output) perm.push_back(axis_of(grouped, id));
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  const ValueId result = einsum.outputs[0];
  const bool needs_transpose = perm != identity;
  const bool needs_reshape = mn != grouped_shape;
  const ValueId product_value = needs_transpose || needs_reshape ? l.fresh(a.dtype, mn) : result;
  l.nodes.push_back(l.node("MatMul", {am, bm}, product_value));
  if (needs_transpose) {
    l.transpose(l.reshape(product_value, grouped_shape), perm, result);
  } else if (needs_reshape) {
    l.reshape(product_value, grouped_shape, result);
  }
  return std::move(l.nodes);
}

}  // namespace

void lower_einsum(Graph& graph) {
  std::vector<Node> out;
  bool changed = false;
  // Lowering adds values; nodes are copied out first so no reference into graph.nodes is held.
  const std::vector<Node> nodes = graph.nodes;
  for (const Node& node : nodes) {
    std::vector<Node> lowered;
    if (node.op_type == "Einsum") lowered = lower(graph, node);
    if (lowered.empty()) {
      out.push_back(node);
      continue;
    }
    changed = true;
    for (Node& n : lowered) out.push_back(std::move(n));
  }
  if (changed) graph.nodes = std::move(out);
}

}  // namespace tessera
