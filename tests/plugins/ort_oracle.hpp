// ONNX Runtime as an oracle for graphs built in memory: the reference plugin's kernels are the
// ones tessera::run_reference runs, so its differential cases are checked against values that
// come from a different implementation. ORT runs in python3 (tests/plugins/ort_oracle.py), one
// process for a whole batch of cases.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera::test {

struct OrtCase {
  std::string name;  // unique within a batch; names the case's folder and its result
  Graph graph;
  std::map<std::string, Tensor> inputs;  // by graph input name
};

struct OrtResult {
  std::vector<Tensor> outputs;  // in graph output order
  std::string error;            // set when ONNX Runtime refused or failed the case
};

// Whether python3 imports onnxruntime and numpy here (checked once per process).
bool onnxruntime_available();

// Writes each case as model.onnx + input_<i>.npy, runs ort_oracle.py once over all of them and
// reads output_<i>.npy back. Throws tessera::Error when the helper itself cannot run; a case ORT
// fails on gets its error text in its result instead.
std::map<std::string, OrtResult> run_onnxruntime(const std::vector<OrtCase>& cases);

}  // namespace tessera::test
