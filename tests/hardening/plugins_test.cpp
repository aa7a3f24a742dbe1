// Plugin files are checked before dlopen: a truncated library (formerly SIGBUS inside the loader
// for every command), a file for another machine, a text file, a FIFO, and a file or directory
// anyone can write to are refused with the reason; an intact copy still loads.
#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "model_builder.hpp"
#include "tessera/deploy_config.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const fs::path kReference = fs::path(TESSERA_PLUGIN_BUILD_DIR) / "libtessera-plugin-reference.so";

PluginHostOptions only(const fs::path& dir) {
  PluginHostOptions o;
  o.dirs = {dir.string()};
  o.use_environment = false;
  o.use_default_dirs = false;
  return o;
}

// A fresh 0755 directory NAME holding a copy of the reference plugin as
// libtessera-plugin-FILE_NAME.so (NAME by default; a copy that is to load keeps the name
// "reference", which its table gives).
fs::path dir_with_copy(const std::string& name, const std::string& file_name = "") {
  const fs::path dir = test::scratch_dir() / name;
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms(0755));
  fs::copy_file(kReference,
                dir / ("libtessera-plugin-" + (file_name.empty() ? name : file_name) + ".so"));
  return dir;
}

std::string only_refusal(const PluginHost& host) {
  EXPECT_TRUE(host.plugins().empty());
  if (host.refusals().size() != 1) {
    ADD_FAILURE() << host.refusals().size() << " refusals";
    return "";
  }
  return host.refusals()[0].reason;
}

TEST(PluginFiles, IntactCopyLoads) {
  const PluginHost host(only(dir_with_copy("intact", "reference")));
  ASSERT_NE(host.find("reference"), nullptr);
  EXPECT_FALSE(host.find("reference")->devices().empty());
  EXPECT_TRUE(host.refusals().empty());
}

TEST(PluginFiles, TruncatedLibraryIsRefusedBeforeDlopen) {
  const fs::path dir = dir_with_copy("trunc");
  const fs::path file = dir / "libtessera-plugin-trunc.so";
  fs::resize_file(file, fs::file_size(file) / 2);
  EXPECT_THAT(only_refusal(PluginHost(only(dir))), StartsWith("not loadable: truncated"));
}

TEST(PluginFiles, LibraryForAnotherMachineIsRefused) {
  const fs::path dir = dir_with_copy("arm");
  const fs::path file = dir / "libtessera-plugin-arm.so";
  {
    // e_machine is the 16-bit little-endian field at offset 18 of the ELF header.
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    unsigned char machine[2] = {};
    f.seekg(18);
    f.read(reinterpret_cast<char*>(machine), 2);
    const uint16_t other = (machine[0] | machine[1] << 8) == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
    const char bytes[2] = {static_cast<char>(other & 0xff), static_cast<char>(other >> 8)};
    f.seekp(18);
    f.write(bytes, 2);
  }
  EXPECT_THAT(only_refusal(PluginHost(only(dir))), HasSubstr("an ELF file for machine"));
}

TEST(PluginFiles, TextFileAndFifoAreRefused) {
  const fs::path dir = test::scratch_dir() / "junk";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms(0755));
  std::ofstream(dir / "libtessera-plugin-text.so") << "not an ELF file";
  ASSERT_EQ(::mkfifo((dir / "libtessera-plugin-fifo.so").c_str(), 0644), 0);
  const PluginHost host(only(dir));  // a FIFO formerly blocked here forever
  ASSERT_EQ(host.refusals().size(), 2u);
  EXPECT_EQ(host.refusals()[0].name, "fifo");
  EXPECT_EQ(host.refusals()[0].reason, "not loadable: not a regular file");
  EXPECT_EQ(host.refusals()[1].name, "text");
  EXPECT_THAT(host.refusals()[1].reason, StartsWith("not loadable: not an ELF file"));
}

TEST(PluginFiles, WorldWritableFileOrDirectoryIsRefused) {
  const fs::path file_dir = dir_with_copy("open");
  fs::permissions(file_dir / "libtessera-plugin-open.so", fs::perms(0666));
  EXPECT_THAT(only_refusal(PluginHost(only(file_dir))),
              HasSubstr("the file is writable by every user (mode 0666)"));

  const fs::path dir = dir_with_copy("opendir");
  fs::permissions(dir, fs::perms(0777));
  const PluginHost host(only(dir));
  EXPECT_TRUE(host.plugins().empty());
  ASSERT_EQ(host.dirs().size(), 1u);
  EXPECT_THAT(host.dirs()[0].status,
              StartsWith("refused: the directory is writable by every user (mode 0777)"));
}

