// Image limits, the texture layout's extents and owned images (tessera_opencl/image.hpp).
#include "tessera_opencl/image.hpp"

#include <algorithm>

namespace tessera::opencl {

ImageLimits image_limits(const DeviceInfo& device) {
  ImageLimits limits;
  if (!device.id || !device.image_support) return limits;
  size_t w = 0, h = 0;
  if (clGetDeviceInfo(device.id, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof(w), &w, nullptr) ==
          CL_SUCCESS &&
      clGetDeviceInfo(device.id, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof(h), &h, nullptr) ==
          CL_SUCCESS) {
    limits.max_width = static_cast<int64_t>(w);
    limits.max_height = static_cast<int64_t>(h);
  }
  return limits;
}

std::array<int64_t, 4> view4(const tsr_tensor& t) {
  std::array<int64_t, 4> d = {1, 1, 1, 1};
  for (int32_t i = 0; i < t.rank && i < 4; ++i) d[4 - t.rank + i] = t.dims[i];
  return d;
}

std::array<int64_t, 2> texture_extent(const tsr_tensor& t) {
  const auto d = view4(t);
  return {d[3] * ((d[1] + 3) / 4), d[0] * d[2]};
}

std::string check_extent(const std::string& what, int64_t width, int64_t height,
                         const ImageLimits& limits) {
  if (width > limits.max_width) {
    return what + " needs a " + std::to_string(width) + "-wide image, device max " +
           std::to_string(limits.max_width);
  }
  if (height > limits.max_height) {
    return what + " needs a " + std::to_string(height) + "-high image, device max " +
           std::to_string(limits.max_height);
  }
  return "";
}

std::string check_fits_image(const tsr_tensor& t, const ImageLimits& limits, bool rank4_only) {
  if (t.rank > 4 || (rank4_only && t.rank != 4))
    return "tensor has rank " + std::to_string(t.rank) + ", the texture layout is 4-D";
  const auto e = texture_extent(t);
  return check_extent(std::string("tensor '") + (t.name ? t.name : "?") + "'", e[0], e[1], limits);
}

Image::Image(const Context& context, int64_t width, int64_t height, bool half, const float* rgba) {
  cl_image_format format{CL_RGBA, static_cast<cl_channel_type>(half ? CL_HALF_FLOAT : CL_FLOAT)};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = static_cast<size_t>(std::max<int64_t>(1, width));
  desc.image_height = static_cast<size_t>(std::max<int64_t>(1, height));
  cl_int err = CL_SUCCESS;
  const bool copy = rgba && width > 0 && height > 0;
  mem_ = clCreateImage(context.get(), CL_MEM_READ_WRITE | (copy ? CL_MEM_COPY_HOST_PTR : 0),
                       &format, &desc, copy ? const_cast<float*>(rgba) : nullptr, &err);
  check(err,
        "clCreateImage " + std::to_string(width) + "x" + std::to_string(height) +
            (half ? " CL_HALF_FLOAT" : " CL_FLOAT"),
        context.device().describe());
}

Image::~Image() {
  if (mem_) clReleaseMemObject(mem_);
}

}  // namespace tessera::opencl
