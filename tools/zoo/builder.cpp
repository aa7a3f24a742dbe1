// ModelBuilder implementation: ONNX node/initializer emission and NCHW shape bookkeeping.
#include "builder.hpp"

#include <cstring>

#include "tessera/error.hpp"

namespace tessera::zoo::detail {
namespace {

int64_t conv_out(int64_t in, int64_t kernel, int64_t stride, int64_t pad) {
  return (in + 2 * pad - kernel) / stride + 1;
}

void set_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

void set_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

void set_float(onnx::NodeProto* node, const std::string& name, float value) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(value);
}

void require_rank4(const Sym& x, const std::string& layer) {
  if (x.shape.size() != 4) {
    throw Error("zoo: layer '" + layer + "' expects an NCHW input, got rank " +
                std::to_string(x.shape.size()) + " tensor '" + x.name + "'");
  }
}

}  // namespace

ModelBuilder::ModelBuilder(const std::string& graph_name, uint64_t seed) : rng_(seed) {
  model_.set_ir_version(7);  // the IR version that goes with opset 13
  model_.set_producer_name("tessera zoo");
  model_.set_producer_version("1");
  model_.set_doc_string("Random-weight " + graph_name + " (seed " + std::to_string(seed) +
                        ") after TVM relay.testing; not a trained model.");
  onnx::OperatorSetIdProto* opset = model_.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  graph_ = model_.mutable_graph();
  graph_->set_name(graph_name);
}

void ModelBuilder::add_value_info(onnx::ValueInfoProto* info, const Sym& x) {
  info->set_name(x.name);
  onnx::TypeProto_Tensor* type = info->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : x.shape) type->mutable_shape()->add_dim()->set_dim_value(d);
}

Sym ModelBuilder::input(const std::string& name, std::vector<int64_t> shape) {
  Sym x{name, std::move(shape)};
  add_value_info(graph_->add_input(), x);
  return x;
}

void ModelBuilder::output(const Sym& x) {
  add_value_info(graph_->add_output(), x);
}

onnx::NodeProto* ModelBuilder::add_node(const std::string& op_type, const std::string& name,
                                        const std::vector<std::string>& inputs) {
  onnx::NodeProto* node = graph_->add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& in : inputs) node->add_input(in);
  node->add_output(name);
  return node;
}

std::string ModelBuilder::add_uniform(const std::string& name, const std::vector<int64_t>& dims,
                                      double lo, double hi) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  onnx::TensorProto* tensor = graph_->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  // raw_data is little-endian; every host Tessera targets (x86-64, AArch64, ARMv7) is too.
  std::string* raw = tensor->mutable_raw_data();
  raw->resize(static_cast<size_t>(count) * sizeof(float));
  char* out = raw->data();
  for (int64_t i = 0; i < count; ++i) {
    // Our own mapping of 53 random bits to [0, 1): std::uniform_real_distribution's algorithm is
    // implementation-defined, and the same seed must give the same file everywhere.
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    const float value = static_cast<float>(lo + (hi - lo) * u);
    std::memcpy(out + i * sizeof(float), &value, sizeof(float));
  }
  return name;
}

std::string ModelBuilder::add_constant(const std::string& name, const std::vector<int64_t>& dims,
                                       float value) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  onnx::TensorProto* tensor = graph_->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  for (int64_t i = 0; i < count; ++i) tensor->add_float_data(value);
  return name;
}

Sym ModelBuilder::conv(const Sym& x, const std::string& name, const ConvSpec& spec) {
  require_rank4(x, name);
  const int64_t in_channels = x.shape[1];
  if (spec.groups < 1 || in_channels % spec.groups != 0 || spec.channels % spec.groups != 0) {
    throw Error("zoo: conv '" + name + "': groups " + std::to_string(spec.groups) +
                " does not divide the channel counts");
  }
  const int64_t fan_in = in_channels / spec.groups * spec.kernel[0] * spec.kernel[1];
  const double bound = conv_gain_scale_ * spec.gain * std::sqrt(3.0 / static_cast<double>(fan_in));
  std::vector<std::string> inputs{x.name, add_uniform(name + "_weight",
                                                      {spec.channels, in_channels / spec.groups,
                                                       spec.kernel[0], spec.kernel[1]},
                                                      -bound, bound)};
  if (spec.bias) inputs.push_back(add_uniform(name + "_bias", {spec.channels}, -0.1, 0.1));
  onnx::NodeProto* node = add_node("Conv", name, inputs);
  set_ints(node, "kernel_shape", {spec.kernel[0], spec.kernel[1]});
  set_ints(node, "strides", {spec.stride[0], spec.stride[1]});
  set_ints(node, "pads", {spec.pad[0], spec.pad[1], spec.pad[0], spec.pad[1]});
  set_ints(node, "dilations", {1, 1});
  set_int(node, "group", spec.groups);
  return Sym{
      name,
      {x.shape[0], spec.channels, conv_out(x.shape[2], spec.kernel[0], spec.stride[0], spec.pad[0]),
       conv_out(x.shape[3], spec.kernel[1], spec.stride[1], spec.pad[1])}};
}

void ModelBuilder::compensate_batch_norm(bool fixed_gamma) {
  const double gamma_sq = fixed_gamma ? 1.0 : 13.0 / 12.0;
  conv_gain_scale_ = 1.0 / std::sqrt(gamma_sq * std::log(3.0));
}

