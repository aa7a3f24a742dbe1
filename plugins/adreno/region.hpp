// The adreno plugin's part of the OpenCL lowering (tessera_opencl/lowering.hpp): its kernels and
// its flavor (schedules, default knob values).
//
// Every rank-4 float activation lives in an image2d in the texture layout
// (tessera_opencl/image.hpp; CL_FLOAT, or CL_HALF_FLOAT with precision "fp16": half storage,
// float arithmetic). Values that do not fit the layout (2-D Gemm operands, Flatten/Reshape
// results) and region inputs/outputs live in NCHW float buffers. The lowering converts lazily: a
// consumer asking for a value in the other storage gets a conversion kernel inserted right there,
// so conversions happen only at region boundaries and where an op needs a buffer.
#pragma once

#include "schedules.hpp"
#include "tessera_opencl/image.hpp"
#include "tessera_opencl/lowering.hpp"

namespace tessera::adreno {

using opencl::check_extent;
using opencl::check_fits_image;
using opencl::Device;
using opencl::Image;
using opencl::image_limits;
using opencl::ImageLimits;
using opencl::Lowering;
using opencl::NodeView;
using opencl::texture_extent;
using opencl::view4;

// Embedded kernels/<name> source, or nullptr.
const char* kernel_source(const char* name);

// Programs built once per context and option set from the adreno kernels.
class ProgramPool : public opencl::support::ProgramPool {
 public:
  ProgramPool() : opencl::support::ProgramPool("adreno", kernel_source) {}
};

// The adreno flavor: its name, schedules and default knob values.
const opencl::Flavor& flavor();

}  // namespace tessera::adreno
