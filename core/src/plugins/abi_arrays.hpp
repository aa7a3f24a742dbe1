// Arrays of boundary structs on core's side (plugin_abi.h, "Arrays of structs", ABI 2.3): the
// element size core lays each struct out at for a plugin of a given minor, storage for an array
// laid out at such a stride, and strided reads of a plugin's own arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "tessera/plugin_abi.h"

namespace tessera::detail {

// Bytes per element of each array of structs that crosses the boundary.
struct ElementSizes {
  uint32_t tensor = 0;
  uint32_t attribute = 0;
  uint32_t node = 0;
  uint32_t node_config = 0;
  uint32_t knob = 0;
  uint32_t target_option = 0;
  uint32_t io = 0;
  uint32_t device_info = 0;
  uint32_t support = 0;
  uint32_t schedule = 0;    // tsr_schedule_desc
  uint32_t knob_space = 0;  // tsr_knob_space
};

// Core's own sizes: sizeof of each struct as this core was built.
ElementSizes core_element_sizes();

// The sizes of ABI 2.2: what a stride of 0, or one a peer of 2.2 or before does not send, means.
ElementSizes v2_2_element_sizes();

// The sizes core lays arrays out at for a plugin that declares ABI 2.`minor`: each struct's size
// in that minor, never above core's own (a plugin of a later minor reads core's smaller elements
// by their stride). A plugin of 2.2 or before gets exactly the 2.2 layout. The partitioner's
// query arrays and whole-graph region and the session's tsr_io arrays use core's own sizes, which
// are every minor's so far; a minor that grows tsr_support, tsr_io or a region struct passes these
// there too.
ElementSizes element_sizes_for_minor(uint32_t minor);

// The step of an array whose stride field says `declared` (0 = the element's ABI 2.2 size,
// `v2_2_size`). Throws tessera::Error naming `what` above TSR_MAX_STRIDE.
uint32_t array_stride(uint32_t declared, uint32_t v2_2_size, const char* what);

// Byte offset of element `i` at `stride`; throws tessera::Error on overflow.
size_t element_offset(size_t i, uint32_t stride);

// Element `i` of an array of T laid out `stride` bytes apart (the other side's memory): the
// fields that end within the stride, `defaults` for the rest; nothing past the element is read.
template <class T>
T read_element(const void* base, size_t i, uint32_t stride, T defaults = T{}) {
  static_assert(std::is_trivially_copyable_v<T>, "boundary structs are plain C");
  std::memcpy(&defaults, static_cast<const unsigned char*>(base) + element_offset(i, stride),
              stride < sizeof(T) ? stride : sizeof(T));
  return defaults;
}

// An array of boundary structs that core owns, `stride` bytes per element, zero-filled. Element
// i holds the first `stride` bytes of what put() stored (the fields a reader of that stride
// knows).
class StridedArray {
 public:
  StridedArray() = default;
  // Throws tessera::Error when count * stride overflows.
  StridedArray(size_t count, uint32_t stride);
  // `elements` laid out at `stride`.
  template <class T>
  static StridedArray of(const std::vector<T>& elements, uint32_t stride) {
    StridedArray a(elements.size(), stride);
    for (size_t i = 0; i < elements.size(); ++i) a.put(i, elements[i]);
    return a;
  }

  template <class T>
  void put(size_t i, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "boundary structs are plain C");
    std::memcpy(bytes() + element_offset(i, stride_), &value,
                stride_ < sizeof(T) ? stride_ : sizeof(T));
  }
  template <class T>
  T get(size_t i, T defaults = T{}) const {
    return read_element<T>(bytes(), i, stride_, defaults);
  }
  // nullptr when empty.
  template <class T>
  T* data() {
    return count_ == 0 ? nullptr : reinterpret_cast<T*>(bytes());
  }
  template <class T>
  const T* data() const {
    return count_ == 0 ? nullptr : reinterpret_cast<const T*>(bytes());
  }
  size_t size() const { return count_; }
  uint32_t stride() const { return stride_; }

 private:
  unsigned char* bytes() { return storage_.get(); }
  const unsigned char* bytes() const { return storage_.get(); }

  // Exactly count * stride bytes (so a sanitizer sees a write past the last element); new[] of
  // unsigned char is aligned for any struct that fits in it.
  std::unique_ptr<unsigned char[]> storage_;
  size_t count_ = 0;
  uint32_t stride_ = 0;
};

}  // namespace tessera::detail
