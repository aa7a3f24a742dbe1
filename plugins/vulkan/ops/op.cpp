// The op table and the helpers the op files share.
#include "ops/op.hpp"

#include <climits>
#include <cstring>

namespace tessera::vulkan {

using plugin::Failure;

namespace {
std::vector<Op>& table() {
  static std::vector<Op> ops;
  return ops;
}
}  // namespace

OpRegistration::OpRegistration(const Op& op) {
  table().push_back(op);
}

const std::vector<Op>& ops() {
  return table();
}

const Op* find_op(const std::string& op_type) {
  for (const Op& op : table()) {
    if (op_type == op.op_type) return &op;
  }
  return nullptr;
}

std::vector<int64_t> shape_of(const tsr_tensor& t) {
  return plugin::tensor_shape(t);
}

std::string float_only(const NodeView& node) {
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    const tsr_tensor* t = node.output(i);
    if (t != nullptr && t->dtype != TSR_DTYPE_FLOAT32) {
      return "output " + std::to_string(i) + " is not float32 (a float32-only vulkan kernel)";
    }
  }
  const tsr_tensor* x = node.input(0);
  if (x != nullptr && x->dtype != TSR_DTYPE_FLOAT32) return "input 0 is not float32";
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    const tsr_tensor* t = node.output(i);
    if (t != nullptr && plugin::tensor_numel(*t) > INT_MAX / 2) {
      return "a tensor too large for 32-bit shader indexing";
    }
  }
  return "";
}

Kernel linear_kernel(const std::string& shader, int64_t count, uint32_t local_size,
                     std::vector<int32_t> constants) {
  Kernel k;
  k.shader = shader;
  k.constants = std::move(constants);
  const int64_t groups = (count + local_size - 1) / local_size;
  // linear_id() = x + y * (groups in x) * local size.
  const int64_t x = groups > 65535 ? 65535 : groups;
  k.groups[0] = static_cast<uint32_t>(x);
  k.groups[1] = static_cast<uint32_t>(x == 0 ? 0 : (groups + x - 1) / x);
  return k;
}

int32_t float_bits(float value) {
  int32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

int32_t narrow(int64_t value, const NodeView& node, const char* what) {
  if (value > INT_MAX || value < INT_MIN) {
    throw Failure(TSR_UNSUPPORTED, node.describe() + ": " + what + " " + std::to_string(value) +
                                       " does not fit 32-bit shader indexing");
  }
  return static_cast<int32_t>(value);
}

Activation activation_of(const NodeView& node) {
  const std::string_view op = node.op_type();
  Activation a;
  if (op == "Relu") {
    a.code = 1;
  } else if (op == "Clip") {
    // Clip's bounds are constant inputs (opset >= 11) or attributes.
    a.code = 2;
    a.a = -3.402823466e38f;
    a.b = 3.402823466e38f;
    for (int32_t i = 1; i <= 2; ++i) {
      const tsr_tensor* t = node.input(i);
      if (t == nullptr) continue;
      if (t->data == nullptr || t->dtype != TSR_DTYPE_FLOAT32) return {};
      (i == 1 ? a.a : a.b) = *static_cast<const float*>(t->data);
    }
    a.a = node.attr_float("min", a.a);
    a.b = node.attr_float("max", a.b);
  } else if (op == "Sigmoid") {
    a.code = 3;
  } else if (op == "HardSigmoid") {
    a = {4, node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f)};
  } else if (op == "HardSwish") {
    a.code = 5;
  } else if (op == "LeakyRelu") {
    a = {6, node.attr_float("alpha", 0.01f), 0.0f};
  } else if (op == "Tanh") {
    a.code = 7;
  }
  return a;
}

Activation fuse_activation(Lowering& lowering, const NodeView& node, int32_t& out) {
  const int32_t reader = lowering.sole_reader(node.output_index(0));
  if (reader < 0) return {};
  const NodeView next = lowering.region().node(reader);
  if (next.input_index(0) != node.output_index(0)) return {};
  const Activation a = activation_of(next);
  if (a.code == 0 || float_only(next) != "") return {};
  lowering.fuse(reader);
  out = next.output_index(0);
  return a;
}

std::vector<int64_t> constant_ints(const NodeView& node, int32_t i,
                                   const std::vector<int64_t>& fallback) {
  const tsr_tensor* t = node.input(i);
  if (t == nullptr) return fallback;
  if (t->data == nullptr) {
    throw Failure(TSR_UNSUPPORTED,
                  node.describe() + ": input " + std::to_string(i) + " must be a constant");
  }
  const int64_t n = plugin::tensor_numel(*t);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    if (t->dtype == TSR_DTYPE_INT64) {
      out[static_cast<size_t>(k)] = static_cast<const int64_t*>(t->data)[k];
    } else if (t->dtype == TSR_DTYPE_INT32) {
      out[static_cast<size_t>(k)] = static_cast<const int32_t*>(t->data)[k];
    } else {
      throw Failure(TSR_UNSUPPORTED,
                    node.describe() + ": input " + std::to_string(i) + " must hold integers");
    }
  }
  return out;
}

}  // namespace tessera::vulkan
