// The C API (tessera/tessera_c.h) against the C++ Session on the reference kernels (the oracle):
// a small conv network with two inputs and two outputs on `cpu`, its metadata, runs from several
// threads, caller-owned outputs, the C++ layer over it (tessera/tessera.hpp), and every kind of
// bad argument answered with TESSERA_FAILED and a message naming it.
#include "tessera/tessera.hpp"
#include "tessera/tessera_c.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "builder.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/pack.hpp"  // engine_version
#include "tessera/session.hpp"

namespace {

// conv 3x3 (8 -> 16) + relu on x, added to y; outputs the sum and its global average. With
// `open_batch`, the batch dimension of every input and output is the symbol "N".
std::string two_port_model(bool open_batch = false) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("tessera_capi_" + std::to_string(getpid()) + (open_batch ? "_open" : "") + ".onnx"))
          .string();
  tessera::zoo::detail::ModelBuilder b("capi", 7);
  auto x = b.input("x", {1, 8, 12, 12});
  auto y = b.input("y", {1, 16, 12, 12});
  tessera::zoo::detail::ConvSpec conv;
  conv.channels = 16;
  conv.bias = true;
  conv.kernel = {3, 3};
  conv.pad = {1, 1};
  auto sum = b.add(b.relu(b.conv(x, "conv", conv), "relu"), y, "sum");
  b.output(sum);
  b.output(b.global_avg_pool(sum, "gap"));
  if (open_batch) {
    onnx::GraphProto* g = b.model().mutable_graph();
    for (auto* ports : {g->mutable_input(), g->mutable_output()}) {
      for (onnx::ValueInfoProto& port : *ports) {
        port.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(
            "N");
      }
    }
  }
  std::ofstream(path, std::ios::binary) << b.model().SerializeAsString();
  return path;
}

std::vector<float> pattern(size_t n, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

struct Feeds {
  explicit Feeds(int64_t batch = 1)
      : x(pattern(static_cast<size_t>(batch) * 8 * 12 * 12, 0.0f)),
        y(pattern(static_cast<size_t>(batch) * 16 * 12 * 12, 1.0f)),
        xs{batch, 8, 12, 12},
        ys{batch, 16, 12, 12} {
    views[0] = {TESSERA_DTYPE_FLOAT32, 4, xs.data(), x.data()};
    views[1] = {TESSERA_DTYPE_FLOAT32, 4, ys.data(), y.data()};
  }
  std::vector<float> x, y;
  std::vector<int64_t> xs, ys;
  const char* names[2] = {"x", "y"};
  tessera_tensor_view views[2];
};

// The reference kernels' outputs for the same feeds.
std::vector<tessera::Tensor> oracle(const std::string& model, const Feeds& f) {
  tessera::SessionOptions o;
  o.targets = {"reference"};
  tessera::Session s(tessera::import_onnx_file(model), o);
  return s.run({{"x", tessera::Tensor::from_vector<float>(f.xs, f.x)},
                {"y", tessera::Tensor::from_vector<float>(f.ys, f.y)}});
}

void expect_matches(tessera_outputs* out, const std::vector<tessera::Tensor>& ref) {
  ASSERT_EQ(tessera_outputs_count(out), 2);
  const char* names[2] = {"sum", "gap"};
  for (int32_t i = 0; i < 2; ++i) {
    const char* name = nullptr;
    tessera_tensor_view v{};
    ASSERT_EQ(tessera_outputs_get(out, i, &name, &v), TESSERA_OK) << tessera_last_error();
    EXPECT_STREQ(name, names[i]);
    EXPECT_EQ(v.dtype, TESSERA_DTYPE_FLOAT32);
    const tessera::Tensor& r = ref[static_cast<size_t>(i)];
    ASSERT_EQ(std::vector<int64_t>(v.shape, v.shape + v.rank), r.shape());
    const float* got = static_cast<const float*>(v.data);
    for (int64_t k = 0; k < r.numel(); ++k) {
      const float e = r.data<float>()[k];
      ASSERT_NEAR(got[k], e, 1e-4f * (1.0f + std::fabs(e))) << names[i] << "[" << k << "]";
    }
  }
}

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = two_port_model();
    tessera_session_options_init(&options_);
    options_.targets = "cpu";
  }
  void TearDown() override { std::filesystem::remove(model_); }
  std::string model_;
  tessera_session_options options_{};
};

