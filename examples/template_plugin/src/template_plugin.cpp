// The template plugin: probe one device, answer per node, compile a region into a list of kernel
// calls, execute it. Written against tessera/plugin.hpp (the helper turns this class into the C
// function table and turns exceptions into status codes).
#include <cstring>
#include <vector>

#include "kernels.hpp"
#include "tessera/plugin.hpp"

namespace template_plugin {
namespace {

using namespace tessera::plugin;

// One kernel call: value indices into the region's value table.
struct Step {
  int32_t input;
  int32_t output;
  int64_t elements;
};

class TemplateRegion : public CompiledRegion {
 public:
  explicit TemplateRegion(const RegionView& region) {
    buffers_.resize(static_cast<size_t>(region.num_values()));
    for (int32_t v = 0; v < region.num_values(); ++v) {
      buffers_[static_cast<size_t>(v)].resize(static_cast<size_t>(tensor_numel(region.value(v))));
    }
    for (int32_t n = 0; n < region.num_nodes(); ++n) {
      const NodeView node = region.node(n);
      if (node.op_type() != "Relu") {
        // Core only sends nodes query() accepted; a failure here makes core fall back.
        throw Failure(TSR_COMPILE_FAILED, node.describe() + ": not implemented by template");
      }
      steps_.push_back({node.input_index(0), node.output_index(0), tensor_numel(*node.output(0))});
    }
    for (int32_t i = 0; i < region.num_inputs(); ++i) inputs_.push_back(region.input_index(i));
    for (int32_t i = 0; i < region.num_outputs(); ++i) outputs_.push_back(region.output_index(i));
  }

  void execute(const void* const* inputs, void* const* outputs) override {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      std::vector<float>& b = buffers_[static_cast<size_t>(inputs_[i])];
      std::memcpy(b.data(), inputs[i], b.size() * sizeof(float));
    }
    for (const Step& s : steps_) {
      relu_f32(buffers_[static_cast<size_t>(s.input)].data(),
               buffers_[static_cast<size_t>(s.output)].data(), s.elements);
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const std::vector<float>& b = buffers_[static_cast<size_t>(outputs_[i])];
      std::memcpy(outputs[i], b.data(), b.size() * sizeof(float));
    }
  }

 private:
  std::vector<std::vector<float>> buffers_;
  std::vector<Step> steps_;
  std::vector<int32_t> inputs_, outputs_;
};

// One object per plugin instance (core makes one per deployment target): keep every piece of
// mutable state in members, never in statics, so two instances never see each other's state.
class TemplatePlugin : public Plugin {
 public:
  std::vector<DeviceInfo> probe(const std::string& selector) override {
    DeviceInfo d;
    d.id = "host";  // stable: core passes it back to query/compile; never a list position
    d.vendor = "Example Corp";
    d.name = "template device";
    d.kind = "cpu";  // works on host memory: no transfer cost at region boundaries
    d.compute_units = 1;
    d.score = 10;  // 0 would mean unusable (then set d.unusable_reason)
    return {d};
  }

  Support query(const std::string& device, const RegionView& region,
                const NodeView& node) override {
    if (node.op_type() != "Relu") {
      return Support::no("op " + std::string(node.op_type()) + " not implemented");
    }
    if (node.input(0) == nullptr || node.input(0)->dtype != TSR_DTYPE_FLOAT32) {
      return Support::no("only float32 is implemented");
    }
    // Cost estimate in microseconds; core compares it with other plugins and transfer costs.
    return Support::yes(0.0005 * static_cast<double>(tensor_numel(*node.output(0))));
  }

  std::unique_ptr<CompiledRegion> compile(const std::string& device, const RegionView& region,
                                          const CompileOptions& options) override {
    return std::make_unique<TemplateRegion>(region);
  }
};

}  // namespace
}  // namespace template_plugin

TESSERA_DEFINE_PLUGIN(template_plugin::TemplatePlugin, "template", TEMPLATE_PLUGIN_VERSION,
                      "template plugin: float32 Relu on the host CPU")
