// What the tuner's test files share: the tessera command, a worker command, temp paths and the
// one-Relu model the tunetest plugin tunes.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "builder.hpp"
#include "tessera/tuner.hpp"

namespace tessera::tune::test {

inline const char* const kTessera = TESSERA_BINARY_DIR "/tools/tessera";

// `program` started as the tessera command starts its measuring workers.
inline WorkerCommand worker_command(const char* program) {
  return {program, "tune", "--worker"};
}

// A path in the temp directory unique to this test process (test runs may overlap).
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tessera_tune_" + std::to_string(getpid()) + "_" + name))
      .string();
}

inline std::string relu_model() {
  const std::string path = temp_path("relu.onnx");
  zoo::detail::ModelBuilder b("relu", 5);
  auto x = b.input("x", {1, 4, 6, 6});
  b.output(b.relu(x, "relu1"));
  std::ofstream(path, std::ios::binary) << b.model().SerializeAsString();
  return path;
}

}  // namespace tessera::tune::test
