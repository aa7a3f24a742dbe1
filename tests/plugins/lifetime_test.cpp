// Lifetime: compiled regions keep their plugin library loaded after the host and the session are
// gone; shutdown() runs exactly once, after the last region is released; then the library is
// unloaded. Run under the ASan build as well.
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
    region = PluginRegion::compile(host->find("halfref"), 0, g, {0, 1}, {});
    ASSERT_TRUE(library_is_loaded(lib));
  }  // host gone
  EXPECT_TRUE(library_is_loaded(lib));
  // islandgpu had nothing alive and shut down with the host; halfref must not have.
  EXPECT_EQ(read_file(log_), "islandgpu shutdown\n") << "shutdown ran while a region was alive";

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

  region.reset();  // last reference: shutdown once, then unload
  EXPECT_EQ(read_file(log_), "islandgpu shutdown\nhalfref shutdown\n");
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
  // islandgpu was loaded but never used: it shut down with the host's last reference (the
  // session's), as did halfref once its regions were gone. Each exactly once.
  const std::string log = read_file(log_);
  EXPECT_NE(log.find("halfref shutdown\n"), std::string::npos) << log;
  EXPECT_NE(log.find("islandgpu shutdown\n"), std::string::npos) << log;
  EXPECT_EQ(log.size(), std::string("halfref shutdown\nislandgpu shutdown\n").size()) << log;
  // The reference plugin (which carries its own copy of the op table) unloads cleanly too.
  EXPECT_FALSE(library_is_loaded(std::string(TESSERA_PLUGIN_BUILD_DIR) +
                                 "/libtessera-plugin-reference.so"));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Two hosts (two Sessions built without a shared host) load the same plugin libraries, which keep
// one plugin state each: the first host going away must not shut a plugin down under the second.
TEST_F(Lifetime, TwoHostsShareThePluginAndItShutsDownOnce) {
  const Graph g = relu_add_graph();
  auto a = good_host();
  auto b = good_host();
  SessionOptions options;
  options.targets = {"halfref", "reference"};
  auto on_a = std::make_unique<Session>(g, options, a);
  auto on_b = std::make_unique<Session>(g, options, b);
  a.reset();
  b.reset();
  on_a.reset();  // host A's last user: its plugins are still used through host B
  EXPECT_EQ(read_file(log_), "") << "a plugin shut down while another host still used it";
  const auto inputs = test::random_inputs(g);
  const auto got = on_b->run(inputs);
  const auto want = run_reference(g, inputs);
  ASSERT_EQ(got.size(), 1u);
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    EXPECT_EQ(got[0].data<float>()[i], want[0].data<float>()[i]);
  }
  // A third host loading the library now shares the live plugin, and can compile with it.
  auto c = good_host();
  Session on_c(g, options, c);
  EXPECT_EQ(on_c.plan().nodes.at(0).plugin, "halfref");
  on_b.reset();
  EXPECT_EQ(read_file(log_), "");
  c.reset();
  // on_c still holds host C; its destructor at scope end shuts each plugin down once.
}

TEST_F(Lifetime, LastOfSeveralHostsShutsDownEachPluginOnce) {
  {
    auto a = good_host();
    auto b = good_host();
    EXPECT_NE(b->find("halfref"), nullptr);
  }
  const std::string log = read_file(log_);
  EXPECT_EQ(count(log, "halfref shutdown\n"), 1u) << log;
  EXPECT_EQ(count(log, "islandgpu shutdown\n"), 1u) << log;
}

TEST_F(Lifetime, RefusedPluginsAreUnloaded) {
  const std::string lib =
      std::string(TESSERA_TEST_PLUGIN_BROKEN_DIR) + "/libtessera-plugin-wrongabi.so";
  {
    PluginHostOptions o;
    o.dirs = {TESSERA_TEST_PLUGIN_BROKEN_DIR};
    o.use_environment = false;
    o.use_default_dirs = false;
    const PluginHost host(o);
    EXPECT_FALSE(host.refusals().empty());
    EXPECT_FALSE(library_is_loaded(lib));
  }
}

}  // namespace
}  // namespace tessera
