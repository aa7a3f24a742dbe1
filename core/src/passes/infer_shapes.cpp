// Shape inference pass and the shared infer/fold sweep.
//
// Inference and folding share one sweep because they depend on each other: PyTorch exports
// compute Reshape's target shape with Shape -> Gather -> Concat, and Reshape can only be inferred
// once that chain has been folded to a constant.
#include <algorithm>
#include <memory>
#include <unordered_set>

#include "op.hpp"
#include "passes/infer_and_fold.hpp"
#include "tessera/passes.hpp"

namespace tessera {
namespace passes {
namespace {

// Re-throws with `where` in front unless the message already names it, keeping the error kind.
[[noreturn]] void rethrow_with(const std::string& where) {
  auto prefixed = [&](const std::string& msg) {
    return msg.compare(0, where.size(), where) == 0 ? msg : where + ": " + msg;
  };
  try {
    throw;
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(prefixed(e.what()));
  } catch (const Error& e) {
    throw Error(prefixed(e.what()));
  } catch (const std::exception& e) {
    throw Error(prefixed(e.what()));
  }
}

// Ops whose result is not a function of their inputs; never folded.
bool is_nondeterministic(const std::string& op) {
  static const std::unordered_set<std::string> ops = {"RandomNormal",  "RandomNormalLike",
                                                      "RandomUniform", "RandomUniformLike",
                                                      "Multinomial",   "Bernoulli"};
  return ops.count(op) != 0;
}

// Shape (with opset-15 start/end) computed from the inferred input shape, so the input itself
// need not be constant.
Tensor shape_of(const Node& node, int64_t opset, const Shape& shape) {
  const auto rank = static_cast<int64_t>(shape.size());
  auto clamp = [rank](int64_t axis) {
    if (axis < 0) axis += rank;
    return axis < 0 ? 0 : (axis > rank ? rank : axis);
  };
  const int64_t start = opset < 15 ? 0 : clamp(node.attrs.get_int("start", 0));
  const int64_t end = opset < 15 ? rank : clamp(node.attrs.get_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(shape[static_cast<size_t>(i)]);
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
}

// Refuses a value whose byte size overflows or exceeds the memory limit, naming it, before any
// plugin or kernel sees its shape (a wrapped byte size would become a tiny buffer).
void check_value_size(const Value& v, const std::string& where) {
  const std::string what =
      where + "value '" + v.name + "' (" + dtype_name(v.dtype) + " " + shape_str(v.shape) + ")";
  int64_t bytes = 0;
  try {
    bytes = shape_nbytes(v.shape, v.dtype);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  check_memory_limit(bytes, what);
}

class Sweep {
 public:
  Sweep(Graph& graph, bool fold, int64_t max_elements, bool marking = false)
      : graph_(graph), fold_(fold), max_elements_(max_elements), marking_(marking) {}

  // Marking mode's result: per node of the swept graph, whether it is dynamic.
  std::vector<char> take_dynamic() { return std::move(dynamic_); }

  void run() {
    const std::string source = graph_.source.empty() ? "" : graph_.source + ": ";
    for (ValueId id : graph_.inputs) {
      const Value& v = graph_.value(id);
      if (v.shape_known && v.dtype != DType::kUndefined) check_value_size(v, source + "input ");
    }
    std::vector<int> producer = graph_.producers();
    std::vector<bool> done(graph_.nodes.size(), false);
    std::vector<bool> folded(graph_.nodes.size(), false);
    if (marking_) dynamic_.assign(graph_.nodes.size(), 0);
    sweep(producer, done, folded);
    if (fold_) drop_folded(folded);
  }

 private:
  void drop_folded(const std::vector<bool>& folded) {
    std::vector<Node> kept;
    std::vector<char> dynamic;
    for (size_t n = 0; n < graph_.nodes.size(); ++n) {
      if (folded[n]) continue;
      kept.push_back(std::move(graph_.nodes[n]));
      if (marking_) dynamic.push_back(dynamic_[n]);
    }
    graph_.nodes = std::move(kept);
    dynamic_ = std::move(dynamic);
  }

  // Marking mode: whether node n reads a value a dynamic node produces.
  bool reads_dynamic(size_t n, const std::vector<int>& producer) const {
    for (ValueId in : graph_.nodes[n].inputs) {
      if (in == kNoValue) continue;
      const int p = producer[static_cast<size_t>(in)];
      if (p >= 0 && dynamic_[static_cast<size_t>(p)]) return true;
    }
    return false;
  }

  void sweep(std::vector<int>& producer, std::vector<bool>& done, std::vector<bool>& folded) {
    // Marking mode: node n is dynamic, left uninferred.
    const auto mark = [&](size_t n) {
      dynamic_[n] = 1;
      done[n] = true;
    };
    for (size_t n = 0; n < graph_.nodes.size(); ++n) {
      if (marking_ && reads_dynamic(n, producer)) {
        mark(n);
        continue;
      }
      const std::string& op = graph_.nodes[n].op_type;
      if (op == "If" || op == "Loop") {
        // The body replaces the node here and is swept next, in the node's place: every value
        // it reads is produced before the node (captures are the node's inputs).
        const Node control = graph_.nodes[n];
        std::vector<Node> body;
        try {
          body = op == "If" ? inline_if_branch(graph_, control, truth_of(control, 0, "condition"))
                            : unroll(control);
        } catch (const ValueNeededAtRun&) {
          if (!marking_) throw;
          mark(n);
          continue;
        }
        const auto at = static_cast<std::ptrdiff_t>(n);
        graph_.nodes.erase(graph_.nodes.begin() + at);
        graph_.nodes.insert(graph_.nodes.begin() + at, std::make_move_iterator(body.begin()),
                            std::make_move_iterator(body.end()));
        done.erase(done.begin() + at);
        done.insert(done.begin() + at, body.size(), false);
        folded.erase(folded.begin() + at);
        folded.insert(folded.begin() + at, body.size(), false);
        if (marking_) {
          dynamic_.erase(dynamic_.begin() + at);
          dynamic_.insert(dynamic_.begin() + at, body.size(), 0);
        }
        producer = graph_.producers();
        --n;  // wraps for n == 0; the loop's ++n brings it back
        continue;
      }
      const Node& node = graph_.nodes[n];
      for (ValueId in : node.inputs) {
        if (in == kNoValue) continue;
        const int p = producer.at(static_cast<size_t>(in));
        if (p != -1 && !done[static_cast<size_t>(p)]) {
          throw Error(graph_.describe(node) + ": reads '" + graph_.value(in).name +
                      "' before it is produced; run topological_sort first");
        }
      }
      try {
        infer(node);
      } catch (const ValueNeededAtRun&) {
        if (!marking_) throw;
        mark(n);
        continue;
      }
      normalise(graph_.nodes[n]);
      if (fold_) folded[n] = try_fold(node);
      done[n] = true;
    }
  }

  // Writes the node's window attributes out (normalise_window_attributes) once its inputs'
  // shapes are known, so plugins never see auto_pad.
  void normalise(Node& node) {
    std::vector<Shape> shapes;
    for (ValueId in : node.inputs) {
      shapes.push_back(in == kNoValue ? Shape{} : graph_.value(in).shape);
    }
    try {
      normalise_window_attributes(node, graph_.opset, shapes);
    } catch (...) {
      rethrow_with(graph_.describe(node));
    }
  }

  void infer(const Node& node) {
    const std::string where = graph_.describe(node);
    std::vector<ops::InputInfo> infos;
    for (ValueId in : node.inputs) {
      ops::InputInfo info;
      if (in != kNoValue) {
        const Value& v = graph_.value(in);
        info.present = true;
        info.dtype = v.dtype;
        info.shape = v.shape;
        info.constant = v.constant.get();
      }
      infos.push_back(std::move(info));
    }
    std::vector<ops::OutputInfo> outs;
    try {
      outs = ops::infer_node(node, graph_.opset, where, std::move(infos));
    } catch (const ops::ConstantNeeded& e) {
      throw_values_needed(e);
      rethrow_with(where);
    } catch (...) {
      rethrow_with(where);
    }
    for (size_t i = 0; i < node.outputs.size() && i < outs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      Value& v = graph_.value(node.outputs[i]);
      // A dtype or fully static shape declared in the model (outputs, value_info) must agree.
      if (v.dtype != DType::kUndefined && v.dtype != outs[i].dtype) {
        throw Error(where + ": output '" + v.name + "' is declared " + dtype_name(v.dtype) +
                    " in the model but inferred as " + dtype_name(outs[i].dtype));
      }
      if (v.shape_known && v.shape != outs[i].shape) {
        throw Error(where + ": output '" + v.name + "' is declared with shape " +
                    shape_str(v.shape) + " in the model but inferred as " +
                    shape_str(outs[i].shape));
      }
      v.dtype = outs[i].dtype;
      v.shape = outs[i].shape;
      v.shape_known = true;
      check_value_size(v, where + ": output ");
    }
  }

  // Whether a graph input is bound by value when shapes need it (a value input, re-planned per
  // value): integer and bool inputs up to kMaxValueInputElements (sizes, sample rates, masks of
  // shape arithmetic), float ones of a few elements (Resize scales). A larger float input is
  // data: what needs it runs in stages instead.
  static bool bindable(const Value& input) {
    if (!input.shape_known) return false;
    const int64_t n = shape_numel(input.shape);
    const bool floating = input.dtype == DType::kFloat32 || input.dtype == DType::kFloat16;
    return n <= (floating ? kMaxFloatValueInputElements : kMaxValueInputElements);
  }

  [[noreturn]] void throw_needed_at_run(const ops::ConstantNeeded& e) {
    const Value& v = graph_.value(e.value);
    throw ValueNeededAtRun(std::string(e.what()) + " ('" + v.name +
                               "' is computed at run time: the graph runs in stages)",
                           e.value, v.name);
  }

  // The next step of a Loop whose trip count and condition are known now.
  std::vector<Node> unroll(const Node& loop) {
    const int64_t done = loop.attrs.get_int(kLoopIterationsDone, 0);
    const bool has_trip = !loop.inputs.empty() && loop.inputs[0] != kNoValue;
    const bool has_cond = loop.inputs.size() > 1 && loop.inputs[1] != kNoValue;
    int64_t trip = INT64_MAX;
    if (has_trip) trip = scalar_of(loop, 0, "trip count M").scalar_as_int64(0);
    const bool condition = !has_cond || truth_of(loop, 1, "condition");
    if (condition && done < trip && done >= kMaxLoopIterations) {
      throw UnsupportedError(graph_.describe(loop) + ": it runs more than " +
                             std::to_string(kMaxLoopIterations) +
                             " iterations, the most Tessera unrolls");
    }
    return unroll_loop_step(graph_, loop, trip, condition);
  }

  // Input `input` of a control-flow node, which must be known now as a single value: from
  // constants and shapes, from small graph inputs that then become value inputs
  // (InputValuesNeeded), or it runs in stages (ValueNeededAtRun).
  const Tensor& scalar_of(const Node& node, size_t input, const std::string& what) {
    const std::string where = graph_.describe(node);
    const ValueId id = input < node.inputs.size() ? node.inputs[input] : kNoValue;
    if (id == kNoValue) throw Error(where + " has no " + what + " input");
    const Value& v = graph_.value(id);
    if (v.constant == nullptr) {
      throw_values_needed(ops::ConstantNeeded(
          where + ": its " + what + " '" + v.name + "' must be known when the graph is prepared",
          id));
      throw UnsupportedError(where + ": its " + what + " '" + v.name +
                             "' is not known when the graph is prepared");
    }
    const Tensor& t = *v.constant;
    if (t.numel() != 1) {
      throw Error(where + ": its " + what + " '" + v.name + "' has " +
                  std::to_string(t.numel()) + " elements " + shape_str(t.shape()) +
                  "; it must be a single value");
    }
    return t;
  }

  bool truth_of(const Node& node, size_t input, const std::string& what) {
    const Tensor& t = scalar_of(node, input, what);
    const std::string& name = graph_.value(node.inputs[input]).name;
    const std::string where = graph_.describe(node);
    switch (t.dtype()) {
      case DType::kBool:
      case DType::kUInt8:
      case DType::kInt8:
        return *static_cast<const uint8_t*>(t.raw()) != 0;
      case DType::kInt32:
        return t.data<int32_t>()[0] != 0;
      case DType::kInt64:
        return t.data<int64_t>()[0] != 0;
      case DType::kFloat32:
        return t.data<float>()[0] != 0.0f;
      default:
        throw Error(where + ": its " + what + " '" + name + "' is " + dtype_name(t.dtype()) +
                    "; it must be a boolean");
    }
  }

  // When the value a node needs at load time comes from small graph inputs only, throws
  // InputValuesNeeded naming them; when it comes from a large input or the model's activations,
  // ValueNeededAtRun (the graph runs in stages); returns otherwise (the caller reports the plain
  // error).
  void throw_values_needed(const ops::ConstantNeeded& e) {
    if (e.value == kNoValue) return;
    const std::vector<int> producer = graph_.producers();
    std::vector<ValueId> roots;
    bool at_run = false;
    std::vector<ValueId> stack{e.value};
    std::vector<char> seen(graph_.values.size(), 0);
    while (!stack.empty()) {
      const ValueId v = stack.back();
      stack.pop_back();
      if (v == kNoValue || seen[static_cast<size_t>(v)]) continue;
      seen[static_cast<size_t>(v)] = 1;
      const Value& value = graph_.value(v);
      if (value.constant) continue;
      const int p = producer[static_cast<size_t>(v)];
      if (p < 0) {
        if (std::find(graph_.inputs.begin(), graph_.inputs.end(), v) == graph_.inputs.end()) {
          return;  // neither produced nor an input: the graph's own error applies
        }
        if (bindable(value)) {
          roots.push_back(v);
        } else {
          at_run = true;
        }
        continue;
      }
      const Node& n = graph_.nodes[static_cast<size_t>(p)];
      // Ops whose result differs from run to run are never bound by value.
      if (is_nondeterministic(n.op_type)) return;
      // Shape and Size read only their input's shape, which is known by now.
      if (n.op_type == "Shape" || n.op_type == "Size") continue;
      for (ValueId in : n.inputs) stack.push_back(in);
    }
    if (at_run) throw_needed_at_run(e);
    if (roots.empty()) return;
    std::sort(roots.begin(), roots.end());
    std::string names;
    for (ValueId r : roots) names += (names.empty() ? "'" : ", '") + graph_.value(r).name + "'";
    throw InputValuesNeeded(std::string(e.what()) + " (it comes from the values of graph input" +
                                (roots.size() > 1 ? "s " : " ") + names + ")",
                            std::move(roots));
  }

  bool try_fold(const Node& node) {
    if (is_nondeterministic(node.op_type)) return false;
    const bool shape_like = node.op_type == "Shape" || node.op_type == "Size";
    std::vector<const Tensor*> args;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        args.push_back(nullptr);
        continue;
      }
      const Value& v = graph_.value(in);
      if (!v.constant && !(shape_like && v.shape_known)) return false;
      args.push_back(v.constant.get());
    }
    std::vector<ops::OutputInfo> infos;
    for (ValueId out : node.outputs) {
      ops::OutputInfo info;
      if (out != kNoValue) {
        const Value& v = graph_.value(out);
        if (shape_numel(v.shape) > max_elements_) return false;
        info.dtype = v.dtype;
        info.shape = v.shape;
      }
      infos.push_back(std::move(info));
    }
    const std::string where = graph_.describe(node);
    std::vector<Tensor> results;
    try {
      if (node.op_type == "Shape" && args.size() == 1 && args[0] == nullptr) {
        results.push_back(shape_of(node, graph_.opset, graph_.value(node.inputs[0]).shape));
      } else if (node.op_type == "Size" && args.size() == 1 && args[0] == nullptr) {
        results.push_back(
            Tensor::from_vector<int64_t>({}, {shape_numel(graph_.value(node.inputs[0]).shape)}));
      } else {
        results = ops::compute_node(node, graph_.opset, args, infos);
      }
    } catch (...) {
      rethrow_with(where + ": while folding constants");
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      Value& v = graph_.value(node.outputs[i]);
      if (i >= results.size() || results[i].dtype() != v.dtype || results[i].shape() != v.shape) {
        throw Error(where + ": the kernel's output " + std::to_string(i) +
                    " does not match its inferred dtype/shape " + dtype_name(v.dtype) + " " +
                    shape_str(v.shape));
      }
      v.constant = std::make_shared<const Tensor>(results[i]);
    }
    return true;
  }

  Graph& graph_;
  bool fold_;
  int64_t max_elements_;
  // Marking mode: a node that needs a value computed at run time, or reads such a node's
  // output, is marked dynamic and skipped instead of stopping the sweep.
  bool marking_ = false;
  std::vector<char> dynamic_;
};

}  // namespace

void infer_and_fold(Graph& graph, bool fold, int64_t max_elements) {
  Sweep(graph, fold, max_elements).run();
}

std::vector<char> mark_dynamic(Graph& graph) {
  Sweep sweep(graph, true, int64_t{1} << 24, true);
  sweep.run();
  return sweep.take_dynamic();
}

}  // namespace passes

void infer_shapes(Graph& graph) {
  passes::infer_and_fold(graph, false, 0);
}

}  // namespace tessera