const PluginRefusal* refusal_of(const PluginHost& host, const std::string& path) {
  for (const PluginRefusal& r : host.refusals()) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

TEST(PluginFiles, EnvironmentPluginShadowingABundledOneIsRefusedUnlessAllowed) {
  // A copy of the bundled reference plugin under the same name on TESSERA_PLUGIN_PATH.
  const fs::path dir = test::scratch_dir() / "shadow";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms(0755));
  const fs::path copy = dir / "libtessera-plugin-reference.so";
  fs::copy_file(kReference, copy);
  ::setenv("TESSERA_PLUGIN_PATH", dir.c_str(), 1);
  PluginHostOptions o;
  o.use_environment = true;
  o.use_default_dirs = true;
  const PluginHost refused(o);
  o.allow_shadowing = true;
  const PluginHost allowed(o);
  ::unsetenv("TESSERA_PLUGIN_PATH");

  const PluginRefusal* r = refusal_of(refused, copy.string());
  ASSERT_NE(r, nullptr);
  EXPECT_THAT(r->reason, AllOf(HasSubstr("shadows the bundled plugin 'reference'"),
                               HasSubstr("allow_plugin_shadowing: true")));
  ASSERT_NE(refused.find("reference"), nullptr);
  EXPECT_TRUE(fs::equivalent(fs::path(refused.find("reference")->path()).parent_path(),
                             fs::path(TESSERA_PLUGIN_BUILD_DIR)));
  // Allowed by the deployment: the copy wins (searched first) and the bundled one is the duplicate.
  ASSERT_NE(allowed.find("reference"), nullptr);
  EXPECT_EQ(allowed.find("reference")->path(), copy.string());
}

// A relative `plugin_dirs` entry in a deployment YAML names a folder next to the YAML file,
// whatever the process's working directory: the cwd here holds a decoy `plugins/` without the
// plugin, and the YAML is loaded by a relative path. The resolved folder's plugin loads and runs
// a model, whose output matches the reference runner.
TEST(PluginFiles, RelativePluginDirsInYamlAreTheYamlFoldersNotTheCwd) {
  const fs::path root = test::scratch_dir() / "relative";
  const fs::path deploy = root / "deploy";
  fs::create_directories(deploy / "plugins");
  fs::create_directories(root / "plugins");  // the decoy a cwd-relative lookup would find
  for (const fs::path& d : {root, deploy, deploy / "plugins", root / "plugins"}) {
    fs::permissions(d, fs::perms(0755));
  }
  const fs::path copy = deploy / "plugins" / "libtessera-plugin-reference.so";
  fs::copy_file(kReference, copy);
  test::ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {4});
  m.node("Relu", {"X"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT, {4});
  m.save(deploy / "m.onnx");
  std::ofstream(deploy / "d.yaml") << "model: m.onnx\nplugin_dirs: [plugins]\n";

  const fs::path cwd = fs::current_path();
  fs::current_path(root);
  DeployConfig cfg;
  try {
    cfg = load_deploy_config("deploy/d.yaml");
  } catch (...) {
    fs::current_path(cwd);
    throw;
  }
  fs::current_path(cwd);
  ASSERT_EQ(cfg.plugin_dirs.size(), 1u);
  EXPECT_EQ(cfg.plugin_dirs[0], (deploy / "plugins").string());

  PluginHostOptions o;
  o.dirs = cfg.plugin_dirs;
  o.use_environment = false;
  o.use_default_dirs = false;
  const auto host = std::make_shared<const PluginHost>(o);
  ASSERT_NE(host->find("reference"), nullptr);
  EXPECT_EQ(host->find("reference")->path(), copy.string());

  SessionOptions so;
  so.targets = {"reference"};
  so.pack_mode = PackMode::kNone;
  Session session(import_onnx_file(cfg.model_path), so, host);
  const Tensor x = Tensor::from_vector<float>({4}, {-2.0f, -0.5f, 0.0f, 3.0f});
  const std::vector<Tensor> out = session.run({{"X", x}});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<Tensor> oracle = run_reference(import_onnx_file(cfg.model_path), {{"X", x}});
  EXPECT_EQ(out[0].to_float_vector(), oracle[0].to_float_vector());
  EXPECT_EQ(out[0].to_float_vector(), (std::vector<float>{0, 0, 0, 3}));
}

}  // namespace
}  // namespace tessera
