// The shared differential suite: op cases written once, run on any plugin (with `reference` as
// the fallback for what it does not support) and compared with tessera::run_reference. The
// `reference` plugin itself runs run_reference's kernels, so its instantiation
// (differential_reference_test.cpp) compares with ONNX Runtime instead.
//
// Adding a plugin is one line in its own test file:
//   TESSERA_DIFFERENTIAL_SUITE(mali, "mali:any");
// Tests skip with a message when the plugin has no usable device here, or when it did not take
// any node of a case; they fail when the plugin is not loaded at all (a build problem).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera::test {

struct DifferentialCase {
  std::string name;
  std::function<Graph()> build;
  double tolerance = 1e-5;  // float32: |got - want| <= tol * (1 + |want|); integers exact
  // The graph as an ONNX file has it, for ONNX Runtime, where `build` prepares it as an import
  // does (prepare_graph may fuse nodes into Tessera's own, e.g. int8 units); empty: `build`.
  std::function<Graph()> onnx;
};

const std::vector<DifferentialCase>& differential_cases();
std::vector<std::string> differential_case_names();
// The case named `name`; fails the calling test (returns null) when there is none.
const DifferentialCase* find_differential_case(const std::string& name);

// Same count, dtypes and shapes; float32 within the case's tolerance, other dtypes bit-exact.
// `oracle` names where `want` came from; `context` is appended to a mismatch (the placement).
void expect_outputs_match(const DifferentialCase& c, const std::vector<Tensor>& got,
                          const std::vector<Tensor>& want, const std::string& oracle,
                          const std::string& context);

// Param: (target spec, case name).
class PluginDifferentialTest
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

std::string differential_test_name(
    const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info);

}  // namespace tessera::test

// INSTANTIATE_TEST_SUITE_P pastes the suite name into identifiers, so it must be unqualified.
using tessera::test::PluginDifferentialTest;

#define TESSERA_DIFFERENTIAL_SUITE(prefix, target_spec)                                    \
  INSTANTIATE_TEST_SUITE_P(                                                                \
      prefix, PluginDifferentialTest,                                                      \
      ::testing::Combine(::testing::Values(std::string(target_spec)),                      \
                         ::testing::ValuesIn(::tessera::test::differential_case_names())), \
      ::tessera::test::differential_test_name)
