// The adreno plugin: device claim (Qualcomm Adreno by default; the selector "any" takes any
// OpenCL device with image support), per-node layout and cost answers, precision and the
// Lowering it compiles with. The plugin class is the shared OpenClPlugin
// (tessera_opencl/opencl_plugin.hpp), on the plugin SDK.
//
// Target options: `knob.<name>` (e.g. `knob.opw: 2`, `--targets 'adreno:any[knob.wg_x=8]'`)
// forces that knob of every schedule that has it (schedules.hpp); others are refused.
//
// Precision: "fp32" (default) or "fp16" (activations stored in CL_HALF_FLOAT images, arithmetic
// and weights in float; read_imagef converts on load, so no cl_khr_fp16 is needed).
#include <memory>
#include <string>

#include "ops/op.hpp"
#include "region.hpp"
#include "tessera/error.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/opencl_plugin.hpp"

namespace tessera::adreno {
namespace {

struct Traits : opencl::LoweringTraits<Traits, adreno::Registry, adreno::flavor> {
  static constexpr const char* kName = "adreno";
  static constexpr int32_t kLayout = TSR_LAYOUT_IMAGE2D;
  static constexpr const char* kLayoutKey = "image2d";
  static constexpr bool kWrapAllLowerErrors = false;
  static constexpr bool kOutOfResourcesIsOom = true;

  static constexpr const char* kFamilyMarks[] = {"adreno", "qualcomm"};
  static constexpr const char* kNotNativeHint =
      "not a Qualcomm Adreno device; use the target 'adreno:any' to run the texture kernels on it";

  using ProgramPool = adreno::ProgramPool;

  // The texture kernels need image2d support of a usable size, on top of the family check.
  static std::string claim(const opencl::DeviceInfo& d, size_t index, const std::string& sel) {
    if (!d.image_support) {
      return "device has no OpenCL image support (CL_DEVICE_IMAGE_SUPPORT is false); the adreno "
             "kernels read activations through image2d textures";
    }
    const std::string reason = LoweringTraits::claim(d, index, sel);
    if (!reason.empty()) return reason;
    const ImageLimits limits = image_limits(d);
    if (limits.max_width <= 0 || limits.max_height <= 0) return "device reports no image2d size";
    return "";
  }

  static opencl::Device device(const opencl::DeviceInfo& d) {
    return {d, flavor(), image_limits(d)};
  }

  static void fill_support(const NodeView& view, tsr_support* support) {
    const std::string op_type = view.op_type();
    if (op_type == "Gemm" || op_type == "Flatten" || op_type == "Reshape") {
      support->preferred_layout = TSR_LAYOUT_NCHW;
      opencl::support::write_reason(
          support, "runs on NCHW buffers: the 4-D texture layout does not fit its operands");
    }
    // Rough: a launch (~10 us) plus output bytes at ~10 GB/s.
    support->cost_us = 10.0 + static_cast<double>(plugin::tensor_numel(view.output(0))) * 4.0 / 1e4;
  }

  // fp16 and fp16-acc32 both store activations in half-float images (CL_HALF_FLOAT, read and
  // written through read_imagef/write_imagef) and compute in float: that is fp16-acc32 exactly,
  // and what fp16 means on devices without cl_khr_fp16. Half arithmetic (read_imageh) where the
  // extension exists is not written yet.
  static std::string unsupported_precision(const std::string& precision) {
    if (precision != "fp32" && precision != "fp16" && precision != "fp16-acc32") {
      return "precision '" + precision + "' is not implemented (fp32, fp16, fp16-acc32)";
    }
    return "";
  }

  // The texture conv kernels apply no activation of a following node.
  static bool fuses_after_conv(std::string_view op_type) {
    (void)op_type;
    return false;
  }

  static std::string check_option(const std::string& name, const std::string& value) {
    if (name.rfind(kKnobOptionPrefix, 0) == 0) return check_knob_option(name, value);
    return "unknown option '" + name + "'; the adreno plugin takes 'knob.<name>' options " +
           "(e.g. knob.opw: 2) that force a knob of every schedule that has it";
  }

  static opencl::LoweringOptions lowering_options(const plugin::CompileOptions& options) {
    opencl::LoweringOptions out;
    out.activation = opencl::Storage::kImage;
    out.half_images = options.precision != "fp32";
    // create() accepted every one of them (check_option).
    for (const auto& [name, value] : options.target_options) {
      out.forced_knobs.emplace_back(name.substr(std::string(kKnobOptionPrefix).size()),
                                    opencl::support::option_int(name, value));
    }
    return out;
  }
};

}  // namespace
}  // namespace tessera::adreno

TESSERA_DEFINE_PLUGIN(tessera::opencl::support::OpenClPlugin<tessera::adreno::Traits>, "adreno",
                      "0.1.0",
                      "OpenCL image2d (texture) kernels in an NCHW4c texel layout for Qualcomm "
                      "Adreno GPUs ('adreno:any' for any OpenCL device with images)")
