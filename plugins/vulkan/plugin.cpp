// The vulkan plugin: device discovery through the Vulkan loader, capability answers from the op
// table (ops/), compilation into one recorded command buffer per region (region.hpp), and the
// schedules the tuner may set (schedules.hpp).
//
// Selectors: by default every Vulkan GPU is claimed and CPU implementations (lavapipe) are
// listed as unusable, so a machine's default targets never run on them by surprise; "any" takes
// every usable device, "vk<N>" one device, any other text a device whose name contains it.
//
// Target options (`--targets 'vulkan:any[validation=on]'`):
//   validation    on | off (default): enable VK_LAYER_KHRONOS_validation; any message it reports
//                 fails the compile or run that caused it, quoting the message
//   inject_fault  none (default) | alloc | pipeline | submit: the named driver call fails, for
//                 tests of how a driver failure is reported
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "device.hpp"
#include "ops/op.hpp"
#include "ops/typed.hpp"
#include "region.hpp"
#include "schedules.hpp"
#include "shaders.hpp"
#include "tessera/plugin.hpp"

namespace tessera::vulkan {
namespace {

using plugin::Failure;

bool contains_ci(const std::string& text, const std::string& part) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return lower(text).find(lower(part)) != std::string::npos;
}

// Why `selector` does not take device `d`, or "".
std::string selector_reason(const PhysicalDevice& d, const std::string& selector) {
  if (!d.unusable_reason.empty()) return d.unusable_reason;
  if (selector.empty() || selector == "default") {
    return d.type == VK_PHYSICAL_DEVICE_TYPE_CPU
               ? "a CPU implementation of Vulkan; use the target 'vulkan:any' to run on it"
               : "";
  }
  if (selector == "any" || selector == d.id) return "";
  if (!contains_ci(d.name, selector)) {
    return "device name does not contain the selector '" + selector + "'";
  }
  return "";
}

int32_t score_of(const PhysicalDevice& d) {
  switch (d.type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 100;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 90;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 50;
    default:
      return 10;
  }
}

// Whether `producer`'s kernel applies `reader` in its epilogue (ops/conv.cpp, gemm.cpp,
// mat_mul.cpp call fuse_activation()).
bool fuses(const NodeView& producer, const NodeView& reader) {
  const std::string_view op = producer.op_type();
  return (op == "Conv" || op == "Gemm" || op == "MatMul") && activation_of(reader).code != 0;
}

std::string workload_key(const NodeView& node) {
  std::string key = std::string(node.op_type()) + ".f32";
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    const tsr_tensor* t = node.input(i);
    key += "|";
    if (t == nullptr) continue;
    for (int64_t d : plugin::tensor_shape(*t)) key += std::to_string(d) + "x";
  }
  for (const char* attr : {"strides", "pads", "dilations", "kernel_shape"}) {
    key += std::string("|") + attr + "=";
    for (int64_t v : node.attr_ints(attr, {})) key += std::to_string(v) + ",";
  }
  key += "|group=" + std::to_string(node.attr_int("group", 1));
  key += "|transA=" + std::to_string(node.attr_int("transA", 0)) +
         "|transB=" + std::to_string(node.attr_int("transB", 0));
  return key;
}

class VulkanPlugin : public plugin::Plugin {
 public:
  void check_options(const std::vector<plugin::TargetOption>& options) override {
    for (const plugin::TargetOption& o : options) {
      if (o.name == "validation") {
        if (o.value != "on" && o.value != "off") {
          throw Failure(TSR_INVALID_ARGUMENT,
                        "option 'validation' = '" + o.value + "': use 'on' or 'off'");
        }
        options_.validation = o.value == "on";
      } else if (o.name == "inject_fault") {
        if (o.value == "none")
          options_.fault = Fault::kNone;
        else if (o.value == "alloc")
          options_.fault = Fault::kAlloc;
        else if (o.value == "pipeline")
          options_.fault = Fault::kPipeline;
        else if (o.value == "submit")
          options_.fault = Fault::kSubmit;
        else {
          throw Failure(TSR_INVALID_ARGUMENT, "option 'inject_fault' = '" + o.value +
                                                  "': use none, alloc, pipeline or submit");
        }
      } else if (o.name == "shader_int64") {
        if (o.value != "auto" && o.value != "off") {
          throw Failure(TSR_INVALID_ARGUMENT,
                        "option 'shader_int64' = '" + o.value + "': use 'auto' or 'off'");
        }
        options_.shader_int64 = o.value == "auto";
      } else {
        throw Failure(TSR_INVALID_ARGUMENT,
                      "unknown option '" + o.name +
                          "'; the vulkan plugin takes 'validation' (on, off), 'inject_fault' "
                          "(none, alloc, pipeline, submit) and 'shader_int64' (auto, off)");
      }
    }
  }

