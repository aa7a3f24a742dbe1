// Tiny in-memory graph builder for plugin/session tests (shapes inferred by core's pass).
#pragma once

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/passes.hpp"

namespace tessera::test {

class GraphBuilder {
 public:
  explicit GraphBuilder(int64_t opset = 13) { graph_.opset = opset; }

  GraphBuilder& input(const std::string& name, Shape shape, DType dtype = DType::kFloat32) {
    Value v;
    v.name = name;
    v.dtype = dtype;
    v.shape = std::move(shape);
    v.shape_known = true;
    graph_.inputs.push_back(graph_.add_value(v));
    return *this;
  }
  GraphBuilder& constant(const std::string& name, const Tensor& t) {
    Value v;
    v.name = name;
    v.dtype = t.dtype();
    v.shape = t.shape();
    v.shape_known = true;
    v.constant = std::make_shared<const Tensor>(t);
    graph_.add_value(v);
    return *this;
  }
  // Inputs may be "" for omitted optional inputs; outputs are created.
  GraphBuilder& node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, Attributes attrs = {},
                     const std::string& name = "") {
    Node n;
    n.op_type = op;
    n.name = name.empty() ? op + "_" + std::to_string(graph_.nodes.size()) : name;
    for (const std::string& in : inputs) {
      n.inputs.push_back(in.empty() ? kNoValue : graph_.find_value(in));
    }
    for (const std::string& out : outputs) {
      Value v;
      v.name = out;
      n.outputs.push_back(graph_.add_value(v));
    }
    n.attrs = std::move(attrs);
    graph_.nodes.push_back(std::move(n));
    return *this;
  }
  GraphBuilder& output(const std::string& name) {
    graph_.outputs.push_back(graph_.find_value(name));
    return *this;
  }
  Graph build() {
    Graph g = graph_;
    infer_shapes(g);
    return g;
  }

 private:
  Graph graph_;
};

// Seeded normal(0,1) floats.
inline Tensor random_tensor(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(shape_numel(shape)));
  for (float& v : values) v = dist(rng);
  return Tensor::from_vector(std::move(shape), values);
}

// Seeded floats in [0.5, ~4): variances and other inputs that must stay positive.
inline Tensor positive_tensor(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(shape_numel(shape)));
  for (float& v : values) v = 0.5f + std::fabs(dist(rng));
  return Tensor::from_vector(std::move(shape), values);
}

// Seeded integers spread over the whole range of T (int8/uint8 inputs reach the wrap-around).
template <typename T>
Tensor random_int_tensor(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::lowest(),
                                          std::numeric_limits<T>::max());
  std::vector<T> values(static_cast<size_t>(shape_numel(shape)));
  for (T& v : values) v = static_cast<T>(dist(rng));
  return Tensor::from_vector(std::move(shape), values);
}

// Seeded integers in [lo, hi]: indices, masks and shape arithmetic, where ties and repeats
// matter more than range (int64 / int32 products stay far from overflow).
template <typename T>
Tensor small_int_tensor(Shape shape, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> values(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(dist(rng));
  return Tensor::from_vector(std::move(shape), values);
}

// Random data for every graph input: normal floats, 8-bit integers over the dtype's range,
// small int64 / int32 values, or bools.
inline std::map<std::string, Tensor> random_inputs(const Graph& g, uint32_t seed = 1) {
  std::map<std::string, Tensor> inputs;
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    if (v.dtype == DType::kUInt8) {
      inputs[v.name] = random_int_tensor<uint8_t>(v.shape, seed++);
    } else if (v.dtype == DType::kInt8) {
      inputs[v.name] = random_int_tensor<int8_t>(v.shape, seed++);
    } else if (v.dtype == DType::kInt64) {
      inputs[v.name] = small_int_tensor<int64_t>(v.shape, seed++, -9, 9);
    } else if (v.dtype == DType::kInt32) {
      inputs[v.name] = small_int_tensor<int32_t>(v.shape, seed++, -9, 9);
    } else if (v.dtype == DType::kBool) {
      inputs[v.name] = small_int_tensor<bool>(v.shape, seed++, 0, 1);
    } else {
      inputs[v.name] = random_tensor(v.shape, seed++);
    }
  }
  return inputs;
}

inline Attributes attrs(std::initializer_list<std::pair<const std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

}  // namespace tessera::test
