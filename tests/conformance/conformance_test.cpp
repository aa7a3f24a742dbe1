// Runs the ONNX project's backend node tests (one gtest case per test directory) with the
// reference kernels and compares against the expected outputs shipped with each case.
//
// Data: $TESSERA_ONNX_NODE_TESTS, else <build>/onnx-node-tests (fetch_onnx_node_tests.sh).
// A case whose ops are not all registered is skipped. A case listed in known_unsupported.txt must
// raise tessera::UnsupportedError containing the listed reason; every other case must pass; every
// listed case must exist; a known_unsupported case is checked before the missing-op skip.
// ctest runs the cases in shards (tests/conformance/CMakeLists.txt); one case alone:
//   tessera_conformance_tests --gtest_filter='Node/OnnxNodeTest.Run/test_relu'.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "op.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/reference_runner.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-5;

fs::path data_dir() {
  const char* env = std::getenv("TESSERA_ONNX_NODE_TESTS");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path(TESSERA_ONNX_NODE_TESTS_DEFAULT);
}

std::vector<std::string> list_cases() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(data_dir(), ec)) {
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "<case> <reason>" per line; '#' starts a comment.
std::map<std::string, std::string> read_case_list(const char* path) {
  std::map<std::string, std::string> m;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    std::string reason;
    std::getline(fields >> std::ws, reason);
    if (!name.empty()) m[name] = reason;
  }
  return m;
}

const std::map<std::string, std::string>& known_unsupported() {
  static const auto known = read_case_list(TESSERA_KNOWN_UNSUPPORTED);
  return known;
}

// Cases where Tessera deliberately follows ONNX Runtime (and PyTorch) where the ONNX reference
// implementation that generated the test data disagrees; tests/ops_nn/ort_crosscheck_test.cpp
// pins Tessera's values to ONNX Runtime's for each of them.
const std::map<std::string, std::string>& known_differences() {
  static const auto known = read_case_list(TESSERA_KNOWN_DIFFERENCES);
  return known;
}

struct Counts {
  int passed = 0;
  int passed_by_value = 0;  // of `passed`: prepared for their input values (value inputs)
  int expected_unsupported = 0;
  int documented_differences = 0;
  int skipped = 0;
  int failed = 0;
};
Counts& counts() {
  static Counts c;
  return c;
}

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Counts& c = counts();
    std::cout << "conformance: " << c.passed << " passed, " << c.expected_unsupported
              << " expected-unsupported, " << c.documented_differences
              << " documented differences from the ONNX reference, " << c.skipped
              << " skipped (ops not in list)" << std::endl;
    if (c.passed_by_value > 0) {
      std::cout << "conformance: " << c.passed_by_value << " of the passes were prepared for "
                << "their input values (inputs that decide shapes)" << std::endl;
    }
    if (c.failed > 0) std::cout << "conformance: " << c.failed << " failed" << std::endl;
  }
};
const auto* const kSummary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

onnx::ModelProto read_model_proto(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in)) ADD_FAILURE() << path << ": protobuf parse failed";
  return model;
}

// Ops `graph` and its If branches and Loop bodies use that the registry lacks ("domain:op" for
// other domains). If and Loop are core's (preparation inlines and unrolls them), not op files.
void add_missing_ops(const onnx::GraphProto& graph, const std::set<std::string>& have,
                     std::set<std::string>& missing) {
  for (const auto& node : graph.node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      missing.insert(node.domain() + ":" + node.op_type());
    } else if (node.op_type() == "If" || node.op_type() == "Loop") {
      for (const auto& a : node.attribute()) {
        if (a.has_g()) add_missing_ops(a.g(), have, missing);
      }
    } else if (have.count(node.op_type()) == 0) {
      missing.insert(node.op_type());
    }
  }
}

std::set<std::string> missing_ops(const onnx::ModelProto& model) {
  const std::vector<std::string> ops = ops::registered_ops();
  const std::set<std::string> have(ops.begin(), ops.end());
  std::set<std::string> missing;
  add_missing_ops(model.graph(), have, missing);
  return missing;
}

std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

