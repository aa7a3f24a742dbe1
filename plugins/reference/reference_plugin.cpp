// The `reference` plugin: every op of core's op table, run with the naive reference kernels on
// the host CPU. It is the fallback that makes any graph runnable and is always placed last.
#include <cstring>
#include <string>
#include <vector>

#include "op.hpp"
#include "tessera/graph.hpp"
#include "tessera/plugin.hpp"
#include "tessera/tensor.hpp"

namespace {

using tessera::DType;
using tessera::Tensor;
using tessera::plugin::CompiledRegion;
using tessera::plugin::CompileOptions;
using tessera::plugin::DeviceInfo;
using tessera::plugin::Failure;
using tessera::plugin::NodeView;
using tessera::plugin::RegionView;
using tessera::plugin::Support;

tessera::Shape shape_of(const tsr_tensor& t) {
  return tessera::plugin::tensor_shape(t);
}

Tensor copy_tensor(const tsr_tensor& t) {
  Tensor out(static_cast<DType>(t.dtype), shape_of(t));
  if (t.data != nullptr && out.nbytes() > 0) std::memcpy(out.raw(), t.data, out.nbytes());
  return out;
}

tessera::Node to_node(const NodeView& view) {
  tessera::Node node;
  node.name = std::string(view.name());
  node.op_type = std::string(view.op_type());
  for (int32_t i = 0; i < view.num_inputs(); ++i) node.inputs.push_back(view.input_index(i));
  for (int32_t i = 0; i < view.num_outputs(); ++i) node.outputs.push_back(view.output_index(i));
  const tsr_node& raw = view.raw();
  for (int32_t i = 0; i < raw.num_attributes; ++i) {
    const tsr_attribute& a = raw.attributes[i];
    switch (a.kind) {
      case TSR_ATTR_INT:
        node.attrs.set(a.name, a.i);
        break;
      case TSR_ATTR_FLOAT:
        node.attrs.set(a.name, a.f);
        break;
      case TSR_ATTR_STRING:
        node.attrs.set(a.name, std::string(a.s ? a.s : ""));
        break;
      case TSR_ATTR_INTS:
        node.attrs.set(a.name, std::vector<int64_t>(a.ints, a.ints + a.count));
        break;
      case TSR_ATTR_FLOATS:
        node.attrs.set(a.name, std::vector<float>(a.floats, a.floats + a.count));
        break;
      case TSR_ATTR_STRINGS:
        node.attrs.set(a.name, std::vector<std::string>(a.strings, a.strings + a.count));
        break;
      case TSR_ATTR_TENSOR:
        node.attrs.set(a.name, copy_tensor(*a.tensor));
        break;
      default:
        throw Failure(TSR_INVALID_ARGUMENT, view.describe() + ": attribute '" + a.name +
                                                "' has unknown kind " + std::to_string(a.kind));
    }
  }
  return node;
}

// A rough single-thread estimate: ~1 ns per multiply-add or output element.
double estimate_cost_us(const NodeView& node) {
  double outputs = 0;
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    if (const tsr_tensor* t = node.output(i)) {
      outputs += static_cast<double>(tessera::plugin::tensor_numel(*t));
    }
  }
  double per_output = 1.0;
  const std::string_view op = node.op_type();
  const tsr_tensor* w = node.input(1);
  if ((op == "Conv" || op == "ConvTranspose") && w != nullptr && w->rank >= 3) {
    per_output = 1.0;
    for (int32_t d = 1; d < w->rank; ++d) per_output *= static_cast<double>(w->dims[d]);
  } else if ((op == "Gemm" || op == "MatMul") && w != nullptr && w->rank >= 1) {
    const tsr_tensor* a = node.input(0);
    per_output = a != nullptr && a->rank >= 1 ? static_cast<double>(a->dims[a->rank - 1]) : 1.0;
  }
  return 0.001 * outputs * per_output + 0.1;
}

