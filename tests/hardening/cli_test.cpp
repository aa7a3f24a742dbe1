// The `tessera` command on hostile arguments: every number parsed strictly with a range (errors
// name the flag), output files that would collide get distinct names the user is told about,
// and a classifier output with no rows prints no top-5 (it used to read past the buffer).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include "model_builder.hpp"
#include "tessera/npy.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using test::ModelBuilder;
using test::scratch_dir;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

struct ToolResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

ToolResult run_tool(const std::string& args) {
  const std::string cmd = std::string(TESSERA_TOOL_PATH) + " " + args + " 2>&1";
  ToolResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void expect_refused(const std::string& args, const std::string& message) {
  const ToolResult r = run_tool(args);
  EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
  EXPECT_THAT(r.output, HasSubstr(message)) << args;
}

TEST(CliNumbers, OutOfRangeAndMalformedValuesNameTheFlag) {
  const std::string tune = "tune missing.onnx --targets reference ";
  expect_refused(tune + "--budget -5",
                 "option --budget expects a number from 0 to 604800, got '-5'");
  expect_refused(tune + "--budget nan", "option --budget expects a number");
  expect_refused(tune + "--budget 1e999", "option --budget expects a number");
  expect_refused(tune + "--trials 4294967297",
                 "option --trials expects an integer from 1 to 100000000, got '4294967297'");
  expect_refused(tune + "--trials 12abc", "option --trials expects an integer");
  expect_refused(tune + "--repeats 0", "option --repeats expects an integer from 1");
  expect_refused(tune + "--timeout 0", "option --timeout expects a number from 0.001");
  expect_refused(tune + "--verify -1", "option --verify");
  expect_refused(tune + "--compile-jobs 99999999999999999999", "option --compile-jobs");
  expect_refused("run missing.onnx --repeat 0", "option --repeat expects an integer from 1");
  expect_refused("run missing.onnx --repeat 1e3", "option --repeat expects an integer");
  expect_refused("run missing.onnx --seed -1", "option --seed");
  expect_refused("run missing.onnx --memory-limit 0", "option --memory-limit expects a byte count");
  expect_refused("run missing.onnx --memory-limit 99999999999T",
                 "option --memory-limit expects a byte count");
  expect_refused("bench missing.onnx --warmup -1", "option --warmup");
  expect_refused("zoo resnet-18 --batch 0 -o unused.onnx", "option --batch");
  expect_refused("run m.onnx --input-shape X=1,-3", "'-3' is not a non-negative integer");
}

// Y1 = Relu(X) named "a/b" and Y2 = X * X named "a_b": both map to the file name a_b.npy.
std::string colliding_outputs_model(const fs::path& dir) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {4});
  m.node("Relu", {"X"}, {"a/b"}, "relu");
  m.node("Mul", {"X", "X"}, {"a_b"}, "square");
  m.output("a/b", onnx::TensorProto::FLOAT, {4});
  m.output("a_b", onnx::TensorProto::FLOAT, {4});
  return m.save(dir / "two_outputs.onnx");
}

TEST(CliOutputs, CollidingOutputNamesGetDistinctFiles) {
  const fs::path dir = scratch_dir();
  const std::string model = colliding_outputs_model(dir);
  const std::string x = (dir / "x.npy").string();
  write_npy(x, Tensor::from_vector<float>({4}, {-1.0f, 2.0f, -3.0f, 4.0f}), false);
  const fs::path out = dir / "out";
  const ToolResult r = run_tool("run " + model + " --targets reference --no-packs --repeat 1 " +
                                "--input X=" + x + " --output-dir " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("output 'a_b' is written as 'a_b.2.npy' (another output "
                                  "already maps to 'a_b.npy')"));
  // Each file holds its own output: the oracle is max(x, 0) and x * x.
  EXPECT_EQ(read_npy((out / "a_b.npy").string()).to_float_vector(),
            (std::vector<float>{0.0f, 2.0f, 0.0f, 4.0f}));
  EXPECT_EQ(read_npy((out / "a_b.2.npy").string()).to_float_vector(),
            (std::vector<float>{1.0f, 4.0f, 9.0f, 16.0f}));
  // A second run without --force replaces nothing.
  const ToolResult again = run_tool("run " + model + " --targets reference --no-packs " +
                                    "--repeat 1 --input X=" + x + " --output-dir " + out.string());
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.output, HasSubstr("already exists"));
}

TEST(CliOutputs, EmptyClassifierOutputPrintsNoTop5) {
  const fs::path dir = scratch_dir();
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {0, 1000});
  m.node("Relu", {"X"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT, {0, 1000});
  const std::string model = m.save(dir / "empty.onnx");
  const ToolResult r = run_tool("run " + model + " --targets reference --no-packs --repeat 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("output 'Y': float32 [0, 1000]"));
  EXPECT_THAT(r.output, Not(HasSubstr("top-5")));
}

}  // namespace
}  // namespace tessera