  std::vector<plugin::DeviceInfo> probe(const std::string& selector) override {
    const Instance& vk = instance();
    std::vector<plugin::DeviceInfo> out;
    if (vk.devices().empty()) {
      plugin::DeviceInfo none;
      none.id = "none";
      none.name = "(no Vulkan device)";
      none.kind = "gpu";
      none.score = 0;
      none.unusable_reason = "vulkan: " + vk.problem();
      out.push_back(none);
      return out;
    }
    for (const PhysicalDevice& d : vk.devices()) {
      plugin::DeviceInfo info;
      info.id = d.id;
      info.vendor = d.vendor;
      info.name = d.name;
      info.driver_version = d.driver;
      info.kind = d.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? "cpu" : "gpu";
      info.memory_bytes = d.device_local_bytes;
      info.features = d.features();
      const std::string reason = selector_reason(d, selector);
      info.score = reason.empty() ? score_of(d) : 0;
      info.unusable_reason = reason.empty() ? "" : "vulkan: " + reason;
      if (reason.empty()) claimed_.insert(d.id);
      out.push_back(std::move(info));
    }
    return out;
  }

  plugin::Support query(const std::string& device, const RegionView& region,
                        const NodeView& node) override {
    (void)region;
    if (claimed_.count(device) == 0)
      return plugin::Support::no("device '" + device + "' not probed");
    const Op* op = find_op(std::string(node.op_type()));
    if (op == nullptr) {
      return plugin::Support::no("op " + std::string(node.op_type()) + " not implemented");
    }
    const std::string why = op->check(node);
    if (!why.empty()) return plugin::Support::no(why);
    const PhysicalDevice* physical = instance().find(device);
    if (needs_int64(node) && physical != nullptr && !physical->shader_int64) {
      return plugin::Support::no("needs shaderInt64 (its shader computes in int64_t), which " +
                                 physical->name + " lacks");
    }
    int64_t elements = 0;
    for (int32_t i = 0; i < node.num_outputs(); ++i) {
      if (node.output(i) != nullptr) elements += plugin::tensor_numel(*node.output(i));
    }
    // A dispatch (~5 us) plus the output bytes at ~20 GB/s; the device family's parameters
    // (targets/devices) refine it in core's cost model.
    return plugin::Support::yes(5.0 + static_cast<double>(elements) * 4.0 / 2e4);
  }

  std::vector<plugin::Support> query_subgraph(const std::string& device,
                                              const RegionView& region) override {
    std::vector<plugin::Support> answers = plugin::Plugin::query_subgraph(device, region);
    plugin::mark_fused_readers(region, answers, fuses);
    return answers;
  }

  plugin::NodeTuning describe(const std::string& device, const RegionView& region,
                              const NodeView& node) override {
    (void)device;
    (void)region;
    plugin::NodeTuning tuning;
    const tsr_tensor* x = node.input(0);
    const bool depthwise = node.op_type() == "Conv" && x != nullptr && x->rank == 4 &&
                           node.attr_int("group", 1) == x->dims[1] && x->dims[1] > 1;
    const ScheduleDesc* s = schedule_for(std::string(node.op_type()), depthwise);
    if (s == nullptr) return tuning;
    tuning.workload_key = workload_key(node);
    // The heuristic's tile for this node's GEMM (M x N: output channels per group x pixels, or
    // the product's rows x columns).
    const tsr_tensor* y = node.output(0);
    int64_t m = 1, n = 1;
    if (y != nullptr && y->rank >= 2) {
      const bool conv = node.op_type() == "Conv";
      m = conv ? y->dims[1] / std::max<int64_t>(node.attr_int("group", 1), 1)
               : y->dims[y->rank - 2];
      n = conv && y->rank == 4 ? y->dims[2] * y->dims[3] : y->dims[y->rank - 1];
    }
    plugin::Schedule schedule;
    schedule.name = s->name;
    for (const KnobDesc& k : s->knobs) {
      schedule.knobs.push_back({k.name, k.values, gemm_tile(nullptr, s->name, m, n)});
    }
    tuning.schedules.push_back(std::move(schedule));
    return tuning;
  }

