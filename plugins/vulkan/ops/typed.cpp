// Shared lowering of the ops on values that are not float32 (ops/typed.hpp).
#include "ops/typed.hpp"

#include <climits>

#include "ops/elementwise.hpp"

namespace tessera::vulkan {

using plugin::Failure;

namespace {
constexpr int32_t kMaxRank = 6;

bool is_integer(int32_t d) {
  return d == TSR_DTYPE_INT64 || d == TSR_DTYPE_INT32 || d == TSR_DTYPE_INT8 ||
         d == TSR_DTYPE_UINT8;
}

// The values of integer constant `t` (int64, int32, int8, uint8).
std::vector<int64_t> constant_ints_any(const tsr_tensor& t) {
  const int64_t n = plugin::tensor_numel(t);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    int64_t v = 0;
    if (t.dtype == TSR_DTYPE_INT64) v = static_cast<const int64_t*>(t.data)[k];
    if (t.dtype == TSR_DTYPE_INT32) v = static_cast<const int32_t*>(t.data)[k];
    if (t.dtype == TSR_DTYPE_INT8) v = static_cast<const int8_t*>(t.data)[k];
    if (t.dtype == TSR_DTYPE_UINT8) v = static_cast<const uint8_t*>(t.data)[k];
    out[static_cast<size_t>(k)] = v;
  }
  return out;
}

// The broadcast constants of a rank-6 walk over output 0: its dims, then each operand's strides.
std::vector<int32_t> broadcast_constants(const NodeView& node, const std::vector<int32_t>& inputs) {
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  std::vector<int32_t> c = rank6(out_shape, 1, node);
  for (int32_t i : inputs) {
    const std::vector<int32_t> s =
        rank6(broadcast_strides(shape_of(*node.input(i)), out_shape), 0, node);
    c.insert(c.end(), s.begin(), s.end());
  }
  return c;
}
}  // namespace

std::string check_values(const NodeView& node) {
  auto check_one = [](const tsr_tensor* t, const std::string& what) -> std::string {
    if (t == nullptr) return "";
    if (element_bytes(t->dtype) == 0) {
      return what + " is not float32, int64, int32, int8, uint8 or bool";
    }
    // Element (and, for int64, word) indices stay within int in the shaders.
    if (plugin::tensor_numel(*t) > INT_MAX / 2) return "a tensor too large for 32-bit indexing";
    return "";
  };
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    const std::string why = check_one(node.input(i), "input " + std::to_string(i));
    if (!why.empty()) return why;
  }
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    const std::string why = check_one(node.output(i), "output " + std::to_string(i));
    if (!why.empty()) return why;
  }
  return "";
}

std::string check_movable(const NodeView& node) {
  const std::string why = check_values(node);
  if (!why.empty()) return why;
  if (node.input(0) == nullptr || node.output(0) == nullptr) return "needs input 0 and output 0";
  if (node.input(0)->dtype != node.output(0)->dtype) return "output 0's dtype is not input 0's";
  return "";
}

bool needs_int64(const NodeView& node) {
  const std::string_view op = node.op_type();
  if (op == "Cast") {
    return node.input(0) != nullptr && node.output(0) != nullptr &&
           node.input(0)->dtype != node.output(0)->dtype;
  }
  if (op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
      op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor" || op == "Not" ||
      op == "ArgMax" || op == "ArgMin") {
    return true;
  }
  return integer_binary_op(node) >= 0 && node.output(0) != nullptr &&
         node.output(0)->dtype != TSR_DTYPE_FLOAT32;
}

void require_int64(Lowering& lowering, const NodeView& node) {
  const PhysicalDevice& phys = lowering.device().physical();
  if (!phys.shader_int64) {
    throw Failure(TSR_UNSUPPORTED, node.describe() +
                                       ": needs shaderInt64 (its shader computes in "
                                       "int64_t), which " +
                                       phys.name + " lacks");
  }
}

std::string check_compare(const NodeView& node, CompareOp op) {
  const std::string why = check_values(node);
  if (!why.empty()) return why;
  const bool unary = op == CompareOp::kNot;
  const int32_t operands = unary ? 1 : 2;
  if (node.num_inputs() != operands) return unary ? "needs one input" : "needs two inputs";
  for (int32_t i = 0; i < operands; ++i) {
    if (node.input(i) == nullptr) return "input " + std::to_string(i) + " is absent";
  }
  if (node.output(0)->dtype != TSR_DTYPE_BOOL) return "output 0 is not bool";
  if (node.output(0)->rank > kMaxRank) return "rank above 6";
  const int32_t d = node.input(0)->dtype;
  if (!unary && node.input(1)->dtype != d) return "inputs of different dtypes";
  const bool logic = op >= CompareOp::kAnd;
  if (logic && d != TSR_DTYPE_BOOL) return "logic ops take bool inputs";
  if (!logic) {
    // Equal also compares bools; the orderings take numbers (int8/uint8 would work the same way
    // but core's reference covers float32, int64 and int32).
    const bool number = d == TSR_DTYPE_FLOAT32 || d == TSR_DTYPE_INT64 || d == TSR_DTYPE_INT32;
    if (!number && !(op == CompareOp::kEqual && d == TSR_DTYPE_BOOL)) {
      return "compares float32, int64 or int32 (Equal also bool)";
    }
  }
  return "";
}

