// The image2d storage of the OpenCL lowering: the texture layout of a rank <= 4 float tensor
// (width = W * ceil(C / 4), height = N * H, RGBA texels of 4 channels, CL_FLOAT or CL_HALF_FLOAT),
// the device's image limits, and an owned cl_mem image.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tessera/plugin_abi.h"
#include "tessera_opencl/runtime.hpp"

namespace tessera::opencl {

// The device's image2d limits (CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT); 0 when no image support.
struct ImageLimits {
  int64_t max_width = 0;
  int64_t max_height = 0;
};
ImageLimits image_limits(const DeviceInfo& device);

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
  Image(const Context& context, int64_t width, int64_t height, bool half,
        const float* rgba = nullptr);
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;
  cl_mem get() const { return mem_; }

 private:
  cl_mem mem_ = nullptr;
};

}  // namespace tessera::opencl
