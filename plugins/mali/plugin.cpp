// The mali plugin: device claim (ARM Mali by default, any OpenCL device with the selector "any"),
// per-node cost answers, precision and the Lowering it compiles with. The plugin class is the
// shared OpenClPlugin (tessera_opencl/opencl_plugin.hpp), on the plugin SDK.
//
// Target options (a deployment target's `options:` or `--targets 'mali:any[layout=nchw]'`):
//   layout         the activation layout of every region: "nchw4c" (default; region.hpp) or
//                  "nchw" (the NCHW kernels only, kept as the fallback and for comparison)
//   build_options  text appended to every kernel build (for experiments, and for tests that
//                  force a build failure)
#include <cstring>
#include <memory>
#include <string>

#include "ops/op.hpp"
#include "region.hpp"
#include "tessera/error.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/opencl_plugin.hpp"

namespace tessera::mali {
namespace {

struct Traits : opencl::LoweringTraits<Traits, mali::Registry, mali::flavor> {
  static constexpr const char* kName = "mali";
  static constexpr int32_t kLayout = TSR_LAYOUT_NCHW;
  static constexpr const char* kLayoutKey = "nchw";
  static constexpr bool kWrapAllLowerErrors = true;
  static constexpr bool kOutOfResourcesIsOom = false;

  static constexpr const char* kFamilyMarks[] = {"mali"};
  static constexpr const char* kNotNativeHint =
      "not an ARM Mali device; use the target 'mali:any' to run mali kernels on it";

  using ProgramPool = mali::ProgramPool;

  static opencl::Device device(const opencl::DeviceInfo& d) { return {d, flavor(), {}}; }

  static void fill_support(const NodeView& view, tsr_support* support) {
    // Rough: a launch (~10 us on Mali) plus output bytes at ~10 GB/s.
    int64_t elements = 0;
    for (int32_t i = 0; i < view.num_outputs(); ++i) {
      if (view.output_index(i) >= 0) elements += plugin::tensor_numel(view.output(i));
    }
    support->cost_us = 10.0 + static_cast<double>(elements) * 4.0 / 1e4;
  }

  static std::string unsupported_precision(const std::string& precision) {
    if (precision != "fp32") {
      return "precision '" + precision + "' is not implemented (fp32 only)";
    }
    return "";
  }

  // ops/shared.cpp fuse_activation(): the conv kernels apply these in their epilogue.
  static bool fuses_after_conv(std::string_view op_type) {
    return op_type == "Relu" || op_type == "Clip" || op_type == "LeakyRelu";
  }

  static std::string check_option(const std::string& name, const std::string& value) {
    if (name == "layout") return parse_layout(value) ? "" : layout_choices(value);
    if (name == "build_options") {
      return value.find_first_of("\n\r") == std::string::npos
                 ? ""
                 : "option 'build_options' must be one line of OpenCL build options";
    }
    return "unknown option '" + name + "'; the mali plugin takes 'layout' (nchw4c, nchw) and " +
           "'build_options' (text appended to every kernel build)";
  }

  static opencl::LoweringOptions lowering_options(const plugin::CompileOptions& options) {
    opencl::LoweringOptions out;
    out.activation = kDefaultLayout;
    // create() accepted every one of them (check_option).
    for (const auto& [name, value] : options.target_options) {
      if (name == "layout") out.activation = *parse_layout(value);
      if (name == "build_options") {
        out.extra_build_options += (out.extra_build_options.empty() ? "" : " ") + value;
      }
    }
    return out;
  }
};

}  // namespace
}  // namespace tessera::mali

TESSERA_DEFINE_PLUGIN(tessera::opencl::support::OpenClPlugin<tessera::mali::Traits>, "mali",
                      "0.1.0",
                      "OpenCL buffer kernels with tunable schedules for ARM Mali GPUs ('mali:any' "
                      "for any OpenCL device)")
