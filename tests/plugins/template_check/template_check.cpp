// template_check MODEL.onnx: runs MODEL with targets template,reference (plugins found through
// the installed plugin dir and TESSERA_PLUGIN_PATH), checks every Relu ran on `template`, and
// compares all outputs bit for bit with the reference runner. Exit 0 only if all holds.
#include <cstdio>
#include <cstring>
#include <random>

#include "tessera/onnx_import.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: template_check MODEL.onnx\n");
    return 2;
  }
  try {
    tessera::Graph graph = tessera::import_onnx_file(argv[1]);
    tessera::SessionOptions options;
    options.targets = {"template", "reference"};
    tessera::Session session(graph, options);
    int on_template = 0;
    for (const auto& p : session.plan().nodes) {
      std::printf("%-12s %-8s %-10s %s\n", p.node.c_str(), p.op_type.c_str(), p.plugin.c_str(),
                  p.reason.c_str());
      if (p.op_type == "Relu" && p.plugin != "template") {
        std::fprintf(stderr, "FAIL: %s not placed on template\n", p.node.c_str());
        return 1;
      }
      on_template += p.plugin == "template";
    }
    if (on_template == 0) {
      std::fprintf(stderr, "FAIL: no node on template\n");
      return 1;
    }
    std::map<std::string, tessera::Tensor> inputs;
    std::mt19937 rng(3);
    std::normal_distribution<float> dist;
    for (tessera::ValueId id : graph.inputs) {
      const auto& v = graph.value(id);
      tessera::Tensor t(v.dtype, v.shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
      inputs[v.name] = t;
    }
    const auto got = session.run(inputs);
    const auto want = tessera::run_reference(graph, inputs);
    for (size_t i = 0; i < want.size(); ++i) {
      if (got[i].shape() != want[i].shape() ||
          std::memcmp(got[i].raw(), want[i].raw(), want[i].nbytes()) != 0) {
        std::fprintf(stderr, "FAIL: output %zu differs from the reference\n", i);
        return 1;
      }
    }
    std::printf("OK: %d node(s) on template, %zu output(s) match the reference exactly\n",
                on_template, want.size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