TEST_F(CApi, RunsOnCpuAsTheReferenceKernelsDoAndDescribesThePorts) {
  tessera_session* s = nullptr;
  ASSERT_EQ(tessera_session_create(model_.c_str(), &options_, &s), TESSERA_OK)
      << tessera_last_error();
  EXPECT_EQ(std::string(tessera_version()), tessera::engine_version());
  ASSERT_EQ(tessera_session_input_count(s), 2);
  ASSERT_EQ(tessera_session_output_count(s), 2);
  const char* name = nullptr;
  tessera_dtype dtype{};
  int32_t rank = 0;
  const int64_t* shape = nullptr;
  ASSERT_EQ(tessera_session_input(s, 1, &name, &dtype, &rank, &shape), TESSERA_OK);
  EXPECT_STREQ(name, "y");
  EXPECT_EQ(dtype, TESSERA_DTYPE_FLOAT32);
  EXPECT_EQ(std::vector<int64_t>(shape, shape + rank), (std::vector<int64_t>{1, 16, 12, 12}));
  ASSERT_EQ(tessera_session_output(s, 1, &name, &dtype, &rank, &shape), TESSERA_OK);
  EXPECT_STREQ(name, "gap");
  EXPECT_EQ(std::vector<int64_t>(shape, shape + rank), (std::vector<int64_t>{1, 16, 1, 1}));
  Feeds f;
  tessera_outputs* out = nullptr;
  ASSERT_EQ(tessera_session_run(s, 2, f.names, f.views, &out), TESSERA_OK) << tessera_last_error();
  expect_matches(out, oracle(model_, f));
  tessera_outputs_release(out);
  tessera_session_release(s);
}

TEST_F(CApi, OneSessionRunsFromSeveralThreads) {
  tessera_session* s = nullptr;
  ASSERT_EQ(tessera_session_create(model_.c_str(), &options_, &s), TESSERA_OK)
      << tessera_last_error();
  Feeds f;
  const std::vector<tessera::Tensor> ref = oracle(model_, f);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 5; ++r) {
        tessera_outputs* out = nullptr;
        ASSERT_EQ(tessera_session_run(s, 2, f.names, f.views, &out), TESSERA_OK)
            << tessera_last_error();
        expect_matches(out, ref);
        tessera_outputs_release(out);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  tessera_session_release(s);
}

