// The clml plugin: Qualcomm's CLML (the OpenCL extension cl_qcom_ml_ops) as a target. It claims
// OpenCL devices whose driver offers a CLML interface this plugin has a table for (interface.hpp)
// and runs what CLML's ops cover (ops/); the rest falls to the next target with the reason. It is
// the shared OpenClPlugin (tessera_opencl/opencl_plugin.hpp) with a CLML lowering, so it shares
// the device's one OpenCL context and its buffer domain with adreno and mali: values cross
// between them as cl_mem, never through the host.
//
// Target options:
//   tuning: off | use | build   CLML's own tuning cache (default "use": load the device's cache
//                               when one exists; "build": tune every op at compile and store it;
//                               `tessera tune` compiles clml regions with "build").
//
// Precision: fp32 (default), fp16 (half tensors, CL_ARITHMETIC_MODE_FP16_QCOM) and fp16-acc32
// (half tensors, CL_ARITHMETIC_MODE_FP16_ACC32_QCOM).
#include <functional>
#include <memory>
#include <string>

#include "interface.hpp"
#include "ops/op.hpp"
#include "region.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/opencl_plugin.hpp"

namespace tessera::clml {
namespace {

// A file name for the CLML tuning cache of `region` on `device`: the same device key the kernel
// cache uses (name, driver), and the region's ops with their shapes and attributes.
std::string tuning_cache_path(const std::string& cache_dir, const opencl::DeviceInfo& device,
                              const tsr_region& region, const std::string& precision) {
  if (cache_dir.empty()) return "";
  std::string key = device.name + "|" + device.driver_version + "|" + precision;
  for (int32_t i = 0; i < region.num_nodes; ++i) {
    key += "|" + opencl::support::workload_key(NodeView(region, i), "clml");
  }
  char name[64];
  std::snprintf(name, sizeof(name), "%016zx.clmltune", std::hash<std::string>{}(key));
  return cache_dir + "/clml/" + name;
}

struct Traits {
  static constexpr const char* kName = "clml";
  static constexpr int32_t kLayout = TSR_LAYOUT_NCHW;
  static constexpr const char* kLayoutKey = "clml";
  static constexpr bool kWrapAllLowerErrors = false;
  static constexpr bool kOutOfResourcesIsOom = true;

  using ProgramPool = clml::ProgramPool;
  using Lowering = clml::Lowering;
  using Config = opencl::support::Config;
  using Registry = clml::Registry;

  static auto select(const NodeView& view, const Device& device) {
    return opencl::support::select_in<Registry>(view, device);
  }
  static void lower_node(Lowering& lowering, const OpLowering& op, const NodeView& view,
                         int32_t index) {
    op.lower(lowering, view, index);
  }

  static bool is_native(const opencl::DeviceInfo& d) { return d.has_extension("cl_qcom_ml_ops"); }

  static std::string claim(const opencl::DeviceInfo& d, size_t index, const std::string& sel) {
    const Interface found = find_interface(d);
    if (!found.api) return found.reason;
    return opencl::support::selector_reason(d, index, sel, true, "");
  }

  static Device device(const opencl::DeviceInfo& d) { return Device{d, find_interface(d).api}; }

  static void fill_support(const NodeView& view, tsr_support* support) {
    // Below adreno's texture kernels (10 us + bytes at 10 GB/s): CLML is Qualcomm's tuned
    // library, preferred wherever it has the op.
    support->cost_us = 5.0 + static_cast<double>(plugin::tensor_numel(view.output(0))) * 4.0 / 2e4;
  }

  static std::string unsupported_precision(const std::string& precision) {
    if (precision != "fp32" && precision != "fp16" && precision != "fp16-acc32") {
      return "precision '" + precision + "' is not implemented (fp32, fp16, fp16-acc32)";
    }
    return "";
  }

  // Conv + Relu / Clip(0, 6) is one CLML op.
  static bool fuses_after_conv(std::string_view op_type) {
    return op_type == "Relu" || op_type == "Clip";
  }

  static std::string check_option(const std::string& name, const std::string& value) {
    if (name == "tuning") {
      if (value == "off" || value == "use" || value == "build") return "";
      return "option 'tuning' is '" + value + "'; allowed: off, use, build";
    }
    return "unknown option '" + name + "'; the clml plugin takes 'tuning' (off, use, build)";
  }

  static Lowering make_lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context,
                                ProgramPool&, const plugin::CompileOptions& options) {
    const Precision precision = options.precision == "fp16"         ? Precision::kFp16
                                : options.precision == "fp16-acc32" ? Precision::kFp16Acc32
                                                                    : Precision::kFp32;
    std::shared_ptr<const Api> api = find_interface(context->device()).api;
    if (!api) throw Error("the device's CLML interface went away");
    const opencl::DeviceInfo& d = context->device();
    const std::string cache_dir = context->cache_dir();
    Lowering lowering(region, std::move(context), std::move(api), precision);
    for (const auto& [name, value] : options.target_options) {
      if (name == "tuning") lowering.tuning = value;
    }
    lowering.tuning_cache_path = tuning_cache_path(cache_dir, d, region, options.precision);
    return lowering;
  }
};

}  // namespace
}  // namespace tessera::clml

TESSERA_DEFINE_PLUGIN(tessera::opencl::support::OpenClPlugin<tessera::clml::Traits>, "clml",
                      "0.1.0",
                      "Qualcomm CLML (cl_qcom_ml_ops) ops on the device's shared OpenCL context, "
                      "for Adreno 6xx and later")
