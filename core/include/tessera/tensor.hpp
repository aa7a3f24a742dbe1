// Host tensors: element types, shapes and a reference-counted byte buffer.
//
// A Tensor is a cheap handle: copies share storage (like a numpy view of the whole array).
// Use clone() for a deep copy. Storage is always contiguous, row-major.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/checked_math.hpp"
#include "tessera/error.hpp"

namespace tessera {

// Values match ONNX TensorProto.DataType so import is a cast, not a table.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
};

// Size of one element in bytes; 0 for kUndefined.
size_t dtype_size(DType dtype);
// "float32", "int64", ... as numpy spells them.
const char* dtype_name(DType dtype);
// True for the ONNX element types Tessera can hold (the enum above).
bool dtype_is_known(int32_t onnx_elem_type);

using Shape = std::vector<int64_t>;

// Number of elements; throws on negative dims or int64 overflow.
int64_t shape_numel(const Shape& shape);
// Bytes of a tensor of `dtype` and `shape`; throws naming both when the count or the byte size
// overflows int64 (2^62 float32 elements fit as a count but not as bytes).
int64_t shape_nbytes(const Shape& shape, DType dtype);
// "[1, 3, 224, 224]".
std::string shape_str(const Shape& shape);
// Row-major strides in elements; throws on overflow (a zero dim can hide huge inner strides).
std::vector<int64_t> shape_strides(const Shape& shape);

// The most bytes Tessera lets one model's tensors take: one tensor, and everything a session
// plans (constants plus buffers), is refused above it with the value's name and size before
// anything is allocated. Defaults to the machine's physical memory; process-wide.
int64_t memory_limit();
// bytes <= 0 restores the default (physical memory).
void set_memory_limit(int64_t bytes);
// Throws tessera::Error "<what> needs N bytes, more than the memory limit of M bytes ..." when
// bytes > memory_limit().
void check_memory_limit(int64_t bytes, const std::string& what);

// IEEE 754 binary16 conversions (round to nearest even).
uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
// float16 elements are accessed as their raw bits.
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};

class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-filled storage for shape_numel(shape) elements. Throws tessera::Error when the
  // byte size overflows or exceeds memory_limit(), never allocating then.
  Tensor(DType dtype, Shape shape);
  // The same checks and allocation, storage left uninitialised: for a tensor the caller writes in
  // full at once (a session's outputs), where zero-filling would be a wasted pass over memory.
  struct Uninitialized {};
  Tensor(DType dtype, Shape shape, Uninitialized);
  // A tensor over storage it does not allocate: `storage` holds at least the tensor's bytes (the
  // caller checked that) and keeps what it points into alive, as an aliasing shared_ptr into a
  // mapped package does.
  static Tensor over(DType dtype, Shape shape, std::shared_ptr<std::byte[]> storage);

  // Copies `values` into a new tensor; values.size() must equal shape_numel(shape).
  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool empty() const { return dtype_ == DType::kUndefined; }

  void* raw() { return storage_.get(); }
  const void* raw() const { return storage_.get(); }

  // Typed access; throws if T does not match dtype() (float16 is read as uint16_t).
  template <typename T>
  T* data() {
    check_type(sizeof(T), DTypeOf<T>::value);
    return reinterpret_cast<T*>(storage_.get());
  }
  template <typename T>
  const T* data() const {
    check_type(sizeof(T), DTypeOf<T>::value);
    return reinterpret_cast<const T*>(storage_.get());
  }

  // Same storage, new shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // Deep copy.
  Tensor clone() const;
  // Element i converted to double / int64 (for attribute-like small tensors and tests).
  double scalar_as_double(int64_t i) const;
  int64_t scalar_as_int64(int64_t i) const;
  // All elements as int64 (int32/int64/uint8/int8/bool tensors); used for shape-like inputs.
  std::vector<int64_t> to_int64_vector() const;
  // All elements as float (float32/float16 tensors).
  std::vector<float> to_float_vector() const;

 private:
  void check_type(size_t elem_size, DType expected) const;

  DType dtype_ = DType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<std::byte[]> storage_;
};

template <typename T>
Tensor Tensor::from_vector(Shape shape, const std::vector<T>& values) {
  Tensor t(DTypeOf<T>::value, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel()) {
    throw Error("Tensor::from_vector: " + std::to_string(values.size()) + " values for shape " +
                shape_str(t.shape()));
  }
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace tessera
