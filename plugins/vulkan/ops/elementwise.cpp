// Element-wise and strided-copy lowering shared by the op files.
#include "ops/elementwise.hpp"

#include "ops/typed.hpp"

namespace tessera::vulkan {

using plugin::Failure;

namespace {
constexpr size_t kMaxRank = 6;
}  // namespace

std::vector<int32_t> rank6(const std::vector<int64_t>& v, int64_t fill, const NodeView& node) {
  std::vector<int32_t> out(kMaxRank - v.size(), static_cast<int32_t>(fill));
  for (int64_t x : v) out.push_back(narrow(x, node, "a dimension or stride"));
  return out;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& out) {
  const std::vector<int64_t> dense = dense_strides(shape);
  std::vector<int64_t> s(out.size(), 0);
  const size_t shift = out.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) s[shift + i] = shape[i] == 1 ? 0 : dense[i];
  return s;
}

std::string check_binary(const NodeView& node) {
  // Integer operands take the int64 path (ops/typed.cpp); Pow and PRelu stay float-only.
  const tsr_tensor* y = node.output(0);
  if (y != nullptr && y->dtype != TSR_DTYPE_FLOAT32 && integer_binary_op(node) >= 0) {
    return check_integer_binary(node);
  }
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  if (node.num_inputs() != 2 || node.input(1) == nullptr) return "needs two inputs";
  if (node.input(1)->dtype != TSR_DTYPE_FLOAT32) return "input 1 is not float32";
  if (node.output(0)->rank > static_cast<int32_t>(kMaxRank)) return "rank above 6";
  return "";
}

void lower_binary(Lowering& lowering, const NodeView& node, BinaryOp op) {
  if (node.output(0)->dtype != TSR_DTYPE_FLOAT32) {
    lower_integer_binary(lowering, node);
    return;
  }
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  const std::vector<int64_t> sa = broadcast_strides(shape_of(*node.input(0)), out_shape);
  const std::vector<int64_t> sb = broadcast_strides(shape_of(*node.input(1)), out_shape);
  int32_t out = node.output_index(0);
  const Activation act =
      op == BinaryOp::kPRelu ? Activation{} : fuse_activation(lowering, node, out);
  std::vector<int32_t> c = {static_cast<int32_t>(op)};
  for (const auto& v : {rank6(out_shape, 1, node), rank6(sa, 0, node), rank6(sb, 0, node)}) {
    c.insert(c.end(), v.begin(), v.end());
  }
  c.insert(c.end(), {act.code, float_bits(act.a), float_bits(act.b)});
  const int64_t count = plugin::tensor_numel(*node.output(0));
  lowering.dispatch(node, linear_kernel("binary", count, 64, std::move(c)),
                    {&lowering.buffer(node.input_index(0)), &lowering.buffer(node.input_index(1))},
                    {&lowering.buffer(out)});
}

namespace {

// One dispatch of shaders/binary.comp: y = a OP b, a and b of the shapes given, broadcast to
// y's (node's output 0) shape, no activation.
void binary_step(Lowering& lowering, const NodeView& node, BinaryOp op, const Buffer& a,
                 const std::vector<int64_t>& a_shape, const Buffer& b,
                 const std::vector<int64_t>& b_shape, const Buffer& y) {
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  std::vector<int32_t> c = {static_cast<int32_t>(op)};
  for (const auto& v : {rank6(out_shape, 1, node),
                        rank6(broadcast_strides(a_shape, out_shape), 0, node),
                        rank6(broadcast_strides(b_shape, out_shape), 0, node)}) {
    c.insert(c.end(), v.begin(), v.end());
  }
  c.insert(c.end(), {0, 0, 0});
  const int64_t count = plugin::tensor_numel(*node.output(0));
  lowering.dispatch(node, linear_kernel("binary", count, 64, std::move(c)), {&a, &b}, {&y});
}

}  // namespace

std::string check_variadic(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  if (node.num_inputs() < 1) return "needs an input";
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (node.input(i) == nullptr) return "input " + std::to_string(i) + " is absent";
    if (node.input(i)->dtype != TSR_DTYPE_FLOAT32) {
      return "input " + std::to_string(i) + " is not float32";
    }
  }
  if (node.output(0)->rank > static_cast<int32_t>(kMaxRank)) return "rank above 6";
  return "";
}

void lower_variadic(Lowering& lowering, const NodeView& node, BinaryOp op) {
  const int32_t n = node.num_inputs();
  const Buffer& y = lowering.buffer(node.output_index(0));
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  // A lone input is written as max(x, x), which is x (NaN included) whatever the op.
  const int32_t second = n > 1 ? 1 : 0;
  binary_step(lowering, node, n > 1 ? op : BinaryOp::kMax, lowering.buffer(node.input_index(0)),
              shape_of(*node.input(0)), lowering.buffer(node.input_index(second)),
              shape_of(*node.input(second)), y);
  for (int32_t i = 2; i < n; ++i) {
    binary_step(lowering, node, op, y, out_shape, lowering.buffer(node.input_index(i)),
                shape_of(*node.input(i)), y);
  }
  if (node.op_type() == "Mean" && n > 1) {
    // Times 1/n as the OpenCL plugins; the reference's division differs by at most an ulp.
    const Buffer& scale = lowering.constant_floats({1.0f / static_cast<float>(n)});
    binary_step(lowering, node, BinaryOp::kMul, y, out_shape, scale, {}, y);
  }
}

std::string check_unary(const NodeView& node) {
  return float_only(node);
}

void lower_unary(Lowering& lowering, const NodeView& node, int32_t code, float a, float b) {
  const int64_t count = plugin::tensor_numel(*node.output(0));
  lowering.dispatch(
      node,
      linear_kernel("unary", count, 64,
                    {narrow(count, node, "element count"), code, float_bits(a), float_bits(b)}),
      {&lowering.buffer(node.input_index(0))}, {&lowering.buffer(node.output_index(0))});
}

void strided_copy(Lowering& lowering, const NodeView& node, const Buffer& src, const Buffer& dst,
                  const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                  int64_t src_offset, const std::vector<int64_t>& dst_strides, int64_t dst_offset) {
  if (dims.size() > kMaxRank) {
    throw Failure(TSR_UNSUPPORTED, node.describe() + ": a copy of rank above 6");
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int32_t> c;
  for (const auto& v :
       {rank6(dims, 1, node), rank6(src_strides, 0, node), rank6(dst_strides, 0, node)}) {
    c.insert(c.end(), v.begin(), v.end());
  }
  c.push_back(narrow(src_offset, node, "source offset"));
  c.push_back(narrow(dst_offset, node, "destination offset"));
  // float32 keeps its STORE-typed copy (half in half regions); other dtypes move raw elements
  // of their size (copy_raw.comp).
  const int32_t dtype = node.input(0)->dtype;  // the data: input 0 of every op copying
  if (dtype != TSR_DTYPE_FLOAT32) {
    c.push_back(static_cast<int32_t>(element_bytes(dtype)));
    lowering.dispatch(node, linear_kernel("copy_raw", count, 64, std::move(c)), {&src}, {&dst});
    return;
  }
  lowering.dispatch(node, linear_kernel("copy_strided", count, 64, std::move(c)), {&src}, {&dst});
}

}  // namespace tessera::vulkan