  std::unique_ptr<plugin::CompiledRegion> compile(const std::string& device,
                                                  const RegionView& region,
                                                  const plugin::CompileOptions& options) override {
    std::shared_ptr<Device> dev = device_for(device);
    const std::string problem =
        precision_problem(dev->physical(), parse_precision(options.precision));
    if (!problem.empty()) throw Failure(TSR_UNSUPPORTED, "vulkan: " + problem);
    if (!options.cache_dir.empty()) {
      dev->use_pipeline_cache_file(options.cache_dir + "/vulkan-" + cache_key(*dev) + ".bin");
    }
    Lowering lowering(dev, *pipelines_.at(device), region, options);
    for (int32_t i = 0; i < region.num_nodes(); ++i) {
      if (lowering.fused(i)) continue;
      lower_node(lowering, region.node(i));
    }
    try {
      return lowering.finish();
    } catch (const Failure& e) {
      throw Failure(e.status() == TSR_UNSUPPORTED ? TSR_UNSUPPORTED : TSR_COMPILE_FAILED,
                    std::string("vulkan: ") + e.what());
    }
  }

 private:
  Instance& instance() {
    if (!instance_) instance_ = std::make_unique<Instance>(options_);
    return *instance_;
  }

  static void lower_node(Lowering& lowering, const NodeView& node) {
    const Op* op = find_op(std::string(node.op_type()));
    const std::string why =
        op == nullptr ? "op " + std::string(node.op_type()) + " not implemented" : op->check(node);
    if (!why.empty()) throw Failure(TSR_UNSUPPORTED, "vulkan: " + node.describe() + ": " + why);
    try {
      op->lower(lowering, node);
    } catch (const Failure& e) {
      const std::string text = e.what();
      const tsr_status status = e.status() == TSR_OK ? TSR_COMPILE_FAILED : e.status();
      if (text.find(node.describe()) != std::string::npos) throw Failure(status, "vulkan: " + text);
      throw Failure(status, "vulkan: " + node.describe() + ": " + text);
    }
  }

  std::shared_ptr<Device> device_for(const std::string& id) {
    auto found = devices_.find(id);
    if (found != devices_.end()) return found->second;
    const PhysicalDevice* physical = instance().find(id);
    if (physical == nullptr || claimed_.count(id) == 0) {
      throw Failure(TSR_INVALID_ARGUMENT, "vulkan: device '" + id + "' was not probed here");
    }
    auto made = std::make_shared<Device>(*instance_, *physical);
    pipelines_[id] = std::make_unique<PipelineSet>(*made);
    devices_[id] = made;
    return made;
  }

  static std::string cache_key(const Device& dev) {
    // Device, driver and shaders: another of any of them makes another file.
    const std::string text =
        dev.physical().name + "|" + dev.physical().driver + "|" + std::to_string(shaders_hash());
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    char out[17];
    std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(h));
    return out;
  }

  Options options_;
  std::unique_ptr<Instance> instance_;
  std::set<std::string> claimed_;
  std::map<std::string, std::shared_ptr<Device>> devices_;
  std::map<std::string, std::unique_ptr<PipelineSet>> pipelines_;
};

}  // namespace
}  // namespace tessera::vulkan

TESSERA_DEFINE_PLUGIN(tessera::vulkan::VulkanPlugin, "vulkan", "0.1.0",
                      "Vulkan compute shaders on any Vulkan GPU ('vulkan:any' includes CPU "
                      "implementations such as lavapipe)")