// Each bad call fails, leaves the session usable, and says what was wrong.
TEST_F(CApi, BadArgumentsFailWithAMessageNamingThem) {
  tessera_session* s = nullptr;
  EXPECT_EQ(tessera_session_create("/nonexistent/m.onnx", &options_, &s), TESSERA_FAILED);
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(std::string(tessera_last_error()).find("/nonexistent/m.onnx"), std::string::npos)
      << tessera_last_error();
  tessera_session_options bad = options_;
  bad.struct_size = 3;
  EXPECT_EQ(tessera_session_create(model_.c_str(), &bad, &s), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("struct_size 3"), std::string::npos);
  bad = options_;
  bad.precision = "fp8";
  EXPECT_EQ(tessera_session_create(model_.c_str(), &bad, &s), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("'fp8'"), std::string::npos);
  bad = options_;
  bad.targets = "nosuchplugin";
  EXPECT_EQ(tessera_session_create(model_.c_str(), &bad, &s), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("nosuchplugin"), std::string::npos)
      << tessera_last_error();
  // Core names the option; the C caller reads the field it sets.
  bad.targets = "cpu[";
  EXPECT_EQ(tessera_session_create(model_.c_str(), &bad, &s), TESSERA_FAILED);
  EXPECT_STREQ(tessera_last_error(),
               "tessera_session_create: options.targets entry 'cpu[': '[' has no closing ']'");

  ASSERT_EQ(tessera_session_create(model_.c_str(), &options_, &s), TESSERA_OK)
      << tessera_last_error();
  Feeds f;
  tessera_outputs* out = nullptr;
  EXPECT_EQ(tessera_session_run(s, 1, f.names, f.views, &out), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("no tensor given for input 'y'"),
            std::string::npos)
      << tessera_last_error();
  const char* wrong_names[2] = {"x", "z"};
  EXPECT_EQ(tessera_session_run(s, 2, wrong_names, f.views, &out), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("'z' is not an input of the model"),
            std::string::npos)
      << tessera_last_error();
  const char* twice[2] = {"x", "x"};
  EXPECT_EQ(tessera_session_run(s, 2, twice, f.views, &out), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("input 1 ('x'): given twice"),
            std::string::npos);
  Feeds g;
  g.views[1].dtype = static_cast<tessera_dtype>(42);
  EXPECT_EQ(tessera_session_run(s, 2, g.names, g.views, &out), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("unknown dtype 42"), std::string::npos);
  Feeds h;
  const int64_t huge[4] = {1, 1 << 30, 1 << 30, 1 << 30};
  h.views[0].shape = huge;
  EXPECT_EQ(tessera_session_run(s, 2, h.names, h.views, &out), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("input 0 ('x')"), std::string::npos)
      << tessera_last_error();
  Feeds k;
  k.views[0].rank = 3;  // [1, 8, 12]: a shape the model does not take
  EXPECT_EQ(tessera_session_run(s, 2, k.names, k.views, &out), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("'x'"), std::string::npos)
      << tessera_last_error();
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(tessera_session_run(nullptr, 2, f.names, f.views, &out), TESSERA_FAILED);
  EXPECT_EQ(tessera_session_run(s, 2, f.names, f.views, nullptr), TESSERA_FAILED);
  EXPECT_EQ(tessera_session_input(s, 2, nullptr, nullptr, nullptr, nullptr), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("index 2 outside [0, 2)"), std::string::npos);
  // Still usable after all that.
  ASSERT_EQ(tessera_session_run(s, 2, f.names, f.views, &out), TESSERA_OK) << tessera_last_error();
  expect_matches(out, oracle(model_, f));
  EXPECT_EQ(tessera_outputs_get(out, 5, nullptr, nullptr), TESSERA_FAILED);
  tessera_outputs_release(out);
  tessera_session_release(s);
  tessera_session_release(nullptr);
  tessera_outputs_release(nullptr);
}

TEST_F(CApi, RunIntoWritesCallerBuffersOrNothing) {
  tessera_session* s = nullptr;
  ASSERT_EQ(tessera_session_create(model_.c_str(), &options_, &s), TESSERA_OK)
      << tessera_last_error();
  Feeds f;
  const std::vector<tessera::Tensor> ref = oracle(model_, f);
  std::vector<float> sum(16 * 12 * 12, -7.0f), gap(16, -7.0f);
  std::vector<int64_t> sum_shape(4, -1), gap_shape(4, -1);
  int64_t* shapes[2] = {sum_shape.data(), gap_shape.data()};
  // One float short for 'gap': nothing is written to either buffer.
  tessera_output_buffer small[2] = {{sum.data(), sum.size() * sizeof(float)},
                                    {gap.data(), (gap.size() - 1) * sizeof(float)}};
  EXPECT_EQ(tessera_session_run_into(s, 2, f.names, f.views, 2, small, shapes), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("output 1 ('gap'): the buffer holds 60 bytes"),
            std::string::npos)
      << tessera_last_error();
  EXPECT_EQ(sum[0], -7.0f);
  EXPECT_EQ(sum_shape[0], -1);
  EXPECT_EQ(tessera_session_run_into(s, 2, f.names, f.views, 1, small, shapes), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find("the model has 2 output(s)"), std::string::npos);

  tessera_output_buffer fit[2] = {{sum.data(), sum.size() * sizeof(float)},
                                  {gap.data(), gap.size() * sizeof(float)}};
  ASSERT_EQ(tessera_session_run_into(s, 2, f.names, f.views, 2, fit, shapes), TESSERA_OK)
      << tessera_last_error();
  EXPECT_EQ(sum_shape, ref[0].shape());
  EXPECT_EQ(gap_shape, ref[1].shape());
  const std::vector<float>* got[2] = {&sum, &gap};
  for (size_t i = 0; i < 2; ++i) {
    for (int64_t k = 0; k < ref[i].numel(); ++k) {
      const float e = ref[i].data<float>()[k];
      ASSERT_NEAR((*got[i])[static_cast<size_t>(k)], e, 1e-4f * (1.0f + std::fabs(e))) << k;
    }
  }
  tessera_session_release(s);
}

