// Pieces shared by `run`, `bench` and `plan`: input loading/generation and the runner that
// executes a graph on the chosen targets.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera::cli {

// Reads `NAME=FILE.npy` specs; inputs not given get seeded random data (normal(0,1) for floats,
// small non-negative integers otherwise). Prints the seed when it generates anything. Errors name
// the input and file.
std::map<std::string, Tensor> load_or_generate_inputs(const Graph& graph,
                                                      const std::vector<std::string>& specs,
                                                      uint64_t seed);

// A value name made safe as a file name (path separators and odd characters become '_').
std::string safe_file_name(const std::string& name);

// Executes a prepared graph on the targets given as "a,b:selector,c" ("" = default order).
class Runner {
 public:
  Runner(Graph graph, const std::string& targets);
  ~Runner();
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);
  // Prints, per node, where it runs (plugin and reason), and any fallback warnings.
  void print_placement() const;
  const Graph& graph() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::cli
