// Gather along one axis. Constant indices (shaders/gather.comp for float32, gather_raw.comp
// moving raw elements of the other dtypes kept on the device) are checked and made non-negative
// at compile time; indices computed at run time (token ids, an ArgMax) are read by
// gather_indexed.comp, which sets a check flag for one out of range so the run fails naming the
// node, as core's Gather does.
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string f = check_movable(node);
  if (!f.empty()) return f;
  const tsr_tensor* idx = node.input(1);
  if (idx == nullptr) return "needs indices";
  if (idx->dtype != TSR_DTYPE_INT64 && idx->dtype != TSR_DTYPE_INT32) return "integer indices";
  const tsr_tensor& x = *node.input(0);
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += x.rank;
  if (axis < 0 || axis >= x.rank) return "axis outside the input's rank";
  return "";
}

// The input read as [outer, dim, inner] around the gathered axis.
struct Rows {
  int64_t outer = 1, dim = 1, inner = 1, axis = 0;
};

Rows rows_of(const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  Rows g;
  g.axis = node.attr_int("axis", 0);
  if (g.axis < 0) g.axis += x.rank;
  for (int32_t i = 0; i < x.rank; ++i) {
    if (i < g.axis) g.outer *= x.dims[i];
    if (i > g.axis) g.inner *= x.dims[i];
  }
  g.dim = x.dims[g.axis];
  return g;
}

void lower_runtime(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const Rows g = rows_of(node);
  const int64_t count = plugin::tensor_numel(*node.input(1));
  const std::string dim = std::to_string(g.dim);
  const Buffer& flag = lowering.check_flag(node, "an index is outside [-" + dim + ", " + dim +
                                                     ") (axis " + std::to_string(g.axis) +
                                                     " of input 0 has " + dim + " entries)");
  // Element bytes as stored: a float32 of a half region is 2.
  const bool half = lowering.type_code(x) == static_cast<int32_t>(TypeCode::kF16);
  Kernel k = linear_kernel("gather_indexed", g.outer * count * g.inner, 64,
                           {narrow(g.outer, node, "outer size"), narrow(g.dim, node, "axis size"),
                            narrow(count, node, "index count"), narrow(g.inner, node, "inner size"),
                            half ? 2 : static_cast<int32_t>(element_bytes(x.dtype)),
                            node.input(1)->dtype == TSR_DTYPE_INT64 ? 1 : 0});
  lowering.dispatch(
      node, k,
      {&lowering.buffer(node.input_index(0)), &lowering.buffer(node.input_index(1)), &flag},
      {&lowering.buffer(node.output_index(0))});
}

void lower(Lowering& lowering, const NodeView& node) {
  if (node.input(1)->data == nullptr) {
    lower_runtime(lowering, node);
    return;
  }
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
