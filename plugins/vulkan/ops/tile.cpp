// Tile as a strided copy: each output axis of size r * d (r = its repeats, read from the shapes)
// is walked as two axes (r, d) reading input strides (0, s); axes of size 1 are dropped and
// neighbours that walk both buffers contiguously merged (any dtype kept on the device). shaders/copy_strided.comp walks 6 axes:
// the axes before the last 6 are walked here, one dispatch per index (at most kMaxDispatches).
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

constexpr int64_t kMaxDispatches = 64;

struct Walk {
  std::vector<int64_t> dims, src, dst;
};

Walk walk(const NodeView& node) {
  const std::vector<int64_t> in = shape_of(*node.input(0));
  const std::vector<int64_t> out = shape_of(*node.output(0));
  const std::vector<int64_t> in_strides = dense_strides(in);
  const std::vector<int64_t> out_strides = dense_strides(out);
  Walk w;
  auto add = [&w](int64_t dim, int64_t src, int64_t dst) {
    if (dim == 1) return;
    if (!w.dims.empty() && w.src.back() == src * dim && w.dst.back() == dst * dim) {
      w.dims.back() *= dim;
      w.src.back() = src;
      w.dst.back() = dst;
      return;
    }
    w.dims.push_back(dim);
    w.src.push_back(src);
    w.dst.push_back(dst);
  };
  for (size_t i = 0; i < out.size(); ++i) {
    add(out[i] / in[i], 0, in[i] * out_strides[i]);
    add(in[i], in_strides[i], out_strides[i]);
  }
  return w;
}

std::string check(const NodeView& node) {
  const std::string f = check_movable(node);
  if (!f.empty()) return f;
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& y = *node.output(0);
  if (x.rank != y.rank) return "input and output ranks differ";
  for (int32_t i = 0; i < x.rank; ++i) {
    if (x.dims[i] <= 0 || y.dims[i] % x.dims[i] != 0) return "an empty or uneven axis";
  }
  const Walk w = walk(node);
  int64_t dispatches = 1;
  for (size_t i = 0; i + 6 < w.dims.size(); ++i) dispatches *= w.dims[i];
  if (dispatches > kMaxDispatches) return "more than 6 axes to walk after merging";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const Walk w = walk(node);
  const size_t lead = w.dims.size() > 6 ? w.dims.size() - 6 : 0;
  int64_t dispatches = 1;
  for (size_t i = 0; i < lead; ++i) dispatches *= w.dims[i];
  auto tail = [lead](const std::vector<int64_t>& v) {
    return std::vector<int64_t>(v.begin() + static_cast<std::ptrdiff_t>(lead), v.end());
  };
  for (int64_t d = 0; d < dispatches; ++d) {
    int64_t src = 0, dst = 0;
    for (size_t i = lead, r = static_cast<size_t>(d); i-- > 0; r /= w.dims[i]) {
      src += static_cast<int64_t>(r % w.dims[i]) * w.src[i];
      dst += static_cast<int64_t>(r % w.dims[i]) * w.dst[i];
    }
    strided_copy(lowering, node, lowering.buffer(node.input_index(0)),
                 lowering.buffer(node.output_index(0)), tail(w.dims), tail(w.src), src, tail(w.dst),
                 dst);
  }
}

}  // namespace

TESSERA_VULKAN_OP(Tile, check, lower);

}  // namespace tessera::vulkan
