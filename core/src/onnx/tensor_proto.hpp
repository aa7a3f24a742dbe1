// Internal to the ONNX importer: TensorProto -> Tensor (raw, typed and external data) and ONNX
// element-type names for messages.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include "tessera/tensor.hpp"

namespace tessera::importer {

// Where a tensor came from, for messages and for resolving external data.
struct TensorOrigin {
  std::string model;     // "model.onnx" (prefix of every message)
  std::string what;      // "initializer 'conv1.weight'"
  std::string base_dir;  // directory external data must stay inside; "" forbids external data
};

// "FLOAT", "DOUBLE", ... as ONNX spells TensorProto.DataType, or "type 17" for values newer than
// the linked onnx.proto.
std::string onnx_elem_type_name(int32_t elem_type);

// Maps an ONNX element type to a DType; throws UnsupportedError("<context>: element type X ...").
DType dtype_from_onnx(int32_t elem_type, const std::string& context);

// Converts one TensorProto. Validates dims (non-negative, no element-count overflow) and that the
// data present (raw_data, typed fields or external file range) holds exactly dims' elements
// before allocating anything, so a hostile file cannot make it allocate what it does not hold.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const TensorOrigin& origin);

}  // namespace tessera::importer