Sym ModelBuilder::batch_norm(const Sym& x, const std::string& name, float epsilon,
                             bool fixed_gamma) {
  const int64_t c = x.shape.at(1);
  const std::string gamma = fixed_gamma ? add_constant(name + "_gamma", {c}, 1.0f)
                                        : add_uniform(name + "_gamma", {c}, 0.5, 1.5);
  const std::string beta = add_uniform(name + "_beta", {c}, -0.2, 0.2);
  const std::string mean = add_uniform(name + "_moving_mean", {c}, -0.1, 0.1);
  const std::string var = add_uniform(name + "_moving_var", {c}, 0.5, 1.5);
  onnx::NodeProto* node = add_node("BatchNormalization", name, {x.name, gamma, beta, mean, var});
  set_float(node, "epsilon", epsilon);
  return Sym{name, x.shape};
}

Sym ModelBuilder::relu(const Sym& x, const std::string& name) {
  add_node("Relu", name, {x.name});
  return Sym{name, x.shape};
}

Sym ModelBuilder::relu6(const Sym& x, const std::string& name) {
  // One shared pair of scalar bounds for every ReLU6 in the graph.
  if (!has_relu6_bounds_) {
    add_constant("relu6_min", {}, 0.0f);
    add_constant("relu6_max", {}, 6.0f);
    has_relu6_bounds_ = true;
  }
  add_node("Clip", name, {x.name, "relu6_min", "relu6_max"});
  return Sym{name, x.shape};
}

Sym ModelBuilder::add(const Sym& a, const Sym& b, const std::string& name) {
  if (a.shape != b.shape) {
    throw Error("zoo: add '" + name + "': operands '" + a.name + "' and '" + b.name +
                "' differ in shape");
  }
  add_node("Add", name, {a.name, b.name});
  return Sym{name, a.shape};
}

Sym ModelBuilder::max_pool(const Sym& x, const std::string& name, const PoolSpec& spec) {
  require_rank4(x, name);
  onnx::NodeProto* node = add_node("MaxPool", name, {x.name});
  set_ints(node, "kernel_shape", {spec.kernel[0], spec.kernel[1]});
  set_ints(node, "strides", {spec.stride[0], spec.stride[1]});
  set_ints(node, "pads", {spec.pad[0], spec.pad[1], spec.pad[0], spec.pad[1]});
  return Sym{
      name,
      {x.shape[0], x.shape[1], conv_out(x.shape[2], spec.kernel[0], spec.stride[0], spec.pad[0]),
       conv_out(x.shape[3], spec.kernel[1], spec.stride[1], spec.pad[1])}};
}

Sym ModelBuilder::avg_pool(const Sym& x, const std::string& name, const PoolSpec& spec,
                           bool count_include_pad) {
  require_rank4(x, name);
  onnx::NodeProto* node = add_node("AveragePool", name, {x.name});
  set_ints(node, "kernel_shape", {spec.kernel[0], spec.kernel[1]});
  set_ints(node, "strides", {spec.stride[0], spec.stride[1]});
  set_ints(node, "pads", {spec.pad[0], spec.pad[1], spec.pad[0], spec.pad[1]});
  set_int(node, "count_include_pad", count_include_pad ? 1 : 0);
  return Sym{
      name,
      {x.shape[0], x.shape[1], conv_out(x.shape[2], spec.kernel[0], spec.stride[0], spec.pad[0]),
       conv_out(x.shape[3], spec.kernel[1], spec.stride[1], spec.pad[1])}};
}

Sym ModelBuilder::global_avg_pool(const Sym& x, const std::string& name) {
  require_rank4(x, name);
  add_node("GlobalAveragePool", name, {x.name});
  return Sym{name, {x.shape[0], x.shape[1], 1, 1}};
}

Sym ModelBuilder::flatten(const Sym& x, const std::string& name) {
  onnx::NodeProto* node = add_node("Flatten", name, {x.name});
  set_int(node, "axis", 1);
  int64_t inner = 1;
  for (size_t i = 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  return Sym{name, {x.shape.at(0), inner}};
}

Sym ModelBuilder::dense(const Sym& x, const std::string& name, int64_t units, float gain) {
  if (x.shape.size() != 2) {
    throw Error("zoo: dense '" + name + "' expects a [batch, features] input");
  }
  const int64_t fan_in = x.shape[1];
  const double bound = gain * std::sqrt(3.0 / static_cast<double>(fan_in));
  const std::string weight = add_uniform(name + "_weight", {units, fan_in}, -bound, bound);
  const std::string bias = add_uniform(name + "_bias", {units}, -0.1, 0.1);
  onnx::NodeProto* node = add_node("Gemm", name, {x.name, weight, bias});
  set_int(node, "transB", 1);
  return Sym{name, {x.shape[0], units}};
}

Sym ModelBuilder::concat(const std::vector<Sym>& parts, const std::string& name) {
  std::vector<std::string> inputs;
  std::vector<int64_t> shape = parts.at(0).shape;
  shape.at(1) = 0;
  for (const Sym& part : parts) {
    require_rank4(part, name);
    inputs.push_back(part.name);
    shape[1] += part.shape[1];
    if (part.shape[0] != shape[0] || part.shape[2] != shape[2] || part.shape[3] != shape[3]) {
      throw Error("zoo: concat '" + name + "': part '" + part.name + "' has a different N/H/W");
    }
  }
  onnx::NodeProto* node = add_node("Concat", name, inputs);
  set_int(node, "axis", 1);
  return Sym{name, shape};
}

Sym ModelBuilder::softmax(const Sym& x, const std::string& name) {
  onnx::NodeProto* node = add_node("Softmax", name, {x.name});
  set_int(node, "axis", 1);
  return Sym{name, x.shape};
}

Sym ModelBuilder::dropout(const Sym& x, const std::string& name) {
  add_node("Dropout", name, {x.name});
  return Sym{name, x.shape};
}

}  // namespace tessera::zoo::detail
