// The op table: for every supported ONNX op, attribute checking + shape inference and the naive
// reference kernel, one op per file in core/ops/. The reference kernels are the oracle every
// plugin is tested against and what the `reference` plugin runs.
//
// An op file registers itself with TESSERA_REGISTER_OP; the files are compiled into an object
// library, so registration never gets dropped by the linker.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/graph.hpp"
#include "tessera/tensor.hpp"

namespace tessera::ops {

// Thrown by InferContext::constant_input when the value is not known at load time; `value` is
// the node's input, so the graph passes can tell which graph inputs it comes from.
class ConstantNeeded : public UnsupportedError {
 public:
  ConstantNeeded(const std::string& message, ValueId value)
      : UnsupportedError(message), value(value) {}
  ValueId value;
};

// What shape inference knows of one input.
struct InputInfo {
  bool present = false;              // false for an omitted optional input
  DType dtype = DType::kUndefined;
  Shape shape;
  const Tensor* constant = nullptr;  // set when the value is known at load time
};

struct OutputInfo {
  DType dtype = DType::kUndefined;
  Shape shape;
};

class InferContext {
 public:
  InferContext(const Node& node, int64_t opset, std::string where)
      : node(node), opset(opset), where(std::move(where)) {}

  const Node& node;
  int64_t opset;
  std::string where;                 // "node 'conv1' (Conv) in model.onnx"
  std::vector<InputInfo> inputs;     // one per node input
  std::vector<OutputInfo> outputs;   // one per node output; filled by the op's infer()

  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i].present; }
  const InputInfo& input(size_t i) const;
  // The constant value of input i, or throws "input i must be a constant" naming the node.
  const Tensor& constant_input(size_t i) const;
  // Throws tessera::Error("<where>: <message>").
  [[noreturn]] void fail(const std::string& message) const;
  // Throws tessera::UnsupportedError("<where>: <message>").
  [[noreturn]] void unsupported(const std::string& message) const;
  // Checks input count is within [min, max]; fails otherwise.
  void expect_inputs(size_t min, size_t max) const;
  // Fails unless input i is present and has one of the listed dtypes.
  void expect_dtype(size_t i, std::initializer_list<DType> allowed) const;
};

class ComputeContext {
 public:
  ComputeContext(const Node& node, int64_t opset) : node(node), opset(opset) {}

  const Node& node;
  int64_t opset;
  std::vector<const Tensor*> inputs;  // nullptr for omitted optional inputs
  // Allocated by the caller with the inferred dtype and shape. A kernel may instead replace an
  // output with a view of an input (Reshape, Identity) as long as dtype and shape match.
  std::vector<Tensor> outputs;

  const Tensor& input(size_t i) const;
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  // Whether output i is one the node asks for: an omitted output (kNoValue) still gets a
  // placeholder tensor, which a kernel with optional outputs must not write.
  bool wants_output(size_t i) const {
    return i < outputs.size() && i < node.outputs.size() && node.outputs[i] != kNoValue;
  }
};

// An InferContext whose inputs are the kernel's tensors, all known: kernels that re-read their
// attributes and input-dependent plan at run time (Resize, the recurrent ops) build one from
// their ComputeContext instead of caching state.
inline InferContext context_of_constants(const ComputeContext& ctx) {
  InferContext ictx(ctx.node, ctx.opset, "node '" + ctx.node.name + "' (" + ctx.node.op_type + ")");
  ictx.inputs.resize(ctx.inputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    ictx.inputs[i] = {true, ctx.inputs[i]->dtype(), ctx.inputs[i]->shape(), ctx.inputs[i]};
  }
  return ictx;
}

struct OpDef {
  std::string op_type;
  // Validates attributes and input types, and fills ctx.outputs. Throws on bad input.
  std::function<void(InferContext&)> infer;
  // Computes outputs from inputs with plain loops; never called before infer() succeeded.
  std::function<void(ComputeContext&)> compute;
};

// nullptr if the op is not registered.
const OpDef* find_op(const std::string& op_type);
// Sorted op types, for `tessera info` and conformance filtering.
std::vector<std::string> registered_ops();

struct OpRegistrar {
  explicit OpRegistrar(OpDef def);
};

#define TESSERA_OP_CONCAT_INNER(a, b) a##b
#define TESSERA_OP_CONCAT(a, b) TESSERA_OP_CONCAT_INNER(a, b)
// Usage at namespace scope: TESSERA_REGISTER_OP("Relu", infer_relu, compute_relu);
#define TESSERA_REGISTER_OP(op_type, infer_fn, compute_fn)                       \
  static const ::tessera::ops::OpRegistrar TESSERA_OP_CONCAT(tessera_op_reg_, __LINE__)( \
      ::tessera::ops::OpDef{op_type, infer_fn, compute_fn})

// Runs shape inference for one node given its inputs' infos; returns the outputs' infos.
std::vector<OutputInfo> infer_node(const Node& node, int64_t opset, const std::string& where,
                                   std::vector<InputInfo> inputs);
// Runs the reference kernel for one node: allocates outputs from `output_infos` and computes.
std::vector<Tensor> compute_node(const Node& node, int64_t opset,
                                 const std::vector<const Tensor*>& inputs,
                                 const std::vector<OutputInfo>& output_infos);

}  // namespace tessera::ops
