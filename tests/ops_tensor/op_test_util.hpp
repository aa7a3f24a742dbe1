// Helpers for the op tests: build a one-node graph fragment by hand and run shape inference and
// the reference kernel on it, the way the reference runner does.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "op.hpp"
#include "tessera/graph.hpp"
#include "tessera/tensor.hpp"

namespace tessera::test {

// A node named `name` with one value id per input (kNoValue where `inputs[i]` is empty) and
// `num_outputs` outputs.
inline Node make_node(const std::string& op_type, const std::vector<Tensor>& inputs,
                      size_t num_outputs = 1, const std::string& name = "") {
  Node node;
  node.name = name.empty() ? "test_" + op_type : name;
  node.op_type = op_type;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].empty() ? kNoValue : static_cast<ValueId>(i));
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(static_cast<ValueId>(inputs.size() + i));
  }
  return node;
}

inline std::string where_of(const Node& node) {
  return "node '" + node.name + "' (" + node.op_type + ")";
}

// Every present input is passed as a known constant (ops that need constants get them; the
// others ignore it).
inline std::vector<ops::InputInfo> input_infos(const std::vector<Tensor>& inputs) {
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
  return infos;
}

inline std::vector<ops::OutputInfo> infer(const Node& node, int64_t opset,
                                          const std::vector<Tensor>& inputs) {
  return ops::infer_node(node, opset, where_of(node), input_infos(inputs));
}

// Shape inference then the kernel; also checks the kernel's outputs match the inferred infos.
inline std::vector<Tensor> run(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  const std::vector<ops::OutputInfo> infos = infer(node, opset, inputs);
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : inputs) ptrs.push_back(t.empty() ? nullptr : &t);
  std::vector<Tensor> outs = ops::compute_node(node, opset, ptrs, infos);
  for (size_t i = 0; i < outs.size(); ++i) {
    EXPECT_EQ(outs[i].dtype(), infos[i].dtype) << "output " << i;
    EXPECT_EQ(outs[i].shape(), infos[i].shape) << "output " << i;
  }
  return outs;
}

// One-output convenience.
inline Tensor run1(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outs = run(node, opset, inputs);
  return outs.at(0);
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

inline Tensor f32(Shape shape, std::vector<float> v) {
  return Tensor::from_vector(shape, v);
}
inline Tensor i64(Shape shape, std::vector<int64_t> v) {
  return Tensor::from_vector(shape, v);
}
inline Tensor i32(Shape shape, std::vector<int32_t> v) {
  return Tensor::from_vector(shape, v);
}

// Floats compared with a small relative tolerance (the kernels use float32 libm).
inline void expect_floats_near(const Tensor& t, const std::vector<float>& expected,
                               float tol = 1e-6f) {
  ASSERT_EQ(t.dtype(), DType::kFloat32);
  const std::vector<float> got = values<float>(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], tol * (1.0f + std::abs(expected[i]))) << "element " << i;
  }
}

// Runs shape inference expecting an Error whose message contains the node name and `fragment`.
inline void expect_infer_error(const Node& node, int64_t opset, const std::vector<Tensor>& inputs,
                               const std::string& fragment) {
  try {
    infer(node, opset, inputs);
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + node.name + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
}

}  // namespace tessera::test
