// Helpers for the ops_nn tests: build a node, run shape inference and the reference kernel.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "op.hpp"
#include "tessera/graph.hpp"
#include "tessera/tensor.hpp"

namespace tessera::testing {

// A node named `name` with `inputs` inputs (ids 0..n-1, or kNoValue where `absent` says so) and
// `outputs` outputs.
inline Node make_node(const std::string& op_type, size_t inputs, size_t outputs = 1,
                      const std::string& name = "n0") {
  Node node;
  node.name = name;
  node.op_type = op_type;
  for (size_t i = 0; i < inputs; ++i) node.inputs.push_back(static_cast<ValueId>(i));
  for (size_t i = 0; i < outputs; ++i) node.outputs.push_back(static_cast<ValueId>(100 + i));
  return node;
}

inline Tensor f32(Shape shape, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(shape), values);
}
inline Tensor i64(Shape shape, std::vector<int64_t> values) {
  return Tensor::from_vector<int64_t>(std::move(shape), values);
}

// Infers then computes. An empty Tensor() in `inputs` is an omitted optional input. Every
// present input is offered to inference as a constant (ops need scales/pads/axes that way).
inline std::vector<Tensor> run(const Node& node, int64_t opset, const std::vector<Tensor>& inputs,
                               std::vector<ops::OutputInfo>* infos_out = nullptr) {
  std::vector<ops::InputInfo> infos;
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : inputs) {
    ops::InputInfo info;
    if (!t.empty()) {
      info.present = true;
      info.dtype = t.dtype();
      info.shape = t.shape();
      info.constant = &t;
    }
    infos.push_back(info);
    ptrs.push_back(t.empty() ? nullptr : &t);
  }
  const std::vector<ops::OutputInfo> outs =
      ops::infer_node(node, opset, "node '" + node.name + "' (" + node.op_type + ")", infos);
  if (infos_out) *infos_out = outs;
  return ops::compute_node(node, opset, ptrs, outs);
}

// Shape inference only.
inline Shape infer_shape(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  std::vector<ops::InputInfo> infos;
  for (const Tensor& t : inputs) {
    ops::InputInfo info;
    if (!t.empty()) {
      info.present = true;
      info.dtype = t.dtype();
      info.shape = t.shape();
      info.constant = &t;
    }
    infos.push_back(info);
  }
  return ops::infer_node(node, opset, "node '" + node.name + "' (" + node.op_type + ")", infos)
      .at(0)
      .shape;
}

inline std::vector<float> values(const Tensor& t) {
  const float* d = t.data<float>();
  return std::vector<float>(d, d + t.numel());
}

// Element-wise comparison with an absolute tolerance; reports the first few mismatches.
inline void expect_near(const Tensor& actual, const Shape& shape,
                        const std::vector<float>& expected, float tol = 1e-5f) {
  ASSERT_EQ(actual.shape(), shape);
  ASSERT_EQ(static_cast<size_t>(actual.numel()), expected.size());
  const std::vector<float> got = values(actual);
  int reported = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!(std::abs(got[i] - expected[i]) <= tol) && reported++ < 5) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", expected " << expected[i];
    }
  }
}

// Runs inference and expects an error of type E whose message contains `fragment` and the node
// name.
template <typename E = Error>
void expect_error(const Node& node, int64_t opset, const std::vector<Tensor>& inputs,
                  const std::string& fragment) {
  try {
    run(node, opset, inputs);
    ADD_FAILURE() << "expected an error mentioning '" << fragment << "'";
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + node.name + "'"), std::string::npos) << msg;
  }
}

}  // namespace tessera::testing
