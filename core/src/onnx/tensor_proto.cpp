// TensorProto decoding for the ONNX importer: typed fields, raw_data and external data files.
#include "onnx/tensor_proto.hpp"

#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

#include "tessera/error.hpp"
#include "tessera/file_util.hpp"

namespace tessera::importer {
namespace fs = std::filesystem;

std::string onnx_elem_type_name(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  }
  // Added by ONNX releases newer than the onnx.proto we link.
  switch (elem_type) {
    case 17:
      return "FLOAT8E4M3FN";
    case 18:
      return "FLOAT8E4M3FNUZ";
    case 19:
      return "FLOAT8E5M2";
    case 20:
      return "FLOAT8E5M2FNUZ";
    case 21:
      return "UINT4";
    case 22:
      return "INT4";
    case 23:
      return "FLOAT4E2M1";
  }
  return "type " + std::to_string(elem_type);
}

DType dtype_from_onnx(int32_t elem_type, const std::string& context) {
  if (!dtype_is_known(elem_type)) {
    throw UnsupportedError(context + ": element type " + onnx_elem_type_name(elem_type) +
                           " is not supported (supported: float32, float16, int64, int32, int8, "
                           "uint8, bool)");
  }
  return static_cast<DType>(elem_type);
}

namespace {

// Parses a non-negative decimal integer as written in external_data values.
int64_t parse_size(const std::string& text, const std::string& key, const TensorOrigin& origin) {
  bool ok = !text.empty() && text.size() <= 18;
  for (char c : text) ok = ok && c >= '0' && c <= '9';
  if (!ok) {
    throw Error(origin.model + ": " + origin.what + ": external_data '" + key + "' is '" + text +
                "', expected a non-negative integer");
  }
  return std::stoll(text);
}

// Resolves `location` inside origin.base_dir and refuses anything that leaves it, including
// through symlinks (the check is done on the canonical path).
fs::path resolve_external_path(const std::string& location, const TensorOrigin& origin) {
  const std::string prefix =
      origin.model + ": " + origin.what + ": external data file '" + location + "'";
  if (origin.base_dir.empty()) {
    throw Error(prefix +
                " cannot be used: the model was loaded from memory, so there is no "
                "directory to resolve it against; load it from a file instead");
  }
  if (location.empty()) throw Error(prefix + ": the 'location' key is empty");
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) {
    throw Error(prefix +
                " is an absolute path; external data must be a relative path inside "
                "the model's directory");
  }
  std::error_code ec;
  const fs::path base = fs::canonical(origin.base_dir, ec);
  if (ec) throw Error(prefix + ": cannot resolve the model directory: " + ec.message());
  const fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec) throw Error(prefix + ": cannot resolve path: " + ec.message());
  // Compare path components, not strings, so "/models/a" does not accept "/models/ab/x".
  auto b = base.begin();
  auto f = full.begin();
  for (; b != base.end(); ++b, ++f) {
    if (f == full.end() || *b != *f) {
      throw Error(prefix + " resolves to '" + full.string() + "', outside the model's directory '" +
                  base.string() + "'; external data must stay inside the model's directory");
    }
  }
  if (f == full.end()) throw Error(prefix + " names the model directory itself");
  return full;
}

struct ExternalRange {
  fs::path path;
  std::string location;
  int64_t offset = 0;
};

// Checks the external_data keys and that the file holds exactly `nbytes` at the offset.
ExternalRange locate_external(const onnx::TensorProto& proto, const TensorOrigin& origin,
                              int64_t nbytes) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  bool have_location = false;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      have_location = true;
    } else if (entry.key() == "offset") {
      offset = parse_size(entry.value(), "offset", origin);
    } else if (entry.key() == "length") {
      length = parse_size(entry.value(), "length", origin);
    }
    // "checksum" and unknown keys are informational.
  }
  if (!have_location) {
    throw Error(origin.model + ": " + origin.what +
                ": data_location is EXTERNAL but external_data has no 'location' key");
  }
  if (const size_t nul = location.find('\0'); nul != std::string::npos) {
    // The file system would read the name only up to the NUL, opening another file than the
    // one named.
    throw Error(origin.model + ": " + origin.what + ": external data location '" +
                escaped(location) + "' holds a NUL byte at offset " + std::to_string(nul) +
                "; a file name cannot contain one");
  }
  const fs::path path = resolve_external_path(location, origin);
  const std::string prefix =
      origin.model + ": " + origin.what + ": external data file '" + location + "'";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw Error(prefix + " does not exist or is not a file");
  const auto file_size = static_cast<int64_t>(fs::file_size(path, ec));
  if (ec) throw Error(prefix + ": cannot read its size: " + ec.message());
  if (length < 0) length = file_size - offset;
  if (length != nbytes) {
    throw Error(prefix + ": holds " + std::to_string(length) + " bytes for the tensor but dims " +
                "need " + std::to_string(nbytes));
  }
  if (offset > file_size || length > file_size - offset) {
    throw Error(prefix + ": offset " + std::to_string(offset) + " + length " +
                std::to_string(length) + " is past the end of the file (" +
                std::to_string(file_size) + " bytes)");
  }
  return ExternalRange{path, location, offset};
}

