// Whether the machine has what the adreno plugin needs: some OpenCL device with image support.
#pragma once

#include "tessera_opencl/runtime.hpp"

namespace tessera::opencl_test {

inline bool any_image_device() {
  for (const auto& d : opencl::probe_devices().devices) {
    if (d.image_support) return true;
  }
  return false;
}

}  // namespace tessera::opencl_test
