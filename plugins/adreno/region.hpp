// The adreno plugin's compiled form of a tsr_region.
//
// Every rank-4 float activation lives in an image2d in the texture layout (kernels/common.cl):
// width = W * ceil(C / 4), height = N * H, RGBA texels of 4 channels (CL_FLOAT, or CL_HALF_FLOAT
// with precision "fp16": half storage, float arithmetic). Values that do not fit the layout (2-D
// Gemm operands, Flatten/Reshape results) and region inputs/outputs live in NCHW float buffers.
// Lowering converts lazily: a consumer asking for a value in the other storage gets a conversion
// kernel inserted right there, so conversions happen only at region boundaries and where an op
// needs a buffer.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schedules.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/plugin_support.hpp"
#include "tessera_opencl/runtime.hpp"

namespace tessera::adreno {

using opencl::support::NodeView;

// Embedded kernels/<name> source, or nullptr.
const char* kernel_source(const char* name);

// The device's image2d limits (CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT); 0 when no image support.
struct ImageLimits {
  int64_t max_width = 0;
  int64_t max_height = 0;
};
ImageLimits image_limits(const opencl::DeviceInfo& device);

// The 4-D (N, C, H, W) view of a tensor of rank <= 4: dims left-padded with 1s (element-wise ops
// of lower rank use it; every use of a value sees the same view, so the layout stays consistent).
std::array<int64_t, 4> view4(const tsr_tensor& t);
// Texture extent of the 4-D view: {W * ceil(C/4), N * H}.
std::array<int64_t, 2> texture_extent(const tsr_tensor& t);
// "" when `t` has rank <= 4 (exactly 4 with `rank4_only`) and fits the device's image2d limits,
// else the reason naming the tensor.
std::string check_fits_image(const tsr_tensor& t, const ImageLimits& limits,
                             bool rank4_only = true);
// Same for an image of the given extent (packed weights); `what` names it.
std::string check_extent(const std::string& what, int64_t width, int64_t height,
                         const ImageLimits& limits);

// A 2-D RGBA image owned by this object.
class Image {
 public:
  Image(const opencl::Context& context, int64_t width, int64_t height, bool half,
        const float* rgba = nullptr);
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;
  cl_mem get() const { return mem_; }

 private:
  cl_mem mem_ = nullptr;
};

// One kernel launch (shared: tessera_opencl/plugin_support.hpp).
using opencl::support::Step;

// execute() writes inputs, launches every step, reads outputs (shared CompiledSteps); the adreno
// part is the buffers and images the steps use.
class CompiledRegion : public opencl::support::CompiledSteps {
 public:
  std::vector<std::shared_ptr<opencl::Buffer>> buffers;
  std::vector<std::shared_ptr<Image>> images;
};

// Programs built once per context and option set from the adreno kernels.
class ProgramPool : public opencl::support::ProgramPool {
 public:
  ProgramPool() : opencl::support::ProgramPool("adreno", kernel_source) {}
};

class Lowering {
 public:
  Lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context, ProgramPool& pool,
           bool half_images);

  // Configs core asked for (tsr_compile_options.node_configs), by region node index.
  std::map<int32_t, opencl::support::RequestedConfig> requests;
  // Knob values the target's `knob.<name>` options force on every schedule that has the knob.
  ForcedKnobs forced_knobs;
  // default_config(schedule_id, device(), work_dim0, overrides) with forced_knobs applied.
  Config config_for(const std::string& schedule_id, int64_t work_dim0,
                    const std::vector<std::pair<const char*, int32_t>>& overrides = {}) const;
  // Each of `configs` with forced_knobs applied.
  std::vector<Config> forced(std::vector<Config> configs) const;
  // Set by compile_region when tsr_compile_options.dump_dir is given: kernel() then records
  // each program it hands out (with `current_node` as its user) for writing after the compile.
  bool record_sources = false;
  std::string current_node;
  opencl::support::KernelDump sources;

  const tsr_region& region() const { return region_; }
  const opencl::DeviceInfo& device() const { return context_->device(); }
  bool half_images() const { return half_; }

  // Value `id` as a texture-layout image to read; converts from its buffer when needed (node
  // `node` is charged for the conversion).
  cl_mem input_image(int32_t id, int32_t node);
  // A new image for value `id`, produced by node `node`.
  cl_mem output_image(int32_t id, int32_t node);
  // Value `id` as an NCHW float buffer to read (constants uploaded, images converted).
  cl_mem input_buffer(int32_t id, int32_t node);
  cl_mem output_buffer(int32_t id, int32_t node);
  // Value `out` shares the buffer of value `in` (Flatten, Reshape).
  void alias_buffer(int32_t out, int32_t in, int32_t node);
  // A constant image of `width` x `height` RGBA texels, or a constant float buffer.
  cl_mem constant_image(int64_t width, int64_t height, const std::vector<float>& rgba);
  cl_mem constant_buffer(const std::vector<float>& values);

  opencl::Kernel kernel(const Config& config);
  // 1-3 D launch with the config's wg_x (and wg_y); clamped to the kernel's own limit.
  void add_step(int32_t node, opencl::Kernel kernel, std::vector<size_t> global,
                const Config& config);
  // The same with a work-group the op computed itself (`local`; clamped the same way).
  void add_step(int32_t node, opencl::Kernel kernel, std::vector<size_t> global,
                std::vector<size_t> local, const Config& config);

  std::unique_ptr<CompiledRegion> finish();

 private:
  const tsr_region& region_;
  std::shared_ptr<opencl::Context> context_;
  ProgramPool& pool_;
  bool half_;
  std::map<int32_t, std::shared_ptr<opencl::Buffer>> buffers_;
  std::map<int32_t, std::shared_ptr<Image>> images_;
  std::map<int32_t, int32_t> producers_;  // value id -> node that wrote it (profiling of exports)
  std::unique_ptr<CompiledRegion> compiled_;
};

}  // namespace tessera::adreno