class ReferenceRegion : public CompiledRegion {
 public:
  ReferenceRegion(const RegionView& region) : opset_(region.opset()) {
    slots_.resize(static_cast<size_t>(region.num_values()));
    infos_.resize(slots_.size());
    for (int32_t v = 0; v < region.num_values(); ++v) {
      const tsr_tensor& t = region.value(v);
      infos_[static_cast<size_t>(v)] = {static_cast<DType>(t.dtype), shape_of(t)};
      if (t.data != nullptr) slots_[static_cast<size_t>(v)] = copy_tensor(t);
    }
    for (int32_t n = 0; n < region.num_nodes(); ++n) nodes_.push_back(to_node(region.node(n)));
    for (int32_t i = 0; i < region.num_inputs(); ++i) inputs_.push_back(region.input_index(i));
    for (int32_t i = 0; i < region.num_outputs(); ++i) outputs_.push_back(region.output_index(i));
    for (const tessera::Node& node : nodes_) {
      if (tessera::ops::find_op(node.op_type) == nullptr) {
        throw Failure(TSR_UNSUPPORTED, "op type '" + node.op_type + "' is not implemented");
      }
    }
  }

  void execute(const void* const* inputs, void* const* outputs) override {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const size_t v = static_cast<size_t>(inputs_[i]);
      Tensor t(infos_[v].dtype, infos_[v].shape);
      if (t.nbytes() > 0) std::memcpy(t.raw(), inputs[i], t.nbytes());
      slots_[v] = t;
    }
    for (const tessera::Node& node : nodes_) {
      std::vector<const Tensor*> args;
      for (int32_t in : node.inputs) {
        args.push_back(in < 0 ? nullptr : &slots_[static_cast<size_t>(in)]);
      }
      std::vector<tessera::ops::OutputInfo> out_infos;
      for (int32_t out : node.outputs) {
        out_infos.push_back(out < 0 ? tessera::ops::OutputInfo{}
                                    : infos_[static_cast<size_t>(out)]);
      }
      std::vector<Tensor> results;
      try {
        results = tessera::ops::compute_node(node, opset_, args, out_infos);
      } catch (const std::exception& e) {
        throw Failure(TSR_ERROR, "node '" + node.name + "' (" + node.op_type + "): " + e.what());
      }
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.outputs[i] >= 0) slots_[static_cast<size_t>(node.outputs[i])] = results[i];
      }
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const Tensor& t = slots_[static_cast<size_t>(outputs_[i])];
      if (t.nbytes() > 0) std::memcpy(outputs[i], t.raw(), t.nbytes());
    }
  }

 private:
  int64_t opset_;
  std::vector<Tensor> slots_;  // constants stay; activations are replaced every run
  std::vector<tessera::ops::OutputInfo> infos_;
  std::vector<tessera::Node> nodes_;
  std::vector<int32_t> inputs_, outputs_;
};

class ReferencePlugin : public tessera::plugin::Plugin {
 public:
  std::vector<DeviceInfo> probe(const std::string& selector) override {
    DeviceInfo d;
    d.id = "host";
    d.vendor = "Tessera";
    d.name = "host CPU (reference)";
    d.driver_version = "naive kernels";
    d.kind = "cpu";
    d.compute_units = 1;
    d.score = 1;  // lowest usable score: everything else is preferred
    return {d};
  }

  Support query(const std::string& device, const RegionView& region,
                const NodeView& view) override {
    const std::string op(view.op_type());
    if (tessera::ops::find_op(op) == nullptr) return Support::no("op " + op + " not implemented");
    // Run shape inference so unsupported attributes or dtypes are refused here, not at run time.
    std::vector<tessera::ops::InputInfo> infos;
    std::vector<Tensor> constants;
    constants.reserve(static_cast<size_t>(view.num_inputs()));
    for (int32_t i = 0; i < view.num_inputs(); ++i) {
      tessera::ops::InputInfo info;
      if (const tsr_tensor* t = view.input(i)) {
        info.present = true;
        info.dtype = static_cast<DType>(t->dtype);
        info.shape = shape_of(*t);
        if (t->data != nullptr) {
          constants.push_back(copy_tensor(*t));
          info.constant = &constants.back();
        }
      }
      infos.push_back(info);
    }
    try {
      tessera::ops::infer_node(to_node(view), region.opset(), view.describe(), infos);
    } catch (const std::exception& e) {
      return Support::no(e.what());
    }
    return Support::yes(estimate_cost_us(view));
  }

  std::unique_ptr<CompiledRegion> compile(const std::string& device, const RegionView& region,
                                          const CompileOptions& options) override {
    return std::make_unique<ReferenceRegion>(region);
  }
};

}  // namespace

TESSERA_DEFINE_PLUGIN(ReferencePlugin, "reference", TESSERA_VERSION,
                      "naive reference kernels for every op, on the host CPU")