void read_external(const ExternalRange& range, const TensorOrigin& origin, Tensor& tensor) {
  if (tensor.nbytes() == 0) return;
  const std::string what = origin.model + ": " + origin.what + ": external data file";
  const InputFile in(range.path.string(), what.c_str(), std::numeric_limits<int64_t>::max());
  if (in.read_at(range.offset, tensor.raw(), tensor.nbytes()) != tensor.nbytes()) {
    throw Error(what + " '" + range.location + "': read failed (the file is shorter than " +
                "offset + length)");
  }
}

template <typename Dst, typename Field>
void copy_field(const Field& field, Tensor& tensor) {
  Dst* out = static_cast<Dst*>(tensor.raw());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const TensorOrigin& origin) {
  const std::string where = origin.model + ": " + origin.what;
  if (proto.has_segment()) throw UnsupportedError(where + ": segmented tensors are not supported");
  const DType dtype = dtype_from_onnx(proto.data_type(), where);
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape) {
    if (d < 0) {
      throw Error(where + ": dims " + shape_str(shape) + " contain a negative dimension");
    }
  }
  int64_t numel = 0;
  int64_t nbytes = 0;
  try {
    numel = shape_numel(shape);
    nbytes = shape_nbytes(shape, dtype);
  } catch (const Error& e) {
    throw Error(where + ": dims " + e.what());
  }
  // Before any allocation: an initializer claiming more than the limit is refused by name.
  check_memory_limit(nbytes, where + " (" + dtype_name(dtype) + " " + shape_str(shape) + ")");
  const std::string need = "dims " + shape_str(shape) + " of " + dtype_name(dtype) + " need " +
                           std::to_string(nbytes) + " bytes";

  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    const ExternalRange range = locate_external(proto, origin, nbytes);
    Tensor tensor(dtype, shape);
    read_external(range, origin, tensor);
    return tensor;
  }

  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (static_cast<int64_t>(raw.size()) != nbytes) {
      throw Error(where + ": raw_data holds " + std::to_string(raw.size()) + " bytes but " + need);
    }
    Tensor tensor(dtype, shape);
    if (nbytes > 0) std::memcpy(tensor.raw(), raw.data(), raw.size());
    return tensor;
  }

  // Typed fields: float_data for FLOAT, int64_data for INT64, int32_data for the 32-bit-or-smaller
  // integer types, bool and float16 (bits), as the ONNX spec stores them.
  int64_t count = 0;
  switch (dtype) {
    case DType::kFloat32:
      count = proto.float_data_size();
      break;
    case DType::kInt64:
      count = proto.int64_data_size();
      break;
    default:
      count = proto.int32_data_size();
      break;
  }
  if (count != numel) {
    throw Error(where + ": holds " + std::to_string(count) + " elements but dims " +
                shape_str(shape) + " need " + std::to_string(numel) +
                (count == 0 ? " (the tensor has no data)" : ""));
  }
  Tensor tensor(dtype, shape);
  switch (dtype) {
    case DType::kFloat32:
      copy_field<float>(proto.float_data(), tensor);
      break;
    case DType::kInt64:
      copy_field<int64_t>(proto.int64_data(), tensor);
      break;
    case DType::kInt32:
      copy_field<int32_t>(proto.int32_data(), tensor);
      break;
    case DType::kInt8:
      copy_field<int8_t>(proto.int32_data(), tensor);
      break;
    case DType::kUInt8:
      copy_field<uint8_t>(proto.int32_data(), tensor);
      break;
    case DType::kFloat16:
      copy_field<uint16_t>(proto.int32_data(), tensor);
      break;
    case DType::kBool: {
      bool* out = static_cast<bool*>(tensor.raw());
      for (int i = 0; i < proto.int32_data_size(); ++i) out[i] = proto.int32_data(i) != 0;
      break;
    }
    case DType::kUndefined:
      break;
  }
  return tensor;
}

}  // namespace tessera::importer
