// The `tessera` command on hostile arguments: every number and input shape parsed strictly
// (errors name the flag), --plugin-dir checked, usage errors on stderr and --json errors as one
// object on stdout, .npz inputs read by name (stored and deflated, damage refused), output files
// that would collide get distinct names the user is told about, and a classifier output with no
// rows prints no top-5 (it used to read past the buffer).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

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

// Runs a shell command line; `output` is what it wrote on stdout.
ToolResult run_command(const std::string& cmd) {
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

ToolResult run_tool(const std::string& args) {
  return run_command(std::string(TESSERA_TOOL_PATH) + " " + args + " 2>&1");
}

// stdout and stderr apart, for what must go to one and not the other.
struct SplitResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

SplitResult run_tool_split(const std::string& args) {
  // Beside the test's scratch directory, which scratch_dir() would empty.
  const fs::path err =
      fs::path(::testing::TempDir()) / ("tessera_cli_stderr_" + std::to_string(getpid()) + ".txt");
  const ToolResult r =
      run_command(std::string(TESSERA_TOOL_PATH) + " " + args + " 2>" + err.string());
  std::ifstream in(err);
  return {r.exit_code, r.output,
          std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
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
  expect_refused("tune missing.onnx --targets reference --compile-jobs -1",
                 "option --compile-jobs expects an integer from 0 to 1024, got '-1'");
}

// "4,,3" was read as [4, 3] and a second --input-shape for an input replaced the first: both are
// errors naming the option and what is wrong.
TEST(CliNumbers, InputShapesWithAnEmptyDimensionOrGivenTwiceAreRefused) {
  expect_refused("run m.onnx --input-shape x=4,,3",
                 "--input-shape x=4,,3: dimension 1 is empty (give every dimension, e.g. "
                 "x=1,3,224,224)");
  expect_refused("plan m.onnx --input-shape x=4,3,", "--input-shape x=4,3,: dimension 2 is empty");
  expect_refused("compile m.onnx -o m.tsp --input-shape x=,4", "x=,4: dimension 0 is empty");
  expect_refused("bench m.onnx --input-shape x=4,3 --input-shape y=1 --input-shape x=1,3",
                 "--input-shape is given twice for input 'x' (x=4,3 and x=1,3); give each input "
                 "once");
}

// A Relu model whose input X has an open batch: --input-shape fixes it, and the plan's input
// signature shows the dims read as given.
TEST(CliNumbers, InputShapeGivenOnceFixesTheDims) {
  const fs::path dir = scratch_dir();
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {-1, 3});
  m.node("Relu", {"X"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT);
  const std::string model = m.save(dir / "open.onnx");
  const ToolResult r =
      run_tool("plan " + model + " --targets reference --no-packs --input-shape X=4,3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\"input_signature\": \"X: float32 [4, 3]\""));
}

// The thread bound is kMaxThreads (1024) everywhere: --threads above it is refused by name.
TEST(CliNumbers, ThreadsAboveTheBoundAreRefused) {
  const fs::path dir = scratch_dir();
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {4});
  m.node("Relu", {"X"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT, {4});
  const std::string model = m.save(dir / "relu.onnx");
  expect_refused("run " + model + " --targets reference --threads 1025",
                 "option --threads expects an integer from 1 to 1024, got '1025'");
  expect_refused("bench " + model + " --targets reference --threads 1025",
                 "option --threads expects an integer from 0 to 1024, got '1025'");
}

// Y = Relu(X), X of 4 floats.
std::string relu_model(const fs::path& dir) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {4});
  m.node("Relu", {"X"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT, {4});
  return m.save(dir / "relu.onnx");
}

// --plugin-dir relative or missing was dropped without a word (the plugin host only notes it as
// not searched): refused naming the directory, in the C API's words for options.plugin_dir.
TEST(CliPluginDir, RelativeMissingOrFileIsRefusedNamingIt) {
  const fs::path dir = scratch_dir();
  const std::string model = relu_model(dir);
  const std::string file = dir / "relu.onnx";
  for (const std::string& command :
       {"plan " + model, "compile " + model + " -o x.tsp", std::string("info")}) {
    expect_refused(command + " --plugin-dir plugins/lib",
                   "--plugin-dir 'plugins/lib' is a relative path; plugin directories must be "
                   "absolute (the working directory is never searched)");
    expect_refused(command + " --plugin-dir /nonexistent/tessera/plugins",
                   "--plugin-dir: plugin directory '/nonexistent/tessera/plugins' does not exist");
    expect_refused(command + " --plugin-dir " + file,
                   "--plugin-dir: plugin directory '" + file + "' is not a directory");
  }
  // The build tree's plugin folder, absolute, is searched: the node runs on its reference plugin.
  const ToolResult r = run_tool("plan " + model + " --targets reference --no-packs --plugin-dir " +
                                TESSERA_PLUGIN_BUILD_DIR);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("reference=1"));
}

