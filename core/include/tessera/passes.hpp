// Graph passes run after import.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/graph.hpp"

namespace tessera {

// Thrown by shape inference when a node needs, at load time, values that come from graph inputs
// (a Reshape whose shape is a graph input): `inputs` are those graph inputs. prepare_graph turns
// it into Graph::value_inputs; prepare_for_inputs freezes them to the given values.
class InputValuesNeeded : public UnsupportedError {
 public:
  InputValuesNeeded(const std::string& message, std::vector<ValueId> inputs)
      : UnsupportedError(message), inputs(std::move(inputs)) {}
  std::vector<ValueId> inputs;
};

// Thrown by preparation when a node needs, to infer shapes, the value of `value` (named `name`)
// and that value is computed from the model's activations or a large input: NonZero's and
// NonMaxSuppression's inputs, TopK's k or a Reshape's shape taken from data, an If condition on
// activations. prepare_graph leaves such a graph unprepared; a Session then runs it in stages:
// the nodes `value` depends on first, then the rest prepared with `value` bound as a constant.
class ValueNeededAtRun : public UnsupportedError {
 public:
  ValueNeededAtRun(const std::string& message, ValueId value, std::string name)
      : UnsupportedError(message), value(value), name(std::move(name)) {}
  ValueId value;
  std::string name;
};

// Internal attributes of a Loop node, set by the importer and by unrolling: how many inputs
// ONNX gives the node (trip count, condition, carried values; the captures of its body follow),
// and how many iterations are already unrolled before it.
inline constexpr const char* kLoopFormalInputs = "tessera.formal_inputs";
inline constexpr const char* kLoopIterationsDone = "tessera.iterations_done";
// Loops unroll at preparation up to this many iterations; a longer one is refused naming it.
constexpr int64_t kMaxLoopIterations = 4096;

// Graph inputs larger than this (elements) are never frozen to decide shapes: a node that needs
// the values of, say, an image input at load time runs in stages instead (ValueNeededAtRun).
constexpr int64_t kMaxValueInputElements = int64_t{1} << 16;
// Float graph inputs are bound by value only up to this many elements (scales, a threshold):
// a larger float input is data, and what needs its values runs in stages.
constexpr int64_t kMaxFloatValueInputElements = 16;

// Infers dtype and shape of every value in topological order; throws naming the node on error.
void infer_shapes(Graph& graph);

// Writes the window of a Conv, MaxPool, AveragePool or ConvTranspose node out in explicit form,
// so plugins read one form only: kernel_shape, strides, dilations (where the op's opset has
// them; all 1 otherwise) and pads (begin pads, then end pads) are set, auto_pad is dropped
// (SAME_UPPER / SAME_LOWER / VALID become the pads they mean; ceil_mode, which SAME ignores, is
// cleared with it), and ConvTranspose's output_shape becomes pads. `inputs` are the node's input
// shapes (the shape inference sweep calls it once the node is inferred). Other ops, and a
// ConvTranspose whose output_shape asks for more than the full output (negative pads, which the
// pads attribute cannot hold), are left as they are.
void normalise_window_attributes(Node& node, int64_t opset, const std::vector<Shape>& inputs);

// Evaluates every node whose inputs are all constant with the reference kernels (Shape nodes
// count as constant once their input shape is known) and replaces it by constants. This is what
// folds the Shape -> Gather -> Concat -> Reshape chains PyTorch's exporter emits.
// Nodes whose outputs would exceed `max_elements` per output are left in place.
void fold_constants(Graph& graph, int64_t max_elements = int64_t{1} << 24);

// Readers of a Pad whose pads are all zero (known now, output shaped as its input, not a graph
// output) read the Pad's input instead, and the Pad goes.
void bypass_no_op_pads(Graph& graph);

// A training-mode Dropout whose ratio is the constant 0 drops nothing: its training_mode input is
// cleared (an inference Dropout, which every plugin knows) and its constant ratio left as is. A
// Dropout's mask output that nothing reads is removed from the node.
void normalise_dropout(Graph& graph);

// Two-operand Einsum nodes with known shapes become Transpose / Reshape / MatMul (batch, free and
// summed subscripts grouped), so plugins run them as batched MatMuls; other Einsums stay.
void lower_einsum(Graph& graph);
// CastLike(x, like) as Cast(x) to like's element type (known after shape inference).
void lower_cast_like(Graph& graph);

// infer_shapes + fold_constants + normalise_dropout + lower_einsum + lower_cast_like +
// bypass_no_op_pads + remove_dead_nodes, the standard preparation after import. Keeps the graph as
// it was before in graph.unprepared and sets graph.prepared. When shapes depend on the values of
// graph inputs (InputValuesNeeded), the graph stays unprepared (prepared = false) with those inputs
// in graph.value_inputs; prepare_for_inputs prepares it once values are known. A graph with
// Graph::unsized_inputs is left unprepared (only sorted) for the same reason, and so is a graph
// whose shapes depend on a value computed at run time (ValueNeededAtRun), with its name in
// Graph::value_needed_at_run.
void prepare_graph(Graph& graph);

// A prepared copy of `graph` (its unprepared form when it was prepared) for these inputs: every
// graph input takes the given tensor's shape, which may differ from the planned one only in the
// dimensions the model leaves open (Value::open_dims), and every value input becomes a constant
// holding the given values (and leaves graph.inputs). Value inputs found on the way are added to
// the result's value_inputs. Throws tessera::Error naming the input on a missing tensor or a
// dtype, rank or fixed-dimension mismatch, and naming the node when inference fails.
Graph prepare_for_inputs(const Graph& graph, const std::map<std::string, Tensor>& inputs);

// "[?, 3, ?, ?]": a graph input's shape with the dims the model leaves open shown as '?'.
std::string open_shape_str(const Value& input);

// Whether a tensor of `dtype` and `shape` can be fed to graph input `input`: same dtype and rank,
// and the same size in every dimension the model fixes (Value::open_dims may differ).
bool input_accepts(const Value& input, DType dtype, const Shape& shape);

// Whether `graph` can be prepared again for other input shapes or values (it keeps its
// unprepared form, or was never prepared).
bool can_prepare_again(const Graph& graph);

// Whether a Session plans `graph` only at its first run: shapes depend on input values
// (Graph::value_inputs), on sizes only a run gives (Graph::unsized_inputs), or on a value the
// model computes (Graph::value_needed_at_run: it then runs in stages).
bool planned_at_first_run(const Graph& graph);

// The graph's outputs for these inputs computed by constant folding alone: every input bound as
// a constant, then every node folded with the reference kernels (If inlined, NonZero and its
// kind evaluated) whatever its size. The oracle's way through graphs that run in stages.
std::vector<Tensor> evaluate_by_folding(const Graph& graph,
                                        const std::map<std::string, Tensor>& inputs);

}  // namespace tessera
