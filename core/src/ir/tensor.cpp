// Tensor storage, dtype tables and half-precision conversion.
#include "tessera/tensor.hpp"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <new>

namespace tessera {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kFloat16: return 2;
    case DType::kUndefined: return 0;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kUndefined: return "undefined";
  }
  return "undefined";
}

bool dtype_is_known(int32_t onnx_elem_type) {
  switch (static_cast<DType>(onnx_elem_type)) {
    case DType::kFloat32:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kFloat16: return true;
    case DType::kUndefined: return false;
  }
  return false;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("shape " + shape_str(shape) + " has a negative dimension");
    if (!try_mul(n, d, n))
      throw Error("shape " + shape_str(shape) + " overflows int64 element count");
  }
  return n;
}

int64_t shape_nbytes(const Shape& shape, DType dtype) {
  int64_t bytes = 0;
  if (!try_mul(shape_numel(shape), static_cast<int64_t>(dtype_size(dtype)), bytes)) {
    throw Error("shape " + shape_str(shape) + " of " + dtype_name(dtype) +
                " overflows int64 byte size");
  }
  return bytes;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> shape_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) {
    if (shape[i] < 0 || !try_mul(strides[i], shape[i], strides[i - 1])) {
      throw Error("shape " + shape_str(shape) +
                  " has a negative dimension or overflows int64 strides");
    }
  }
  return strides;
}

namespace {

int64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  int64_t bytes = 0;
  if (pages <= 0 || page <= 0 ||
      !try_mul(static_cast<int64_t>(pages), static_cast<int64_t>(page), bytes)) {
    return std::numeric_limits<int64_t>::max();  // unknown: only overflow checks apply
  }
  return bytes;
}

// 0 = not set: physical memory.
std::atomic<int64_t> g_memory_limit{0};

}  // namespace

int64_t memory_limit() {
  const int64_t set = g_memory_limit.load(std::memory_order_relaxed);
  if (set > 0) return set;
  static const int64_t physical = physical_memory_bytes();
  return physical;
}

void set_memory_limit(int64_t bytes) {
  g_memory_limit.store(bytes > 0 ? bytes : 0, std::memory_order_relaxed);
}

void check_memory_limit(int64_t bytes, const std::string& what) {
  const int64_t limit = memory_limit();
  if (bytes > limit) {
    const bool is_default = g_memory_limit.load(std::memory_order_relaxed) == 0;
    throw Error(what + " needs " + bytes_str(bytes) + ", more than the memory limit of " +
                bytes_str(limit) + (is_default ? " (physical memory)" : "") +
                "; nothing was allocated (raise the limit with `set_memory_limit`)");
  }
}

uint16_t float_to_half(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xffu) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exponent: ok
  return static_cast<uint16_t>(half);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

Tensor::Tensor(DType dtype, Shape shape) : Tensor(dtype, std::move(shape), Uninitialized{}) {
  std::memset(storage_.get(), 0, nbytes() == 0 ? 1 : nbytes());
}

Tensor::Tensor(DType dtype, Shape shape, Uninitialized)
    : dtype_(dtype), shape_(std::move(shape)) {
  if (dtype_size(dtype_) == 0) throw Error("Tensor: undefined dtype");
  numel_ = shape_numel(shape_);
  const int64_t bytes = shape_nbytes(shape_, dtype_);
  if (bytes > memory_limit()) {  // the message is built only when it is needed
    check_memory_limit(bytes,
                       std::string("tensor ") + dtype_name(dtype_) + " " + shape_str(shape_));
  }
  if (static_cast<uint64_t>(bytes) > std::numeric_limits<size_t>::max() / 2) {
    throw Error("tensor " + std::string(dtype_name(dtype_)) + " " + shape_str(shape_) +
                " is larger than this machine's address space");
  }
  // Never a null pointer, so data() of an empty tensor is still valid to pass around.
  try {
    storage_ =
        std::shared_ptr<std::byte[]>(new std::byte[bytes == 0 ? 1 : static_cast<size_t>(bytes)]);
  } catch (const std::bad_alloc&) {
    throw Error("tensor " + std::string(dtype_name(dtype_)) + " " + shape_str(shape_) +
                ": cannot allocate " + bytes_str(bytes) + " (out of memory)");
  }
}

Tensor Tensor::over(DType dtype, Shape shape, std::shared_ptr<std::byte[]> storage) {
  if (dtype_size(dtype) == 0) throw Error("Tensor: undefined dtype");
  if (!storage) throw Error("Tensor::over: no storage");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  shape_nbytes(t.shape_, dtype);  // throws on overflow
  t.storage_ = std::move(storage);
  return t;
}

void Tensor::check_type(size_t elem_size, DType expected) const {
  if (dtype_ != expected || dtype_size(dtype_) != elem_size) {
    throw Error(std::string("tensor of dtype ") + dtype_name(dtype_) + " accessed as " +
                dtype_name(expected));
  }
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel_) {
    throw Error("cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  if (empty()) return Tensor();
  Tensor t(dtype_, shape_);
  std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

double Tensor::scalar_as_double(int64_t i) const {
  if (i < 0 || i >= numel_) throw Error("tensor element index out of range");
  switch (dtype_) {
    case DType::kFloat32: return data<float>()[i];
    case DType::kFloat16: return half_to_float(data<uint16_t>()[i]);
    case DType::kUInt8: return data<uint8_t>()[i];
    case DType::kInt8: return data<int8_t>()[i];
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(data<int64_t>()[i]);
    case DType::kBool: return data<bool>()[i] ? 1.0 : 0.0;
    case DType::kUndefined: break;
  }
  throw Error("scalar_as_double on an undefined tensor");
}

int64_t Tensor::scalar_as_int64(int64_t i) const {
  if (i < 0 || i >= numel_) throw Error("tensor element index out of range");
  switch (dtype_) {
    case DType::kInt64: return data<int64_t>()[i];
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kUInt8: return data<uint8_t>()[i];
    case DType::kInt8: return data<int8_t>()[i];
    case DType::kBool: return data<bool>()[i] ? 1 : 0;
    case DType::kFloat32:
    case DType::kFloat16: return static_cast<int64_t>(scalar_as_double(i));
    case DType::kUndefined: break;
  }
  throw Error("scalar_as_int64 on an undefined tensor");
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = scalar_as_int64(i);
  return out;
}

std::vector<float> Tensor::to_float_vector() const {
  std::vector<float> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) {
    out[static_cast<size_t>(i)] = static_cast<float>(scalar_as_double(i));
  }
  return out;
}

}  // namespace tessera