// Usage errors go to stderr with exit code 2 and nothing on stdout; --help goes to stdout.
TEST(CliErrors, UsageErrorsGoToStderr) {
  for (const std::string& command :
       {std::string("run"), std::string("bench"), std::string("plan"), std::string("compile"),
        std::string("info extra"), std::string("zoo"), std::string(""), std::string("tune"),
        std::string("pack")}) {
    const SplitResult r = run_tool_split(command);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.out, "") << command;
    EXPECT_THAT(r.err, HasSubstr("usage: tessera")) << command;
  }
  for (const char* command : {"run", "bench", "plan", "compile", "info", "zoo"}) {
    const SplitResult r = run_tool_split(command + std::string(" --help"));
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_THAT(r.out, HasSubstr(std::string("usage: tessera ") + command)) << command;
    EXPECT_EQ(r.err, "") << command;
  }
}

// Options a core error names are the command's flags.
TEST(CliErrors, CoreErrorsNameTheFlags) {
  expect_refused("tune missing.onnx --targets 'cpu['",
                 "tessera tune: error: --targets entry 'cpu[': '[' has no closing ']'\n");
}

// With --json a failing command prints exactly one object, {"error": MESSAGE}, on stdout and the
// message on stderr, and exits non-zero: a script parsing stdout gets JSON either way.
TEST(CliErrors, JsonErrorsAreOneObjectOnStdout) {
  const fs::path dir = scratch_dir();
  const std::string missing = (dir / "missing.onnx").string();
  const std::string message =
      "cannot open '" + missing + "' (ONNX model): No such file or directory";
  for (const std::string command : {"run", "bench", "plan", "compile -o x.tsp"}) {
    const SplitResult r = run_tool_split(command + " " + missing + " --json");
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_EQ(r.out, "{\"error\": \"" + message + "\"}\n") << command;
    EXPECT_THAT(r.err, HasSubstr("error: " + message)) << command;
  }
  // A bad option before or after --json, and tune, which reports its own errors.
  SplitResult r = run_tool_split("info --bogus --json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, ::testing::StartsWith("{\"error\": \"unknown option --bogus (known:"));
  r = run_tool_split("tune " + missing + " --targets reference --trials 0 --json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "{\"error\": \"option --trials expects an integer from 1 to 100000000, got "
            "'0'\"}\n");
  EXPECT_THAT(r.err, HasSubstr("tessera tune: error: option --trials expects"));
  // A usage error with --json: the usage on stderr, its first line as the error on stdout.
  r = run_tool_split("plan --json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "{\"error\": \"usage: tessera plan MODEL.onnx|DEPLOY.yaml [options]\"}\n");
  EXPECT_THAT(r.err, HasSubstr("--targets LIST"));
  // Success is still the command's own object alone.
  const std::string model = relu_model(dir);
  r = run_tool_split("plan " + model + " --targets reference --no-packs --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("{"));
  EXPECT_THAT(r.out, Not(HasSubstr("\"error\"")));
}

// Z = X * Y + X over two [2, 3] inputs; tests/hardening/data holds its inputs as np.savez
// (stored) and np.savez_compressed (deflated) archives written by numpy 2.4:
// x = [[-1, -0.5, 0], [0.5, 1, 1.5]], y = [[2, -1, 0.25], [3, 1.5, -2]].
std::string two_input_model(const fs::path& file, const std::vector<int64_t>& x_shape = {2, 3}) {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, x_shape);
  m.input("y", onnx::TensorProto::FLOAT, {2, 3});
  m.node("Mul", {"x", "y"}, {"p"}, "mul");
  m.node("Add", {"p", "x"}, {"z"}, "add");
  m.output("z", onnx::TensorProto::FLOAT, {2, 3});
  return m.save(file);
}

std::string npz_fixture(const std::string& name) {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/hardening/data/" + name;
}

const std::vector<float> kX = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
const std::vector<float> kY = {2.0f, -1.0f, 0.25f, 3.0f, 1.5f, -2.0f};

// z = x * y + x, the oracle, element by element.
std::vector<float> expected_z() {
  std::vector<float> z(kX.size());
  for (size_t i = 0; i < z.size(); ++i) z[i] = kX[i] * kY[i] + kX[i];
  return z;
}

TEST(CliNpzInputs, StoredAndDeflatedArchivesGiveEveryInputByName) {
  const fs::path dir = scratch_dir();
  const std::string model = two_input_model(dir / "two_inputs.onnx");
  for (const char* archive : {"xy_stored.npz", "xy_deflated.npz"}) {
    const fs::path out = dir / archive;
    const ToolResult r =
        run_tool("run " + model + " --targets reference --no-packs --repeat 1 --input " +
                 npz_fixture(archive) + " --output-dir " + out.string());
    ASSERT_EQ(r.exit_code, 0) << archive << "\n" << r.output;
    EXPECT_THAT(r.output, Not(HasSubstr("random data"))) << archive;
    EXPECT_EQ(read_npy((out / "z.npy").string()).to_float_vector(), expected_z()) << archive;
  }
  // An archive and a .npy file together: y from the archive, x from the file.
  const std::string x = (dir / "x.npy").string();
  write_npy(x, Tensor::from_vector<float>({2, 3}, kX), false);
  const fs::path out = dir / "mixed";
  const ToolResult r =
      run_tool("run " + model + " --targets reference --no-packs --repeat 1 --input " +
               npz_fixture("y_only.npz") + " --input x=" + x + " --output-dir " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_npy((out / "z.npy").string()).to_float_vector(), expected_z());
  // bench reads them the same way.
  const ToolResult b = run_tool("bench " + model + " --targets reference --no-packs --repeat 1 " +
                                "--warmup 0 --input " + npz_fixture("xy_deflated.npz"));
  EXPECT_EQ(b.exit_code, 0) << b.output;
}

TEST(CliNpzInputs, ArraysThatAreNotInputsOrDoNotFitAreRefusedByName) {
  const fs::path dir = scratch_dir();
  const std::string model = two_input_model(dir / "two_inputs.onnx");
  const std::string xy = npz_fixture("xy_stored.npz");
  const std::string run = "run " + model + " --targets reference --no-packs --repeat 1 ";
  ModelBuilder other;
  other.input("a", onnx::TensorProto::FLOAT, {2, 3});
  other.node("Relu", {"a"}, {"b"}, "relu");
  other.output("b", onnx::TensorProto::FLOAT, {2, 3});
  expect_refused("run " + other.save(dir / "a.onnx") + " --targets reference --input " + xy,
                 "--input " + xy + ": array 'x' names no input of the model (its inputs: 'a')");
  expect_refused(
      "run " + two_input_model(dir / "x13.onnx", {1, 3}) + " --targets reference --input " + xy,
      "--input " + xy + ": array 'x' is float32 [2, 3] but input 'x' is float32 [1, 3]");
  const std::string x = (dir / "x.npy").string();
  write_npy(x, Tensor::from_vector<float>({2, 3}, kX), false);
  expect_refused(
      run + "--input " + xy + " --input x=" + x,
      "--input: input 'x' is given twice (by " + xy + " and x=" + x + "); give each input once");
  expect_refused(run + "--input x=" + x + " --input x=" + x, "input 'x' is given twice");
  expect_refused(
      run + "--input x=" + xy,
      "--input x=" + xy + ": an .npz holds its arrays by name; give it as --input " + xy);
  expect_refused(run + "--input " + npz_fixture("with_text.npz"),
                 npz_fixture("with_text.npz") +
                     ": not a readable .npz archive: member 'notes.txt' is not an .npy array");
  expect_refused(run + "--input " + x,
                 "--input expects NAME=FILE.npy or FILE.npz, got '" + x + "'");
}

// A damaged archive is an error naming the file and the member, never wrong values: a flipped
// data byte fails the member's CRC-32, a method other than stored or deflated is named.
TEST(CliNpzInputs, DamagedOrUnsupportedArchivesAreRefused) {
  const fs::path dir = scratch_dir();
  const std::string model = two_input_model(dir / "two_inputs.onnx");
  std::ifstream in(npz_fixture("xy_stored.npz"), std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string run = "run " + model + " --targets reference --no-packs --repeat 1 --input ";

  std::string flipped = good;
  const size_t magic = flipped.find("\x93NUMPY");
  ASSERT_NE(magic, std::string::npos);
  flipped[magic + 128 + 2] ^= 0x40;  // inside x's data (its header is 128 bytes)
  test::write_file(dir / "flipped.npz", flipped);
  expect_refused(run + (dir / "flipped.npz").string(),
                 (dir / "flipped.npz").string() +
                     ": not a readable .npz archive: member 'x.npy': CRC-32 mismatch");

  std::string bzip2 = good;
  for (size_t at = bzip2.find("PK\x01\x02"); at != std::string::npos;
       at = bzip2.find("PK\x01\x02", at + 4)) {
    bzip2[at + 10] = 12;  // the central directory's method field
  }
  test::write_file(dir / "bzip2.npz", bzip2);
  expect_refused(run + (dir / "bzip2.npz").string(),
                 "member 'x.npy' is compressed with zip method 12; only stored (np.savez) and "
                 "deflated (np.savez_compressed) members are read");

  test::write_file(dir / "cut.npz", good.substr(0, good.size() / 2));
  expect_refused(run + (dir / "cut.npz").string(),
                 "cut.npz: not a readable .npz archive: no end-of-central-directory record");
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