struct DataSet {
  fs::path dir;
  std::vector<fs::path> input_files;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

// Reads every test_data_set_*. A file that cannot be read (an element type Tessera lacks, a
// SequenceProto) is remembered in `deferred` rather than thrown, so that the model's own problems
// (opset, non-tensor inputs) are what a case reports first.
std::vector<DataSet> read_data_sets(const fs::path& case_dir, std::exception_ptr& deferred) {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      dirs.push_back(entry.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  auto read = [&](const fs::path& p) {
    try {
      return read_onnx_tensor_file(p.string());
    } catch (...) {
      if (!deferred) deferred = std::current_exception();
      return Tensor();
    }
  };
  std::vector<DataSet> sets;
  for (const fs::path& dir : dirs) {
    DataSet set;
    set.dir = dir;
    set.input_files = numbered_files(dir, "input_");
    for (const fs::path& p : set.input_files) set.inputs.push_back(read(p));
    for (const fs::path& p : numbered_files(dir, "output_")) set.outputs.push_back(read(p));
    sets.push_back(std::move(set));
  }
  return sets;
}

// Returns "" when `actual` matches `expected` (np.allclose for floats, exact otherwise).
std::string compare(const Tensor& expected, const Tensor& actual) {
  if (expected.dtype() != actual.dtype()) {
    return std::string("dtype ") + dtype_name(actual.dtype()) + ", expected " +
           dtype_name(expected.dtype());
  }
  if (expected.shape() != actual.shape()) {
    return "shape " + shape_str(actual.shape()) + ", expected " + shape_str(expected.shape());
  }
  const bool floating = expected.dtype() == DType::kFloat32 || expected.dtype() == DType::kFloat16;
  int bad = 0;
  std::ostringstream first;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    bool ok;
    if (floating) {
      const double e = expected.scalar_as_double(i);
      const double a = actual.scalar_as_double(i);
      ok = (std::isnan(e) && std::isnan(a)) || e == a ||
           std::fabs(a - e) <= kAtol + kRtol * std::fabs(e);
    } else {
      ok = expected.scalar_as_int64(i) == actual.scalar_as_int64(i);
    }
    if (!ok && bad++ == 0) {
      first << "element " << i << ": got " << actual.scalar_as_double(i) << ", expected "
            << expected.scalar_as_double(i);
    }
  }
  if (bad == 0) return "";
  return std::to_string(bad) + " of " + std::to_string(expected.numel()) +
         " elements differ; first at " + first.str();
}

// Compares one data set's results; appends failure descriptions.
void check_outputs(const Graph& graph, const DataSet& set, const std::vector<Tensor>& outputs,
                   std::vector<std::string>& failures) {
  if (outputs.size() != set.outputs.size()) {
    failures.push_back(set.dir.filename().string() + ": " + std::to_string(outputs.size()) +
                       " outputs, expected " + std::to_string(set.outputs.size()));
    return;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string diff = compare(set.outputs[i], outputs[i]);
    if (!diff.empty()) {
      failures.push_back(set.dir.filename().string() + " output " + std::to_string(i) + " ('" +
                         graph.value(graph.outputs[i]).name + "'): " + diff);
    }
  }
}

// Imports and runs every data set; returns failure descriptions (empty when all match).
//
// The node tests feed values such as Slice's starts or Expand's shape as runtime inputs. Import
// leaves such a graph unprepared with those inputs as value inputs, and the reference runner
// prepares it for each data set's values: the path a Session takes (`by_value` reports it).
std::vector<std::string> run_case(const fs::path& case_dir, const onnx::ModelProto& model,
                                  bool& by_value) {
  const std::string model_path = (case_dir / "model.onnx").string();
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<std::string> input_names;
  for (const auto& in : model.graph().input()) {
    if (initializers.count(in.name()) == 0) input_names.push_back(in.name());
  }
  std::exception_ptr deferred;
  const std::vector<DataSet> sets = read_data_sets(case_dir, deferred);
  ImportOptions options;
  // The data sets fix every input's shape, including dims the model leaves symbolic.
  if (!sets.empty()) {
    for (size_t i = 0; i < input_names.size() && i < sets[0].inputs.size(); ++i) {
      if (!sets[0].inputs[i].empty())
        options.input_shapes[input_names[i]] = sets[0].inputs[i].shape();
    }
  }
  std::vector<std::string> failures;
  const Graph graph = import_onnx_file(model_path, options);
  by_value = !graph.value_inputs.empty();
  if (deferred) std::rethrow_exception(deferred);
  for (const DataSet& set : sets) {
    std::map<std::string, Tensor> feeds;
    for (size_t i = 0; i < input_names.size() && i < set.inputs.size(); ++i) {
      feeds[input_names[i]] = set.inputs[i];
    }
    check_outputs(graph, set, run_reference(graph, feeds), failures);
  }
  return failures;
}

class OnnxNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNodeTest, Run) {
  const std::string name = GetParam();
  const fs::path case_dir = data_dir() / name;
  const onnx::ModelProto model = read_model_proto(case_dir / "model.onnx");

