// The mixed-precision pass's per-node decisions (tessera/mixed_precision.hpp) on small graphs,
// against the rules written out by hand: always ops reduce, never ops stay fp32, follow ops
// reduce only when every produced input is reduced, unlisted ops stay fp32, and a deployment's
// lists override the defaults.
#include "tessera/mixed_precision.hpp"

#include <gtest/gtest.h>

#include "../plugins/graph_builder.hpp"

namespace tessera {
namespace {

Tensor ones(Shape shape) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 1.0f;
  return t;
}

// x -> Conv -> Relu -> Softmax -> Add(softmax, relu) -> Sigmoid ; CustomOp(relu)
Graph sample() {
  return test::GraphBuilder()
      .input("x", {1, 4, 6, 6})
      .constant("w", ones({4, 4, 1, 1}))
      .node("Conv", {"x", "w"}, {"c"}, {}, "conv")
      .node("Relu", {"c"}, {"r"}, {}, "relu")
      .node("Softmax", {"r"}, {"s"}, {}, "softmax")
      .node("Add", {"s", "r"}, {"a"}, {}, "add")
      .node("Sigmoid", {"a"}, {"y"}, {}, "sigmoid")
      .node("Relu", {"x"}, {"z"}, {}, "relu_of_input")
      .output("y")
      .output("z")
      .build();
}

std::map<std::string, bool> decisions(const Graph& g, const MixedPrecisionSettings& s) {
  const std::vector<bool> reduced = assign_reduced_precision(g, s);
  std::map<std::string, bool> out;
  for (size_t n = 0; n < g.nodes.size(); ++n) out[g.nodes[n].name] = reduced[n];
  return out;
}

TEST(MixedPrecision, DefaultListsFollowTheirProducers) {
  MixedPrecisionSettings s;
  s.enabled = true;
  const auto d = decisions(sample(), s);
  EXPECT_TRUE(d.at("conv"));      // always
  EXPECT_TRUE(d.at("relu"));      // follow, its producer conv is reduced
  EXPECT_FALSE(d.at("softmax"));  // never
  EXPECT_FALSE(d.at("add"));      // follow, but softmax (one producer) is fp32
  EXPECT_FALSE(d.at("sigmoid"));  // follow an fp32 add
  // A follow op that reads only graph inputs has no reduced producer: it does not start a
  // reduced stretch.
  EXPECT_FALSE(d.at("relu_of_input"));
}

TEST(MixedPrecision, OverridesMoveOpTypesBetweenLists) {
  MixedPrecisionSettings s;
  s.enabled = true;
  s.overrides["Softmax"] = MixedPrecisionClass::kFollow;
  s.overrides["Relu"] = MixedPrecisionClass::kAlways;
  const auto d = decisions(sample(), s);
  EXPECT_TRUE(d.at("softmax"));  // now follows a reduced relu
  EXPECT_TRUE(d.at("add"));      // both producers reduced
  EXPECT_TRUE(d.at("sigmoid"));
  EXPECT_TRUE(d.at("relu_of_input"));  // always, whatever it reads
  s.overrides["Conv"] = MixedPrecisionClass::kNever;
  EXPECT_FALSE(decisions(sample(), s).at("conv"));
}

TEST(MixedPrecision, UnlistedOpTypesStayFp32AndSaySo) {
  MixedPrecisionSettings s;
  bool listed = true;
  EXPECT_EQ(mixed_precision_class("MyCustomOp", s, &listed), MixedPrecisionClass::kNever);
  EXPECT_FALSE(listed);
  EXPECT_EQ(mixed_precision_class("Conv", s, &listed), MixedPrecisionClass::kAlways);
  EXPECT_TRUE(listed);
  s.overrides["MyCustomOp"] = MixedPrecisionClass::kFollow;
  EXPECT_EQ(mixed_precision_class("MyCustomOp", s, &listed), MixedPrecisionClass::kFollow);
  EXPECT_TRUE(listed);
  EXPECT_STREQ(mixed_precision_class_name(MixedPrecisionClass::kFollow), "follow");
}

}  // namespace
}  // namespace tessera
