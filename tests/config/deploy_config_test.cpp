// Deployment YAML: valid files load into the expected typed values; every kind of bad input gives
// an error naming the file, line and key path; pathological YAML is refused without crashing.
#include "tessera/deploy_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "config_test_util.hpp"

namespace tessera {
namespace {

using testing::error_of;
using ::testing::HasSubstr;
using testing::ScratchDir;

TEST(DeployConfig, FullFileLoadsIntoTypedValues) {
  ScratchDir dir;
  dir.write("models/net.onnx", "not parsed here");
  dir.write("packs/mine.yaml", "not parsed here");
  std::filesystem::create_directories(dir.file("plugins"));
  const std::string path = dir.write("deploy/app.yaml", R"(schema_version: 1
model: ../models/net.onnx
inputs:
  - name: data
    shape: [2, 3, 224, 224]
    dtype: float16
  - {name: mask, shape: [2, 7], dtype: int64}
targets:
  - plugin: mali
    device: "Mali-G78"
    threads: 0
    memory: image
    options: {fast_math: true, tile: 4}
  - {plugin: cpu, threads: 4}
  - reference
precision: fp16-acc32
plugin_dirs: [../plugins, /tmp]
packs:
  mode: files
  files: [../packs/mine.yaml]
cache_dir: cache
partition: {min_island_nodes: 3, allow_fallback: true}
)");
  const DeployConfig c = load_deploy_config(path);
  const std::string root = std::filesystem::path(dir.path()).lexically_normal().string();
  EXPECT_EQ(c.source_path, root + "/deploy/app.yaml");
  EXPECT_EQ(c.model_path, root + "/models/net.onnx");
  EXPECT_FALSE(c.zoo.has_value());
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(c.inputs[0].name, "data");
  EXPECT_EQ(c.inputs[0].shape, (Shape{2, 3, 224, 224}));
  EXPECT_EQ(c.inputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(c.inputs[1].name, "mask");
  EXPECT_EQ(c.inputs[1].shape, (Shape{2, 7}));
  EXPECT_EQ(c.inputs[1].dtype, DType::kInt64);
  ASSERT_EQ(c.targets.size(), 3u);
  EXPECT_EQ(c.targets[0].plugin, "mali");
  EXPECT_EQ(c.targets[0].device, "Mali-G78");
  EXPECT_EQ(c.targets[0].threads, 0);
  EXPECT_EQ(c.targets[0].memory, MemoryKind::kImage);
  EXPECT_EQ(c.targets[0].line, 9);
  ASSERT_EQ(c.targets[0].options.size(), 2u);
  EXPECT_EQ(c.targets[0].options[0].name, "fast_math");
  EXPECT_EQ(c.targets[0].options[0].value, "true");
  EXPECT_EQ(c.targets[0].options[1].name, "tile");
  EXPECT_EQ(c.targets[0].options[1].value, "4");
  EXPECT_EQ(c.targets[1].plugin, "cpu");
  EXPECT_EQ(c.targets[1].device, "any");
  EXPECT_EQ(c.targets[1].threads, 4);
  EXPECT_EQ(c.targets[1].memory, MemoryKind::kBuffer);
  EXPECT_EQ(c.targets[2].plugin, "reference");
  EXPECT_EQ(c.targets[2].device, "any");
  EXPECT_EQ(c.precision, Precision::kFp16Acc32);
  EXPECT_EQ(c.plugin_dirs, (std::vector<std::string>{root + "/plugins", "/tmp"}));
  EXPECT_EQ(c.packs.mode, PackMode::kFiles);
  EXPECT_EQ(c.packs.files, (std::vector<std::string>{root + "/packs/mine.yaml"}));
  EXPECT_EQ(c.cache_dir, root + "/deploy/cache");
  EXPECT_EQ(c.partition.min_island_nodes, 3);
  EXPECT_TRUE(c.partition.allow_fallback);
}

TEST(DeployConfig, MixedPrecisionListsOverrideTheDefaults) {
  ScratchDir dir;
  const std::string path = dir.write("mp.yaml", R"(zoo: mobilenet_v2
precision: fp16
mixed_precision:
  always: [Sin]
  follow: [Softmax]
  never: [Conv]
  accuracy_budget: 0.01
)");
  const DeployConfig c = load_deploy_config(path);
  EXPECT_TRUE(c.mixed_precision.enabled);
  EXPECT_DOUBLE_EQ(c.mixed_precision.accuracy_budget, 0.01);
  EXPECT_EQ(mixed_precision_class("Sin", c.mixed_precision), MixedPrecisionClass::kAlways);
  EXPECT_EQ(mixed_precision_class("Softmax", c.mixed_precision), MixedPrecisionClass::kFollow);
  EXPECT_EQ(mixed_precision_class("Conv", c.mixed_precision), MixedPrecisionClass::kNever);
  // Untouched op types keep the default lists.
  EXPECT_EQ(mixed_precision_class("Gemm", c.mixed_precision), MixedPrecisionClass::kAlways);
  const std::string off =
      dir.write("off.yaml", "zoo: mobilenet_v2\nmixed_precision: {enabled: false}\n");
  EXPECT_FALSE(load_deploy_config(off).mixed_precision.enabled);
}

TEST(DeployConfig, ZooShorthandAndDefaults) {
  ScratchDir dir;
  const DeployConfig c = load_deploy_config(dir.write("a.yaml", "zoo: mobilenet_v2\n"));
  ASSERT_TRUE(c.zoo.has_value());
  EXPECT_EQ(c.zoo->name, "mobilenet_v2");
  EXPECT_EQ(c.zoo->batch, 1);
  EXPECT_EQ(c.zoo->seed, 0u);
  EXPECT_TRUE(c.model_path.empty());
  ASSERT_EQ(c.targets.size(), 1u);
  EXPECT_EQ(c.targets[0].plugin, "reference");
  EXPECT_EQ(c.targets[0].device, "any");
  EXPECT_EQ(c.precision, Precision::kFp32);
  EXPECT_EQ(c.packs.mode, PackMode::kAuto);
  EXPECT_TRUE(c.packs.files.empty());
  EXPECT_TRUE(c.plugin_dirs.empty());
  EXPECT_TRUE(c.cache_dir.empty());
  EXPECT_EQ(c.partition.min_island_nodes, 1);
  EXPECT_FALSE(c.partition.allow_fallback);

  const DeployConfig z = load_deploy_config(dir.write(
      "b.yaml", "zoo: {name: resnet18, batch: 8, seed: 42}\ntargets: [\"mali:1\", cpu]\n"));
  EXPECT_EQ(z.zoo->name, "resnet18");
  EXPECT_EQ(z.zoo->batch, 8);
  EXPECT_EQ(z.zoo->seed, 42u);
  ASSERT_EQ(z.targets.size(), 2u);
  EXPECT_EQ(z.targets[0].plugin, "mali");
  EXPECT_EQ(z.targets[0].device, "1");
  EXPECT_EQ(z.targets[1].plugin, "cpu");
}

TEST(DeployConfig, ZooNamesMayHoldDotsButNotPaths) {
  ScratchDir dir;
  EXPECT_EQ(load_deploy_config(dir.write("a.yaml", "zoo: squeezenet_v1.1\n")).zoo->name,
            "squeezenet_v1.1");
  for (const char* bad : {"../x", ".hidden", "a/b"}) {
    try {
      load_deploy_config(dir.write("b.yaml", std::string("zoo: \"") + bad + "\"\n"));
      FAIL() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a plain name"), std::string::npos) << e.what();
    }
  }
}

TEST(DeployConfig, ShippedConfigsLoad) {
  const DeployConfig d = load_deploy_config(testing::source_path("configs/default.yaml"));
  ASSERT_TRUE(d.zoo.has_value());
  EXPECT_EQ(d.zoo->name, "mobilenet_v2");
  ASSERT_EQ(d.targets.size(), 2u);
  EXPECT_EQ(d.targets[0].plugin, "cpu");
  EXPECT_EQ(d.targets[1].plugin, "reference");
  for (const char* name : {"reference", "cpu", "mali", "adreno", "clml"}) {
    SCOPED_TRACE(name);
    const DeployConfig e =
        load_deploy_config(testing::source_path(std::string("configs/examples/") + name + ".yaml"));
    ASSERT_FALSE(e.targets.empty());
    EXPECT_EQ(e.targets[0].plugin, name);
  }
  const DeployConfig adreno =
      load_deploy_config(testing::source_path("configs/examples/adreno.yaml"));
  EXPECT_EQ(adreno.targets[0].memory, MemoryKind::kImage);
}

// Each bad input: the message names the file, the line:column and the key path.
struct BadCase {
  const char* name;
  const char* yaml;
  const char* where;    // "line:col: key.path"
  const char* message;  // another part of the message
};

// Printed by its name: gtest's default (the struct's bytes) would put pointer values into the
// ctest names, which then differ between builds and runs.
void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.name;
}

class DeployConfigBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(DeployConfigBad, ErrorNamesFileLineAndKeyPath) {
  ScratchDir dir;
  const std::string path = dir.write("bad.yaml", GetParam().yaml);
  const std::string msg = error_of([&] { load_deploy_config(path); });
  EXPECT_THAT(msg, HasSubstr(path + ":" + GetParam().where));
  EXPECT_THAT(msg, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DeployConfigBad,
    ::testing::Values(
        BadCase{"MixedPrecisionWithFp32",
                "zoo: mobilenet_v2\nmixed_precision: {never: [Softmax]}\n",
                "2:18: mixed_precision.enabled", "set precision: fp16 or fp16-acc32"},
        BadCase{"MixedPrecisionOpOnTwoLists",
                "zoo: mobilenet_v2\nprecision: fp16\nmixed_precision:\n  always: [Conv]\n"
                "  never: [Softmax, Conv]\n",
                "5:10: mixed_precision.never", "op type 'Conv' is on both 'always' and 'never'"},
        BadCase{"MixedPrecisionOpTypeInTheWrongCase",
                "zoo: mobilenet_v2\nprecision: fp16\nmixed_precision:\n  always: [softmax]\n",
                "4:12: mixed_precision.always[0]",
                "op type 'softmax' is not a registered op (op types are ONNX names, matched "
                "exactly); the closest registered op type is 'Softmax'"},
        BadCase{"MixedPrecisionMisspelledOpType",
                "zoo: mobilenet_v2\nprecision: fp16\nmixed_precision:\n"
                "  never: [Conv, LayerNormalisation]\n",
                "4:17: mixed_precision.never[1]",
                "op type 'LayerNormalisation' is not a registered op (op types are ONNX names, "
                "matched exactly); the closest registered op type is 'LayerNormalization'"},
        BadCase{"OutOfRangeThreadsAboveTheBound",
                "zoo: mobilenet_v2\ntargets:\n  - {plugin: cpu, threads: 1025}\n",
                "3:28: targets[0].threads", "value 1025 is out of range [0, 1024]"},
        BadCase{"UnknownTopKeySuggests", "zoo: mobilenet_v2\ntrgets: [cpu]\n", "2:1: trgets",
                "unknown key 'trgets' in (top level); did you mean 'targets'?"},
        BadCase{"UnknownNestedKeySuggests",
                "zoo: mobilenet_v2\ntargets:\n  - plugin: cpu\n  - plugin: mali\n    thread: 2\n",
                "5:5: targets[1].thread", "did you mean 'threads'?"},
        BadCase{"UnknownKeyFarFromAnyHasNoSuggestion", "zoo: mobilenet_v2\nbanana: 1\n",
                "2:1: banana", "unknown key 'banana' in (top level) (known keys:"},
        BadCase{"WrongTypeThreads",
                "zoo: mobilenet_v2\ntargets:\n  - cpu\n  - {plugin: mali, threads: four}\n",
                "4:29: targets[1].threads", "expected an integer, got 'four'"},
        BadCase{"QuotedNumberIsAString",
                "zoo: mobilenet_v2\ntargets:\n  - {plugin: cpu, threads: \"4\"}\n",
                "3:28: targets[0].threads", "expected an integer"},
        BadCase{"OutOfRangeThreads",
                "zoo: mobilenet_v2\ntargets:\n  - cpu\n  - plugin: mali\n    threads: -2\n",
                "5:14: targets[1].threads", "value -2 is out of range [0, 1024]"},
        BadCase{"TargetsNotAList", "zoo: mobilenet_v2\ntargets: {plugin: cpu}\n", "2:10: targets",
                "expected a list, got a map"},
        BadCase{"BadMemoryKind", "zoo: mobilenet_v2\ntargets:\n  - {plugin: mali, memory: imag}\n",
                "3:28: targets[0].memory", "did you mean 'image'?"},
        BadCase{"BadPrecision", "zoo: mobilenet_v2\nprecision: fp8\n", "2:12: precision",
                "'fp8' is not one of: fp32, fp16, fp16-acc32"},
        BadCase{"ShapeDimZero",
                "zoo: mobilenet_v2\ninputs:\n  - name: data\n    shape: [1, 0, 4]\n",
                "4:16: inputs[0].shape[1]", "out of range"},
        BadCase{"MissingModelFile", "model: nets/missing.onnx\n", "1:8: model",
                "missing.onnx' does not exist"},
        BadCase{"NoModelAtAll", "targets: [cpu]\n", "1:1: model",
                "required key 'model' is missing"},
        BadCase{"ModelAndZoo", "zoo: a\nmodel: b.onnx\n", "1:6: zoo", "not both"},
        BadCase{"MissingPluginDir", "zoo: a\nplugin_dirs: [/tmp, nowhere]\n",
                "2:21: plugin_dirs[1]", "nowhere' does not exist"},
        BadCase{"MissingPackFile", "zoo: a\npacks:\n  mode: files\n  files: [p.yaml]\n",
                "4:11: packs.files[0]", "p.yaml' does not exist"},
        BadCase{"PackFilesWithoutMode", "zoo: a\npacks:\n  files: [p.yaml]\n", "3:10: packs.files",
                "only used with 'mode: files'"},
        BadCase{"BadBoolean", "zoo: a\npartition:\n  allow_fallback: maybe\n",
                "3:19: partition.allow_fallback", "expected true or false"},
        BadCase{"DuplicateKey", "zoo: a\nprecision: fp16\nprecision: fp32\n", "3:1: precision",
                "duplicate key"},
        BadCase{"DuplicateTarget", "zoo: a\ntargets: [cpu, \"cpu:any\"]\n", "2:16: targets[1]",
                "listed twice"},
        BadCase{"RootIsAList", "- a\n- b\n", "1:1: (top level)", "a map of keys"},
        BadCase{"MalformedFlow", "zoo: a\ntargets: [cpu, mali\nprecision: fp16\n",
                "3:", "malformed YAML"},
        BadCase{"MalformedIndent", "zoo: a\ntargets:\n  - cpu\n bad: 1\n", "4:", "malformed YAML"},
        // yaml-cpp would read the first document and drop the rest without a word.
        BadCase{"SecondDocument", "zoo: a\n---\nprecision: fp16\n", "2:1:",
                "a second YAML document starts here"},
        BadCase{"DirectiveAfterContent", "zoo: a\n%precision: fp16\n", "2:",
                "a line starting with '%'"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(DeployConfigPathological, TenThousandFlowLevelsIsAnErrorNotACrash) {
  ScratchDir dir;
  const std::string text = "zoo: a\nx: " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  const std::string path = dir.write("deep.yaml", text);
  const std::string msg = error_of([&] { load_deploy_config(path); });
  EXPECT_THAT(msg, HasSubstr(path + ":2: x[...]: YAML nesting deeper than 64 levels"));
}

TEST(DeployConfigPathological, TenThousandBlockLevelsIsAnErrorNotACrash) {
  ScratchDir dir;
  std::string text = "zoo: a\n";
  for (int i = 0; i < 10000; ++i) text += std::string(static_cast<size_t>(i), ' ') + "k:\n";
  const std::string path = dir.write("deep_block.yaml", text);
  const std::string msg = error_of([&] { load_deploy_config(path); });
  // The first line past 64 open levels: "zoo" and k0..k62 make 64, k63 is on line 65.
  EXPECT_THAT(
      msg, HasSubstr(path +
                     ":66: k.k.k.k.(57 more levels).k.k.k.k: YAML nesting deeper than 64 levels"));
}

TEST(DeployConfigPathological, DashNestingOnOneLineIsCounted) {
  ScratchDir dir;
  std::string text = "zoo: a\nx:\n  ";
  for (int i = 0; i < 200; ++i) text += "- ";
  text += "1\n";
  const std::string path = dir.write("dashes.yaml", text);
  EXPECT_THAT(
      error_of([&] { load_deploy_config(path); }),
      HasSubstr(path +
                ":3: x[][][].(193 more levels)[][][][]: YAML nesting deeper than 64 levels"));
}

TEST(DeployConfigPathological, BillionLaughsIsRefused) {
  ScratchDir dir;
  // Ten levels of ten-fold aliases: 10^10 nodes if expanded, a few hundred bytes on disk.
  std::string text = "zoo: a\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  const std::string path = dir.write("lol.yaml", text);
  const std::string msg = error_of([&] { load_deploy_config(path); });
  // The walk stops inside the first alias chain: l1's first element expands l0 and so on.
  EXPECT_THAT(msg, HasSubstr(path + ":"));
  EXPECT_THAT(msg, ::testing::MatchesRegex(".*lol.yaml:[0-9]+:[0-9]+: l[0-9](\\[[0-9]\\])+: YAML "
                                           "document expands to more than 1000000 nodes.*"));
  EXPECT_THAT(msg, HasSubstr("billion laughs"));
}

TEST(DeployConfigPathological, ModestAliasUseIsFine) {
  ScratchDir dir;
  const std::string path = dir.write(
      "alias.yaml", "zoo: a\ninputs:\n  - {name: x, shape: &s [1, 3]}\n  - {name: y, shape: *s}\n");
  const DeployConfig c = load_deploy_config(path);
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(c.inputs[1].shape, (Shape{1, 3}));
}

TEST(DeployConfig, EmptyFileAndNonScalarOption) {
  ScratchDir dir;
  const std::string empty = dir.write("empty.yaml", "");
  EXPECT_THAT(error_of([&] { load_deploy_config(empty); }),
              HasSubstr(empty + ":1:1: (top level): a deployment file is a map of keys"));
  const std::string opt =
      dir.write("opt.yaml", "zoo: a\ntargets:\n  - plugin: cpu\n    options: {a: [1]}\n");
  EXPECT_THAT(error_of([&] { load_deploy_config(opt); }),
              HasSubstr(opt + ":4:18: targets[0].options.a: expected a scalar value, got a list"));
}

TEST(DeployConfig, MissingFileNamesIt) {
  EXPECT_THAT(error_of([] { load_deploy_config("/nonexistent/dir/x.yaml"); }),
              HasSubstr("'/nonexistent/dir/x.yaml'"));
}

}  // namespace
}  // namespace tessera
