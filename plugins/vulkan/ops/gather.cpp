// Gather along one axis with constant integer indices (shaders/gather.comp for float32,
// gather_raw.comp moving raw elements of the other dtypes kept on the device); indices are
// checked and made non-negative at compile time.
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string f = check_movable(node);
  if (!f.empty()) return f;
  const tsr_tensor* idx = node.input(1);
  if (idx == nullptr || idx->data == nullptr) return "indices must be a constant";
  if (idx->dtype != TSR_DTYPE_INT64 && idx->dtype != TSR_DTYPE_INT32) return "integer indices";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += x.rank;
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < x.rank; ++i) {
    if (i < axis) outer *= x.dims[i];
    if (i > axis) inner *= x.dims[i];
  }
  const int64_t dim = x.dims[axis];
  std::vector<int32_t> indices;
  for (int64_t v : constant_ints(node, 1, {})) {
    if (v < -dim || v >= dim) {
      throw plugin::Failure(TSR_INVALID_ARGUMENT, node.describe() + ": index " + std::to_string(v) +
                                                      " is outside [-" + std::to_string(dim) +
                                                      ", " + std::to_string(dim) + ")");
    }
    indices.push_back(static_cast<int32_t>(v < 0 ? v + dim : v));
  }
  const int64_t count = static_cast<int64_t>(indices.size());
  if (indices.empty()) indices.push_back(0);
  const bool raw = x.dtype != TSR_DTYPE_FLOAT32;
  Kernel k = linear_kernel(raw ? "gather_raw" : "gather", outer * count * inner, 64,
                           {narrow(outer, node, "outer size"), narrow(dim, node, "axis size"),
                            narrow(count, node, "index count"), narrow(inner, node, "inner size")});
  if (raw) k.constants.push_back(static_cast<int32_t>(element_bytes(x.dtype)));
  lowering.dispatch(node, k,
                    {&lowering.buffer(node.input_index(0)),
                     &lowering.constant(indices.data(), indices.size() * sizeof(int32_t))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace

TESSERA_VULKAN_OP(Gather, check, lower);

}  // namespace tessera::vulkan