void lower_compare(Lowering& lowering, const NodeView& node, CompareOp op) {
  require_int64(lowering, node);
  const bool unary = op == CompareOp::kNot;
  std::vector<int32_t> c = {static_cast<int32_t>(op)};
  // Not reads its one operand as both a and b.
  const std::vector<int32_t> b =
      broadcast_constants(node, unary ? std::vector<int32_t>{0, 0} : std::vector<int32_t>{0, 1});
  c.insert(c.end(), b.begin(), b.end());
  c.push_back(lowering.type_code(*node.input(0)));
  const int64_t count = plugin::tensor_numel(*node.output(0));
  const Buffer& a = lowering.buffer(node.input_index(0));
  lowering.dispatch(node, linear_kernel("compare", count, 64, std::move(c)),
                    {&a, unary ? &a : &lowering.buffer(node.input_index(1))},
                    {&lowering.buffer(node.output_index(0))});
}

int32_t integer_binary_op(const NodeView& node) {
  const std::string_view op = node.op_type();
  if (op == "Add") return 0;
  if (op == "Sub") return 1;
  if (op == "Mul") return 2;
  if (op == "Div") return 3;
  if (op == "Max") return 4;
  if (op == "Min") return 5;
  return -1;
}

std::string check_integer_binary(const NodeView& node) {
  const std::string why = check_values(node);
  if (!why.empty()) return why;
  if (node.num_inputs() != 2 || node.input(0) == nullptr || node.input(1) == nullptr) {
    return "needs two inputs";
  }
  const int32_t d = node.output(0)->dtype;
  if (!is_integer(d)) return "output 0 is not float32, int64, int32, int8 or uint8";
  if (node.input(0)->dtype != d || node.input(1)->dtype != d) return "inputs of another dtype";
  if (node.output(0)->rank > kMaxRank) return "rank above 6";
  if (node.op_type() == "Div") {
    const tsr_tensor& b = *node.input(1);
    if (b.data == nullptr) {
      return "integer Div needs a constant divisor (a shader cannot report division by zero)";
    }
    for (int64_t v : constant_ints_any(b)) {
      if (v == 0) return "integer Div by a divisor holding 0 (core reports the error)";
    }
  }
  return "";
}

void lower_integer_binary(Lowering& lowering, const NodeView& node) {
  require_int64(lowering, node);
  std::vector<int32_t> c = {integer_binary_op(node)};
  const std::vector<int32_t> b = broadcast_constants(node, {0, 1});
  c.insert(c.end(), b.begin(), b.end());
  c.push_back(lowering.type_code(*node.output(0)));
  const int64_t count = plugin::tensor_numel(*node.output(0));
  lowering.dispatch(node, linear_kernel("int_binary", count, 64, std::move(c)),
                    {&lowering.buffer(node.input_index(0)), &lowering.buffer(node.input_index(1))},
                    {&lowering.buffer(node.output_index(0))});
}

std::string check_arg_reduce(const NodeView& node) {
  const std::string why = check_values(node);
  if (!why.empty()) return why;
  const tsr_tensor* x = node.input(0);
  if (x == nullptr || x->rank < 1) return "needs an input of rank >= 1";
  if (x->dtype != TSR_DTYPE_FLOAT32 && x->dtype != TSR_DTYPE_INT64 && x->dtype != TSR_DTYPE_INT32) {
    return "input 0 is not float32, int64 or int32";
  }
  if (node.output(0)->dtype != TSR_DTYPE_INT64) return "output 0 is not int64";
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank || x->dims[axis] == 0) return "an axis without elements";
  return "";
}

void lower_arg_reduce(Lowering& lowering, const NodeView& node, bool is_max) {
  require_int64(lowering, node);
  const tsr_tensor& x = *node.input(0);
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += x.rank;
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < x.rank; ++i) {
    if (i < axis) outer *= x.dims[i];
    if (i > axis) inner *= x.dims[i];
  }
  // keepdims only changes the output's shape: the indices are [outer, inner] either way.
  const int32_t last = node.attr_int("select_last_index", 0) != 0 ? 1 : 0;
  Kernel k = linear_kernel(
      "arg_reduce", outer * inner, 64,
      {narrow(outer, node, "outer size"), narrow(x.dims[axis], node, "axis size"),
       narrow(inner, node, "inner size"), lowering.type_code(x), is_max ? 1 : 0, last});
  lowering.dispatch(node, k, {&lowering.buffer(node.input_index(0))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace tessera::vulkan
