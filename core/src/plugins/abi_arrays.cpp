// Element sizes per plugin minor and strided arrays (ABI 2.3).
#include "plugins/abi_arrays.hpp"

#include <algorithm>
#include <string>

#include "tessera/checked_math.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

ElementSizes core_element_sizes() {
  ElementSizes s;
  s.tensor = sizeof(tsr_tensor);
  s.attribute = sizeof(tsr_attribute);
  s.node = sizeof(tsr_node);
  s.node_config = sizeof(tsr_node_config);
  s.knob = sizeof(tsr_knob);
  s.target_option = sizeof(tsr_target_option);
  s.io = sizeof(tsr_io);
  s.device_info = sizeof(tsr_device_info);
  s.support = sizeof(tsr_support);
  s.schedule = sizeof(tsr_schedule_desc);
  s.knob_space = sizeof(tsr_knob_space);
  return s;
}

// Every minor from 2.0 to 2.3 lays arrays out at these (tsr_support gained fused_into in 2.2, but
// crosses in an array only through query_subgraph, itself new in 2.2). No element struct has
// grown since, so they are core's sizeof; a minor that grows one takes its 2.2 size from the 2.2
// definition the header keeps beside the new one.
ElementSizes v2_2_element_sizes() {
  return core_element_sizes();
}

namespace {

ElementSizes at_most(const ElementSizes& a, const ElementSizes& b) {
  ElementSizes s;
  s.tensor = std::min(a.tensor, b.tensor);
  s.attribute = std::min(a.attribute, b.attribute);
  s.node = std::min(a.node, b.node);
  s.node_config = std::min(a.node_config, b.node_config);
  s.knob = std::min(a.knob, b.knob);
  s.target_option = std::min(a.target_option, b.target_option);
  s.io = std::min(a.io, b.io);
  s.device_info = std::min(a.device_info, b.device_info);
  s.support = std::min(a.support, b.support);
  s.schedule = std::min(a.schedule, b.schedule);
  s.knob_space = std::min(a.knob_space, b.knob_space);
  return s;
}

}  // namespace

ElementSizes element_sizes_for_minor(uint32_t minor) {
  // One row per minor that changed an element struct, newest first; a plugin of a later minor
  // than this core gets core's own sizes.
  if (minor >= 3) return core_element_sizes();
  return at_most(v2_2_element_sizes(), core_element_sizes());
}

uint32_t array_stride(uint32_t declared, uint32_t v2_2_size, const char* what) {
  if (declared == 0) return v2_2_size;
  if (declared > TSR_MAX_STRIDE) {
    throw Error(std::string(what) + ": element size " + std::to_string(declared) +
                " is above TSR_MAX_STRIDE (" + std::to_string(TSR_MAX_STRIDE) + ")");
  }
  return declared;
}

size_t element_offset(size_t i, uint32_t stride) {
  int64_t bytes = 0;
  if (i > static_cast<size_t>(INT64_MAX) ||
      !try_mul(static_cast<int64_t>(i), static_cast<int64_t>(stride), bytes) ||
      static_cast<uint64_t>(bytes) > static_cast<uint64_t>(SIZE_MAX)) {
    throw Error("array element " + std::to_string(i) + " at stride " + std::to_string(stride) +
                " is out of range");
  }
  return static_cast<size_t>(bytes);
}

StridedArray::StridedArray(size_t count, uint32_t stride) : count_(count), stride_(stride) {
  storage_.reset(new unsigned char[element_offset(count, stride)]());
}

}  // namespace tessera::detail
