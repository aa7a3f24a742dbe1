// Runs differential cases through ONNX Runtime (see ort_oracle.hpp).
#include "ort_oracle.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph_to_onnx.hpp"
#include "tessera/error.hpp"
#include "tessera/npy.hpp"

namespace tessera::test {
namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

std::string read_text(const fs::path& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

}  // namespace

bool onnxruntime_available() {
  static const bool available =
      std::system("python3 -c 'import onnxruntime, numpy' >/dev/null 2>&1") == 0;
  return available;
}

std::map<std::string, OrtResult> run_onnxruntime(const std::vector<OrtCase>& cases) {
  const fs::path root =
      fs::temp_directory_path() / ("tessera_ort_oracle_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::string command = "python3 " + quoted(TESSERA_ORT_ORACLE_SCRIPT);
  for (const OrtCase& c : cases) {
    const fs::path dir = root / c.name;
    fs::create_directories(dir);
    write_graph_as_onnx(c.graph, (dir / "model.onnx").string());
    for (size_t i = 0; i < c.graph.inputs.size(); ++i) {
      const std::string& name = c.graph.value(c.graph.inputs[i]).name;
      const auto it = c.inputs.find(name);
      if (it == c.inputs.end()) {
        throw Error("run_onnxruntime: case '" + c.name + "' has no data for input '" + name + "'");
      }
      write_npy((dir / ("input_" + std::to_string(i) + ".npy")).string(), it->second, true);
    }
    command += " " + quoted(dir.string());
  }
  std::fflush(stdout);
  if (std::system(command.c_str()) != 0) {
    throw Error("run_onnxruntime: '" + std::string(TESSERA_ORT_ORACLE_SCRIPT) +
                "' failed; its case folders are kept in " + root.string());
  }
  std::map<std::string, OrtResult> results;
  for (const OrtCase& c : cases) {
    const fs::path dir = root / c.name;
    OrtResult& r = results[c.name];
    if (fs::exists(dir / "error.txt")) {
      r.error = read_text(dir / "error.txt");
      continue;
    }
    for (size_t i = 0; i < c.graph.outputs.size(); ++i) {
      const fs::path out = dir / ("output_" + std::to_string(i) + ".npy");
      if (!fs::exists(out)) {
        r.error = "ONNX Runtime wrote no " + out.filename().string();
        break;
      }
      r.outputs.push_back(read_npy(out.string()));
    }
  }
  fs::remove_all(root);
  return results;
}

}  // namespace tessera::test
