// Lifetime: a compiled region keeps its plugin instance, and so its library, alive after the host
// and the session are gone; each instance is destroyed exactly once, after its last region is
// released; then the library is unloaded. Run under the ASan build as well.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "graph_builder.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

bool library_is_loaded(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  ::dlclose(handle);  // drops the reference RTLD_NOLOAD just took
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class Lifetime : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = (std::filesystem::temp_directory_path() /
            ("tessera-shutdown-" + std::to_string(::getpid()) + ".log"))
               .string();
    std::filesystem::remove(log_);
    ::setenv("TESSERA_TEST_SHUTDOWN_LOG", log_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TESSERA_TEST_SHUTDOWN_LOG");
    std::filesystem::remove(log_);
  }
  static std::shared_ptr<PluginHost> good_host() {
    PluginHostOptions o;
    o.dirs = {TESSERA_TEST_PLUGIN_GOOD_DIR, TESSERA_PLUGIN_BUILD_DIR};
    o.use_environment = false;
    o.use_default_dirs = false;
    return std::make_shared<PluginHost>(o);
  }
  std::string log_;
};

Graph relu_add_graph() {
  return test::GraphBuilder()
      .input("x", {3, 4})
      .node("Relu", {"x"}, {"r"})
      .node("Add", {"r", "x"}, {"y"})
      .output("y")
      .build();
}

TEST_F(Lifetime, RegionOutlivesHostAndKeepsLibraryLoaded) {
  const std::string lib =
      std::string(TESSERA_TEST_PLUGIN_GOOD_DIR) + "/libtessera-plugin-halfref.so";
  const Graph g = relu_add_graph();
  std::shared_ptr<PluginRegion> region;
  {
    auto host = good_host();
    std::shared_ptr<PluginInstance> instance = host->find("halfref")->create_instance();
    const std::vector<PluginDeviceInfo> devices = instance->probe("");
    ASSERT_EQ(devices.size(), 1u);
    region = PluginRegion::compile(instance, devices[0].id, g, {0, 1}, {});
    ASSERT_TRUE(library_is_loaded(lib));
  }  // host and the caller's instance reference gone
  EXPECT_TRUE(library_is_loaded(lib));
  EXPECT_EQ(read_file(log_), "") << "an instance was destroyed while its region was alive";

  const auto inputs = test::random_inputs(g);
  const Tensor& x = inputs.at("x");
  Tensor y(DType::kFloat32, {3, 4});
  const void* in[] = {x.raw()};
  void* out[] = {y.raw()};
  ASSERT_EQ(region->input_values().size(), 1u);
  ASSERT_EQ(region->output_values().size(), 1u);
  region->execute(in, out);
  const Tensor want = run_reference(g, inputs)[0];
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(y.data<float>()[i], want.data<float>()[i]);

  region.reset();  // last reference: the instance is destroyed once, then the library unloads
  EXPECT_EQ(read_file(log_), "halfref destroyed\n");
  EXPECT_FALSE(library_is_loaded(lib));
}

TEST_F(Lifetime, SessionOutlivesTheHostItWasGiven) {
  const Graph g = relu_add_graph();
  auto host = good_host();
  SessionOptions options;
  options.targets = {"halfref", "reference"};
  auto session = std::make_unique<Session>(g, options, host);
  host.reset();
  const auto inputs = test::random_inputs(g);
  const auto got = session->run(inputs);
  const auto want = run_reference(g, inputs);
  ASSERT_EQ(got.size(), 1u);
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    EXPECT_EQ(got[0].data<float>()[i], want[0].data<float>()[i]);
  }
  EXPECT_EQ(read_file(log_), "");
  session.reset();
  EXPECT_EQ(read_file(log_), "halfref destroyed\n");
  // Every library unloads with its last instance, the reference plugin (which carries its own
  // copy of the op table) too.
  EXPECT_FALSE(library_is_loaded(std::string(TESSERA_TEST_PLUGIN_GOOD_DIR) +
                                 "/libtessera-plugin-halfref.so"));
  EXPECT_FALSE(library_is_loaded(std::string(TESSERA_PLUGIN_BUILD_DIR) +
                                 "/libtessera-plugin-reference.so"));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Two sessions each get an instance of their own, on one host or two: destroying one session
// destroys its instance alone, and the other keeps running on its own.
TEST_F(Lifetime, EachSessionHasItsOwnInstance) {
  const Graph g = relu_add_graph();
  auto a = good_host();
  auto b = good_host();
  SessionOptions options;
  options.targets = {"halfref", "reference"};
  auto on_a = std::make_unique<Session>(g, options, a);
  auto on_b = std::make_unique<Session>(g, options, b);
  auto on_b2 = std::make_unique<Session>(g, options, b);
  a.reset();
  b.reset();
  on_a.reset();
  EXPECT_EQ(read_file(log_), "halfref destroyed\n");
  const auto inputs = test::random_inputs(g);
  const auto want = run_reference(g, inputs);
  for (Session* s : {on_b.get(), on_b2.get()}) {
    const auto got = s->run(inputs);
    ASSERT_EQ(got.size(), 1u);
    for (int64_t i = 0; i < want[0].numel(); ++i) {
      EXPECT_EQ(got[0].data<float>()[i], want[0].data<float>()[i]);
    }
  }
  on_b.reset();
  EXPECT_EQ(count(read_file(log_), "halfref destroyed\n"), 2u);
  // A fresh host loading the library now compiles in a fresh instance beside the live one.
  auto c = good_host();
  {
    Session on_c(g, options, c);
    EXPECT_EQ(on_c.plan().nodes.at(0).plugin, "halfref");
  }
  on_b2.reset();
  EXPECT_EQ(count(read_file(log_), "halfref destroyed\n"), 4u);
}

TEST_F(Lifetime, RefusedPluginsAreUnloaded) {
  const std::string lib =
      std::string(TESSERA_TEST_PLUGIN_BROKEN_DIR) + "/libtessera-plugin-wrongabi.so";
  const std::string legacy =
      std::string(TESSERA_TEST_PLUGIN_BROKEN_DIR) + "/libtessera-plugin-legacy.so";
  {
    PluginHostOptions o;
    o.dirs = {TESSERA_TEST_PLUGIN_BROKEN_DIR};
    o.use_environment = false;
    o.use_default_dirs = false;
    const PluginHost host(o);
    EXPECT_FALSE(host.refusals().empty());
    EXPECT_FALSE(library_is_loaded(lib));
    EXPECT_FALSE(library_is_loaded(legacy));
  }
}

}  // namespace
}  // namespace tessera
