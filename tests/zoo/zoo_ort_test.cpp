// Every zoo network through Tessera's ONNX import and reference kernels, compared with ONNX
// Runtime on the same seeded input (tests/zoo/compare_with_ort.py does the ORT side).
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/npy.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/reference_runner.hpp"
#include "zoo.hpp"
#include "test_requirements.hpp"

namespace {

namespace fs = std::filesystem;

bool have_onnxruntime() {
  static const bool available =
      std::system("python3 -c 'import onnx, onnxruntime, numpy' >/dev/null 2>&1") == 0;
  return available;
}

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

// Builds `name`, runs it with the reference kernels, and has ORT check the outputs.
void compare_with_ort(const std::string& name, int64_t batch) {
  if (!have_onnxruntime()) TESSERA_SKIP_WITHOUT("ONNX Runtime") << "python3 -c 'import onnx, onnxruntime, numpy' failed";
  std::string id;
  for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  const fs::path dir =
      fs::temp_directory_path() /
      ("tessera_zoo_ort_" + id + "_b" + std::to_string(batch) + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string model_path = (dir / "model.onnx").string();
  tessera::zoo::write_zoo_model(name, tessera::zoo::ZooOptions{batch, 1}, model_path, false);

  const tessera::Graph graph = tessera::import_onnx_file(model_path);
  ASSERT_EQ(graph.inputs.size(), 1u);
  ASSERT_EQ(graph.outputs.size(), 2u);
  ASSERT_EQ(graph.value(graph.outputs[0]).name, "output");
  ASSERT_EQ(graph.value(graph.outputs[1]).name, "logits");

  const tessera::Shape input_shape = graph.value(graph.inputs[0]).shape;
  tessera::Tensor input(tessera::DType::kFloat32, input_shape);
  std::mt19937_64 rng(2024);
  float* x = input.data<float>();
  for (int64_t i = 0; i < input.numel(); ++i) {
    // U(-1.7, 1.7): unit variance, like a normalised image.
    x[i] = static_cast<float>(-1.7 + 3.4 * static_cast<double>(rng() >> 11) * 0x1.0p-53);
  }
  const std::vector<tessera::Tensor> outputs = tessera::run_reference(graph, {{"data", input}});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].shape(), (tessera::Shape{batch, 1000}));
  EXPECT_EQ(outputs[1].shape(), (tessera::Shape{batch, 1000}));

  const std::string input_path = (dir / "input.npy").string();
  const std::string output_path = (dir / "output.npy").string();
  const std::string logits_path = (dir / "logits.npy").string();
  tessera::write_npy(input_path, input, false);
  tessera::write_npy(output_path, outputs[0], false);
  tessera::write_npy(logits_path, outputs[1], false);

  const std::string command = std::string("python3 ") + quoted(TESSERA_ZOO_COMPARE_SCRIPT) +
                              " --model " + quoted(model_path) + " --input " + quoted(input_path) +
                              " --expected " + quoted(output_path) + " --expected-logits " +
                              quoted(logits_path) + " --name " +
                              quoted(name + (batch == 1 ? "" : " batch " + std::to_string(batch)));
  std::fflush(stdout);
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << "ONNX Runtime disagrees with the reference kernels on " << name
                       << " (see the zoo-vs-ort lines above); files kept in " << dir;
  if (status == 0) fs::remove_all(dir);
}

class ZooVersusOrt : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooVersusOrt, ReferenceKernelsMatchOnnxRuntime) {
  compare_with_ort(GetParam(), 1);
}

// vgg-16 has its own test below so that ctest can label it `slow`.
std::vector<std::string> networks_but_vgg() {
  std::vector<std::string> names;
  for (const std::string& name : tessera::zoo::zoo_names()) {
    if (name != "vgg-16") names.push_back(name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllNetworks, ZooVersusOrt, ::testing::ValuesIn(networks_but_vgg()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id;
                           for (char c : info.param) {
                             id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return id;
                         });

// A batch above 1 goes through the same path; squeezenet keeps it cheap.
TEST(ZooVersusOrtBatch, SqueezenetBatchTwoMatchesOnnxRuntime) {
  compare_with_ort("squeezenet_v1.1", 2);
}

// 15.5 GMAC and 550 MB of weights: minutes on the naive kernels, labelled `slow` in ctest.
TEST(ZooVersusOrtSlow, Vgg16MatchesOnnxRuntime) {
  compare_with_ort("vgg-16", 1);
}

}  // namespace
