// ModelBuilder: the small layer vocabulary the zoo networks are written in (conv, batch norm,
// pooling, dense, ...), emitting ONNX nodes and seeded random initializers while it tracks NCHW
// shapes, so every network file reads like its relay.testing original.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace tessera::zoo::detail {

// A tensor in the graph being built: its ONNX name and its static shape.
struct Sym {
  std::string name;
  std::vector<int64_t> shape;
};

// Gain for Kaiming-uniform initialisation in front of a ReLU (or ReLU6).
inline const float kReluGain = std::sqrt(2.0f);

struct ConvSpec {
  int64_t channels = 0;
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> pad{0, 0};  // symmetric (top = bottom, left = right)
  int64_t groups = 1;
  bool bias = false;
  // Multiplies the Kaiming-uniform bound sqrt(3 / fan_in); kReluGain keeps the second moment of
  // activations constant through conv + ReLU.
  float gain = kReluGain;
};

struct PoolSpec {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> stride{2, 2};
  std::array<int64_t, 2> pad{0, 0};
};

class ModelBuilder {
 public:
  ModelBuilder(const std::string& graph_name, uint64_t seed);

  Sym input(const std::string& name, std::vector<int64_t> shape);
  // Marks `x` as a graph output (in call order).
  void output(const Sym& x);

  // Every layer below names its node and its output tensor `name`.
  Sym conv(const Sym& x, const std::string& name, const ConvSpec& spec);
  // Inference batch norm with random statistics: gamma ~ U(0.5, 1.5) (1 when fixed_gamma, like
  // MXNet's fix_gamma), beta ~ U(-0.2, 0.2), mean ~ U(-0.1, 0.1), var ~ U(0.5, 1.5).
  Sym batch_norm(const Sym& x, const std::string& name, float epsilon, bool fixed_gamma = false);
  Sym relu(const Sym& x, const std::string& name);
  Sym relu6(const Sym& x, const std::string& name);  // Clip with min/max given as inputs
  Sym add(const Sym& a, const Sym& b, const std::string& name);
  Sym max_pool(const Sym& x, const std::string& name, const PoolSpec& spec);
  Sym avg_pool(const Sym& x, const std::string& name, const PoolSpec& spec, bool count_include_pad);
  Sym global_avg_pool(const Sym& x, const std::string& name);
  Sym flatten(const Sym& x, const std::string& name);
  // Gemm with transB = 1 (weight [units, in]) and a bias; Kaiming-uniform with `gain`.
  Sym dense(const Sym& x, const std::string& name, int64_t units, float gain);
  Sym concat(const std::vector<Sym>& parts, const std::string& name);  // along channels
  Sym softmax(const Sym& x, const std::string& name);
  // Inference-mode Dropout (identity at run time); kept because the originals have it.
  Sym dropout(const Sym& x, const std::string& name);

  // Batch norm with the random statistics above scales the second moment of its input by
  // E[gamma^2] * E[1/var] = 13/12 * ln 3 (ln 3 alone with fixed gamma) on average; nothing
  // renormalises at inference time, so over 20-50 layers that compounds. Networks whose convs each
  // meet one batch norm call this once so every conv's bound is divided by the square root.
  void compensate_batch_norm(bool fixed_gamma);

  onnx::ModelProto& model() { return model_; }

 private:
  onnx::NodeProto* add_node(const std::string& op_type, const std::string& name,
                            const std::vector<std::string>& inputs);
  // Adds a float initializer filled with U(lo, hi) from the builder's random stream.
  std::string add_uniform(const std::string& name, const std::vector<int64_t>& dims, double lo,
                          double hi);
  std::string add_constant(const std::string& name, const std::vector<int64_t>& dims, float value);
  void add_value_info(onnx::ValueInfoProto* info, const Sym& x);

  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
  std::mt19937_64 rng_;
  bool has_relu6_bounds_ = false;
  double conv_gain_scale_ = 1.0;
};

}  // namespace tessera::zoo::detail