  // A listed case is checked before the missing-op skip: its reason (an opset, an element type)
  // is raised at import whether or not its op is registered, so no entry waits on an op.
  auto known = known_unsupported().find(name);
  if (known != known_unsupported().end()) {
    bool by_value = false;
    try {
      run_case(case_dir, model, by_value);
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find(known->second), std::string::npos)
          << "UnsupportedError does not contain the reason listed in known_unsupported.txt ('"
          << known->second << "'): " << e.what();
      if (!HasFailure()) ++counts().expected_unsupported;
      return;
    } catch (const std::exception& e) {
      ++counts().failed;
      FAIL() << "listed as unsupported, but raised a different error: " << e.what();
    }
    ++counts().failed;
    FAIL() << "listed in known_unsupported.txt but ran without UnsupportedError; remove it there";
  }

  const std::set<std::string> missing = missing_ops(model);
  if (!missing.empty()) {
    ++counts().skipped;
    std::string list;
    for (const auto& op : missing) list += (list.empty() ? "" : ", ") + op;
    GTEST_SKIP() << "ops not registered: " << list;
  }

  std::vector<std::string> failures;
  bool by_value = false;
  try {
    failures = run_case(case_dir, model, by_value);
  } catch (const std::exception& e) {
    failures.push_back(e.what());
  }
  if (by_value) std::cout << "  (prepared for its input values: inputs decide shapes)\n";
  if (auto diff = known_differences().find(name); diff != known_differences().end()) {
    if (failures.empty()) {
      ++counts().failed;
      FAIL() << "listed in known_differences.txt but now matches the ONNX data; remove it there";
    }
    ++counts().documented_differences;
    std::cout << "  documented difference from the ONNX reference: " << diff->second << "\n";
    return;
  }
  if (failures.empty()) {
    ++counts().passed;
    if (by_value) ++counts().passed_by_value;
    return;
  }
  ++counts().failed;
  for (const auto& f : failures) ADD_FAILURE() << f;
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Node, OnnxNodeTest, ::testing::ValuesIn(list_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxNodeTest);

// An entry of known_unsupported.txt or known_differences.txt is checked only when its case exists
// (known_differences.txt: and its ops are registered, else the case is skipped first). An entry
// that checks nothing fails here; with `need_ops` false only the case's existence is required.
void expect_every_entry_reaches_its_check(const std::map<std::string, std::string>& entries,
                                          const char* file, bool need_ops) {
  const std::vector<std::string> cases = list_cases();
  ASSERT_FALSE(cases.empty()) << "no ONNX node tests under " << data_dir();
  const std::set<std::string> present(cases.begin(), cases.end());
  for (const auto& entry : entries) {
    const std::string& name = entry.first;
    if (present.count(name) == 0) {
      ADD_FAILURE() << file << ": '" << name << "' is not an ONNX node test case under "
                    << data_dir() << "; remove the entry";
      continue;
    }
    if (!need_ops) continue;
    std::string list;
    for (const auto& op : missing_ops(read_model_proto(data_dir() / name / "model.onnx"))) {
      list += (list.empty() ? "" : ", ") + op;
    }
    EXPECT_TRUE(list.empty()) << file << ": '" << name << "' is never checked: the case is "
                              << "skipped first because these ops are not registered: " << list
                              << "; remove the entry";
  }
}

TEST(OnnxNodeTests, EveryKnownUnsupportedEntryIsChecked) {
  expect_every_entry_reaches_its_check(known_unsupported(), TESSERA_KNOWN_UNSUPPORTED, false);
}

TEST(OnnxNodeTests, EveryKnownDifferenceEntryIsChecked) {
  expect_every_entry_reaches_its_check(known_differences(), TESSERA_KNOWN_DIFFERENCES, true);
}

TEST(OnnxNodeTests, DataIsPresent) {
  EXPECT_FALSE(list_cases().empty())
      << "no ONNX node tests under " << data_dir() << "; run tests/conformance/"
      << "fetch_onnx_node_tests.sh " << data_dir() << " or set TESSERA_ONNX_NODE_TESTS";
}

}  // namespace
}  // namespace tessera