TEST_F(CApi, CppLayerRunsAsTheReferenceKernelsAndThrowsTheMessage) {
  const uint32_t version = tessera_c_api_version();
  EXPECT_EQ(version >> 16, uint32_t{TESSERA_C_API_VERSION_MAJOR});
  EXPECT_EQ(version & 0xffffu, uint32_t{TESSERA_C_API_VERSION_MINOR});
  tessera::api::require_compatible_library();

  tessera::api::SessionOptions o;
  o.targets = "cpu";
  tessera::api::Session s(model_, o);
  ASSERT_EQ(s.inputs().size(), 2u);
  EXPECT_EQ(s.input(1).name, "y");
  EXPECT_EQ(s.input(1).element_count(), 16u * 12 * 12);
  EXPECT_EQ(s.output(1).name, "gap");
  Feeds f;
  const std::vector<tessera::Tensor> ref = oracle(model_, f);
  tessera::api::Outputs out = s.run(
      {{"x", tessera::api::view(f.x, s.input(0))}, {"y", tessera::api::view(f.y, s.input(1))}});
  ASSERT_EQ(out.size(), 2);
  for (int32_t i = 0; i < 2; ++i) {
    const tessera::Tensor& r = ref[static_cast<size_t>(i)];
    EXPECT_EQ(out.name(i), s.output(static_cast<size_t>(i)).name);
    ASSERT_EQ(out.shape(i), r.shape());
    EXPECT_EQ(out.dtype(i), TESSERA_DTYPE_FLOAT32);
    for (int64_t k = 0; k < r.numel(); ++k) {
      const float e = r.data<float>()[k];
      ASSERT_NEAR(out.data<float>(i)[k], e, 1e-4f * (1.0f + std::fabs(e))) << k;
    }
  }
  std::vector<float> sum(16 * 12 * 12), gap(16);
  const auto shapes = s.run_into(
      {{"x", tessera::api::view(f.x, s.input(0))}, {"y", tessera::api::view(f.y, s.input(1))}},
      {{sum.data(), sum.size() * sizeof(float)}, {gap.data(), gap.size() * sizeof(float)}});
  EXPECT_EQ(shapes[1], ref[1].shape());
  for (int64_t k = 0; k < ref[1].numel(); ++k) {
    EXPECT_EQ(gap[static_cast<size_t>(k)], out.data<float>(1)[k]) << k;
  }
  // Failures throw with the library's message: a missing input, a file that is not there.
  try {
    s.run({{"x", tessera::api::view(f.x, s.input(0))}});
    ADD_FAILURE() << "a run without input 'y' did not throw";
  } catch (const tessera::api::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tessera::api::Session("/nonexistent/model.tsp"), tessera::api::Error);
}

