// The op table and the helpers shared by every op file.
#include <algorithm>
#include <map>

#include "op.hpp"

namespace tessera::ops {
namespace {

std::map<std::string, OpDef>& table() {
  static std::map<std::string, OpDef> ops;
  return ops;
}

}  // namespace

OpRegistrar::OpRegistrar(OpDef def) {
  std::string key = def.op_type;
  table()[key] = std::move(def);
}

const OpDef* find_op(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> registered_ops() {
  std::vector<std::string> names;
  for (const auto& [name, def] : table()) names.push_back(name);
  return names;
}

const InputInfo& InferContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required but missing");
  return inputs[i];
}

const Tensor& InferContext::constant_input(size_t i) const {
  const InputInfo& info = input(i);
  if (info.constant == nullptr) {
    throw ConstantNeeded(where + ": input " + std::to_string(i) +
                             " must be a constant (an initializer or computable at load time); "
                             "dynamic values here are not supported",
                         i < node.inputs.size() ? node.inputs[i] : kNoValue);
  }
  return *info.constant;
}

void InferContext::fail(const std::string& message) const {
  throw Error(where + ": " + message);
}

void InferContext::unsupported(const std::string& message) const {
  throw UnsupportedError(where + ": " + message);
}

void InferContext::expect_inputs(size_t min, size_t max) const {
  if (inputs.size() < min || inputs.size() > max) {
    fail("expects " + std::to_string(min) + (min == max ? "" : " to " + std::to_string(max)) +
         " inputs, got " + std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < min; ++i) input(i);
}

void InferContext::expect_dtype(size_t i, std::initializer_list<DType> allowed) const {
  const InputInfo& info = input(i);
  if (std::find(allowed.begin(), allowed.end(), info.dtype) != allowed.end()) return;
  std::string names;
  for (DType d : allowed) names += std::string(names.empty() ? "" : ", ") + dtype_name(d);
  unsupported("input " + std::to_string(i) + " has dtype " + dtype_name(info.dtype) +
              "; supported: " + names);
}

const Tensor& ComputeContext::input(size_t i) const {
  if (!has_input(i)) {
    throw Error("node '" + node.name + "' (" + node.op_type + "): input " + std::to_string(i) +
                " missing at run time");
  }
  return *inputs[i];
}

std::vector<OutputInfo> infer_node(const Node& node, int64_t opset, const std::string& where,
                                   std::vector<InputInfo> inputs) {
  const OpDef* def = find_op(node.op_type);
  if (def == nullptr) {
    throw UnsupportedError(where + ": op type '" + node.op_type + "' is not supported");
  }
  InferContext ctx(node, opset, where);
  // Every ONNX op has at least one output, and the op files fill ctx.outputs[0] after checking
  // only their inputs: a node listing none is refused here, for all of them.
  if (node.outputs.empty()) ctx.fail("lists no outputs; every " + node.op_type + " has one");
  ctx.inputs = std::move(inputs);
  ctx.outputs.resize(node.outputs.size());
  def->infer(ctx);
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    if (ctx.outputs[i].dtype == DType::kUndefined) {
      ctx.fail("shape inference left output " + std::to_string(i) + " without a dtype");
    }
    try {
      shape_numel(ctx.outputs[i].shape);  // rejects negative or overflowing dims
    } catch (const Error& e) {
      ctx.fail("output " + std::to_string(i) + ": " + e.what());
    }
  }
  return ctx.outputs;
}

std::vector<Tensor> compute_node(const Node& node, int64_t opset,
                                 const std::vector<const Tensor*>& inputs,
                                 const std::vector<OutputInfo>& output_infos) {
  const OpDef* def = find_op(node.op_type);
  if (def == nullptr) throw UnsupportedError("op type '" + node.op_type + "' is not supported");
  ComputeContext ctx(node, opset);
  ctx.inputs = inputs;
  ctx.outputs.reserve(output_infos.size());
  for (const OutputInfo& info : output_infos) {
    ctx.outputs.emplace_back(info.dtype == DType::kUndefined ? DType::kFloat32 : info.dtype,
                             info.shape);
  }
  def->compute(ctx);
  return std::move(ctx.outputs);
}

}  // namespace tessera::ops
