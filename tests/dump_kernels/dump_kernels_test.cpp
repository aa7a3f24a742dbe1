// Sessions on mali:any and adreno:any with dump_kernels_dir set write the OpenCL C source of each
// program they build: every dumped file holds the plugin's common.cl, the shared helpers.cl and one
// of its kernel files verbatim, names the node(s) it runs, a rerun writes nothing new, and a
// different file of the same name is kept while the source goes to <name>.2.cl (a FIFO there is
// passed over unopened).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>

#include "../plugins/graph_builder.hpp"
#include "fifo_watchdog.hpp"
#include "tessera/session.hpp"
#include "tessera_opencl/runtime.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Tensor random_tensor(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector(std::move(shape), v);
}

Graph conv_relu_pool() {
  Attributes conv;
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.set("strides", std::vector<int64_t>{2, 2});
  return test::GraphBuilder()
      .input("x", {1, 8, 16, 16})
      .constant("w", random_tensor({16, 8, 3, 3}, 1))
      .constant("b", random_tensor({16}, 2))
      .node("Conv", {"x", "w", "b"}, {"c"}, conv, "conv")
      .node("Relu", {"c"}, {"r"}, {}, "relu")
      .node("MaxPool", {"r"}, {"y"}, pool, "pool")
      .output("y")
      .build();
}

// The regular .cl files in `dir` by name (a FIFO the test put there is not read).
std::map<std::string, std::string> cl_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".cl" && e.is_regular_file()) {
      out[e.path().filename().string()] = slurp(e.path());
    }
  }
  return out;
}

// Builds a Session for `plugin`:any,reference dumping into a fresh directory and checks the files.
void check_dump(const std::string& plugin) {
  const fs::path dir = fs::path(TESSERA_BINARY_DIR) / "tests" / "dump_kernels" / ("out-" + plugin);
  fs::remove_all(dir);
  fs::create_directories(dir);
  SessionOptions options;
  options.targets = {plugin + ":any", "reference"};
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  options.pack_mode = PackMode::kNone;
  options.dump_kernels_dir = dir.string();

  // The embedded sources are the files of plugins/opencl/kernels/<the plugin's storage>.
  const fs::path all_kernels = fs::path(TESSERA_SOURCE_DIR) / "plugins" / "opencl" / "kernels";
  const fs::path kernels = all_kernels / (plugin == "mali" ? "buffer" : "image");
  // Every program starts with the storage's common.cl and the shared helpers.cl.
  const std::string common =
      slurp(kernels / "common.cl") + slurp(all_kernels / "common" / "helpers.cl");
  ASSERT_FALSE(common.empty());
  std::map<std::string, std::string> bodies;
  for (const auto& e : fs::directory_iterator(kernels)) {
    if (e.path().extension() == ".cl" && e.path().filename() != "common.cl") {
      bodies[e.path().filename().string()] = slurp(e.path());
    }
  }

  std::set<std::string> on_plugin;
  std::map<std::string, std::string> first;
  {
    Session session(conv_relu_pool(), options);
    for (const NodePlacement& p : session.plan().nodes) {
      if (p.plugin == plugin) on_plugin.insert(p.node);
    }
    ASSERT_TRUE(on_plugin.count("conv")) << "conv did not run on " << plugin;
    first = cl_files(dir);
  }
  ASSERT_FALSE(first.empty()) << "no .cl file written to " << dir;
  // Readable as any new file is (0666 less the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  for (const auto& [name, text] : first) {
    struct stat st {};
    ASSERT_EQ(::stat((dir / name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << name;
  }
  std::set<std::string> nodes_named;
  std::set<std::string> files_used;
  for (const auto& [name, text] : first) {
    // Each dump is a header comment followed by common.cl, helpers.cl and one kernel file,
    // verbatim.
    EXPECT_EQ(text.rfind("/* tessera " + plugin + ": kernel ", 0), 0u) << name;
    const size_t end = text.find(" */\n");
    ASSERT_NE(end, std::string::npos) << name;
    EXPECT_EQ(text.substr(end + 4, common.size()), common) << name;
    std::string matched;
    for (const auto& [file, body] : bodies) {
      if (text.substr(end + 4 + common.size()) == body) matched = file;
    }
    EXPECT_FALSE(matched.empty()) << name << " is not common.cl + one of " << kernels;
    files_used.insert(matched);
    EXPECT_NE(text.find("kernels/" + matched), std::string::npos) << name;
    EXPECT_NE(text.find("build options: -cl-mad-enable"), std::string::npos) << name;
    const std::string header = text.substr(0, end);
    const size_t at = header.find("node(s): ");
    ASSERT_NE(at, std::string::npos) << name;
    const std::string list = ", " + header.substr(at + 9, header.find('\n', at) - at - 9) + ",";
    bool any = false;
    for (const std::string& n : on_plugin) {
      if (list.find(", " + n + ",") == std::string::npos) continue;
      nodes_named.insert(n);
      any = true;
    }
    EXPECT_TRUE(any) << name << " names no node placed on " << plugin << ": " << list;
  }
  EXPECT_TRUE(files_used.count("conv.cl")) << "the Conv program was not dumped";
  // Fused nodes (Relu into Conv) build no program of their own; Conv and MaxPool always do.
  EXPECT_TRUE(nodes_named.count("conv"));
  if (on_plugin.count("pool")) {
    EXPECT_TRUE(nodes_named.count("pool"));
  }

  // Same sources again: nothing new, nothing rewritten.
  { Session again(conv_relu_pool(), options); }
  EXPECT_EQ(cl_files(dir), first);

  // A different file under a dumped name is kept; the source goes to <name>.2.cl.
  const std::string victim = first.begin()->first;
  const std::string stem = victim.substr(0, victim.size() - 3);
  { std::ofstream(dir / victim, std::ios::binary | std::ios::trunc) << "// user's notes\n"; }
  { Session third(conv_relu_pool(), options); }
  const std::map<std::string, std::string> after = cl_files(dir);
  EXPECT_EQ(after.at(victim), "// user's notes\n");
  ASSERT_TRUE(after.count(stem + ".2.cl")) << "no " << stem << ".2.cl";
  EXPECT_EQ(after.at(stem + ".2.cl"), first.at(victim));
  EXPECT_EQ(after.size(), first.size() + 1);

  // A FIFO under a name is passed over without being opened (reading it would block the compile
  // until a writer came); the source goes to the next free name, <name>.3.cl.
  const fs::path fifo = dir / (stem + ".2.cl");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  {
    tessera_test::FifoReadWatchdog watchdog(fifo.string());
    { Session fourth(conv_relu_pool(), options); }
    EXPECT_FALSE(watchdog.stop()) << "the dump opened the FIFO at " << fifo << " to read it";
  }
  const std::map<std::string, std::string> with_fifo = cl_files(dir);
  ASSERT_TRUE(with_fifo.count(stem + ".3.cl")) << "no " << stem << ".3.cl";
  EXPECT_EQ(with_fifo.at(stem + ".3.cl"), first.at(victim));
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(DumpKernels, MaliWritesEmbeddedSources) {
  if (opencl::probe_devices().devices.empty())
    TESSERA_SKIP_WITHOUT("an OpenCL device") << "probe found none";
  check_dump("mali");
}

TEST(DumpKernels, AdrenoWritesEmbeddedSources) {
  bool images = false;
  for (const auto& d : opencl::probe_devices().devices) images |= d.image_support;
  if (!images) TESSERA_SKIP_WITHOUT("an OpenCL device with image support") << "adreno needs images";
  check_dump("adreno");
}

}  // namespace
}  // namespace tessera