// A dimension the model leaves open reads -1, as tessera_c.h promises and the Python binding
// reports; the session then runs at a batch other than the planned one, as the reference
// kernels do.
TEST_F(CApi, OpenDimensionsReadMinusOneAndRunAtAnotherSize) {
  const std::string model = two_port_model(/*open_batch=*/true);
  tessera_session* s = nullptr;
  ASSERT_EQ(tessera_session_create(model.c_str(), &options_, &s), TESSERA_OK)
      << tessera_last_error();
  const std::vector<int64_t> want[2] = {{-1, 8, 12, 12}, {-1, 16, 12, 12}};
  for (int32_t i = 0; i < 2; ++i) {
    int32_t rank = 0;
    const int64_t* shape = nullptr;
    ASSERT_EQ(tessera_session_input(s, i, nullptr, nullptr, &rank, &shape), TESSERA_OK);
    EXPECT_EQ(std::vector<int64_t>(shape, shape + rank), want[i]) << "input " << i;
  }
  Feeds f(/*batch=*/3);
  tessera_outputs* out = nullptr;
  ASSERT_EQ(tessera_session_run(s, 2, f.names, f.views, &out), TESSERA_OK) << tessera_last_error();
  expect_matches(out, oracle(model, f));
  tessera_outputs_release(out);
  tessera_session_release(s);
  std::filesystem::remove(model);
}

// options.plugin_dir must be an absolute path to a directory; the host alone would only record a
// relative or missing one as not searched and go on without the caller's plugins.
TEST_F(CApi, PluginDirThatIsRelativeOrMissingFailsNamingIt) {
  struct Case {
    std::string dir, message;
  };
  const Case cases[] = {
      {"plugins/lib",
       "options.plugin_dir 'plugins/lib' is a relative path; plugin directories "
       "must be absolute"},
      {"/nonexistent/tessera/plugins",
       "options.plugin_dir: plugin directory '/nonexistent/tessera/plugins' does not exist"},
      {model_, "options.plugin_dir: plugin directory '" + model_ + "' is not a directory"},
  };
  for (const Case& c : cases) {
    tessera_session_options o = options_;
    o.plugin_dir = c.dir.c_str();
    tessera_session* s = nullptr;
    EXPECT_EQ(tessera_session_create(model_.c_str(), &o, &s), TESSERA_FAILED) << c.dir;
    EXPECT_EQ(s, nullptr);
    EXPECT_NE(std::string(tessera_last_error()).find(c.message), std::string::npos)
        << tessera_last_error();
  }
  // The build tree's plugin folder, given absolute, is searched: the session runs as the
  // reference kernels do.
  const std::string dir = std::string(TESSERA_BINARY_DIR) + "/plugins/lib";
  tessera_session_options o = options_;
  o.plugin_dir = dir.c_str();
  tessera_session* s = nullptr;
  ASSERT_EQ(tessera_session_create(model_.c_str(), &o, &s), TESSERA_OK) << tessera_last_error();
  Feeds f;
  tessera_outputs* out = nullptr;
  ASSERT_EQ(tessera_session_run(s, 2, f.names, f.views, &out), TESSERA_OK) << tessera_last_error();
  expect_matches(out, oracle(model_, f));
  tessera_outputs_release(out);
  tessera_session_release(s);
}

// A FIFO given as the model or package path fails at once naming it, instead of blocking until
// a writer comes.
TEST_F(CApi, FifoAsTheModelFailsNamingItWithoutBlocking) {
  const std::string fifo = (std::filesystem::temp_directory_path() /
                            ("tessera_capi_fifo_" + std::to_string(getpid()) + ".tsp"))
                               .string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  tessera_session* s = nullptr;
  EXPECT_EQ(tessera_session_create(fifo.c_str(), &options_, &s), TESSERA_FAILED);
  const std::string message = tessera_last_error();
  std::filesystem::remove(fifo);
  EXPECT_NE(message.find("'" + fifo + "' is a FIFO (named pipe); expected a regular file"),
            std::string::npos)
      << message;
}

}  // namespace
