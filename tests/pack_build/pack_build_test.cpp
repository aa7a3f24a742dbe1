// `tessera pack build LOG.jsonl... -o OUT.yaml [--force]` on hand-written tuner logs: the pack
// holds the fastest ok record per workload (failed records ignored however fast), its header comes
// from the records, logs mixing plugins or devices are refused naming both, and an existing
// output is only replaced with --force. Also the log records' driver/command fields round-trip.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tessera/pack.hpp"
#include "tessera/tuner.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

struct ToolResult {
  int status = -1;
  std::string output;  // stdout and stderr
};

ToolResult run_tool(const std::string& args) {
  const std::string command = std::string(TESSERA_TOOL_PATH) + " " + args + " 2>&1";
  ToolResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  r.status = pclose(pipe);
  return r;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("tessera_pack_build_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

const char* kConvKey = "conv|in=1x8x16x16,16x8x3x3c,16c|out=1x16x16x16|pads=1,1,1,1|f32|nchw4c";
const char* kReluKey = "relu|in=1x16x16x16|out=1x16x16x16|f32|nchw4c";

std::string record(const std::string& plugin, const std::string& device, const std::string& key,
                   const std::string& schedule, int wg_x, const std::string& status,
                   double median_us) {
  return "{\"workload\": \"" + key + "\", \"plugin\": \"" + plugin + "\", \"device\": \"" + device +
         "\", \"schedule\": \"" + schedule + "\", \"knobs\": {\"wg_x\": " + std::to_string(wg_x) +
         ", \"outputs_per_item\": 2}, \"status\": \"" + status +
         "\", \"median_us\": " + std::to_string(median_us) +
         ", \"error\": \"\", \"timestamp\": \"2026-11-20T10:00:00Z\", \"driver\": \"24.1.2\", "
         "\"command\": \"tessera tune net.onnx --targets mali:any --log tune.jsonl\"}\n";
}

std::string today_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
  return buf;
}

TEST(PackBuild, KeepsFastestOkRecordPerWorkload) {
  const fs::path dir = fresh_dir("best");
  const fs::path log = dir / "tune.jsonl";
  write(log, record("mali", "Mali-G78", kConvKey, "conv2d.direct", 16, "ok", 50.0) +
                 record("mali", "Mali-G78", kConvKey, "conv2d.direct", 32, "ok", 30.0) +
                 // Failed records never win, whatever time they carry.
                 record("mali", "Mali-G78", kConvKey, "conv2d.direct", 64, "wrong-answer", 5.0) +
                 record("mali", "Mali-G78", kConvKey, "conv2d.1x1", 8, "compile", 0.0) +
                 "{\"workload\": \"truncated by a cra\n" +
                 record("mali", "Mali-G78", kReluKey, "relu.blocked", 8, "ok", 4.0));
  const fs::path out = dir / "pack.yaml";
  const ToolResult r = run_tool("pack build " + log.string() + " -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;

  const Pack pack = load_pack(out.string());
  EXPECT_EQ(pack.plugin, "mali");
  EXPECT_EQ(pack.match.device, "Mali-G78");
  EXPECT_EQ(pack.match.driver.text(), "24.1.2");
  EXPECT_EQ(pack.measured.when, today_utc());
  EXPECT_EQ(pack.measured.tool_version, engine_version());
  EXPECT_EQ(pack.measured.how, "tessera pack build " + log.string() +
                                   "; tuned with: tessera tune net.onnx --targets mali:any "
                                   "--log tune.jsonl");
  ASSERT_EQ(pack.entries.size(), 2u);
  const PackEntry* conv = nullptr;
  const PackEntry* relu = nullptr;
  for (const PackEntry& e : pack.entries) {
    if (e.workload == kConvKey) conv = &e;
    if (e.workload == kReluKey) relu = &e;
  }
  ASSERT_NE(conv, nullptr);
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(conv->schedule, "conv2d.direct");
  EXPECT_DOUBLE_EQ(conv->time_us, 30.0);
  ASSERT_EQ(conv->knobs.size(), 2u);
  EXPECT_EQ(conv->knobs[0].name, "wg_x");
  EXPECT_EQ(conv->knobs[0].value, 32);
  EXPECT_EQ(conv->knobs[1].name, "outputs_per_item");
  EXPECT_EQ(conv->knobs[1].value, 2);
  EXPECT_EQ(relu->schedule, "relu.blocked");
  EXPECT_DOUBLE_EQ(relu->time_us, 4.0);
}

TEST(PackBuild, RefusesLogsMixingPluginsOrDevices) {
  const fs::path dir = fresh_dir("mixed");
  const fs::path a = dir / "mali.jsonl";
  const fs::path b = dir / "adreno.jsonl";
  const fs::path c = dir / "other_device.jsonl";
  write(a, record("mali", "Mali-G78", kConvKey, "conv2d.direct", 16, "ok", 50.0));
  write(b, record("adreno", "Adreno 740", kConvKey, "conv2d.direct", 16, "ok", 40.0));
  write(c, record("mali", "Mali-G710", kConvKey, "conv2d.direct", 16, "ok", 40.0));
  const fs::path out = dir / "pack.yaml";

  ToolResult r = run_tool("pack build " + a.string() + " " + b.string() + " -o " + out.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("plugins 'mali'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'adreno'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));

  r = run_tool("pack build " + a.string() + " " + c.string() + " -o " + out.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("devices 'Mali-G78'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'Mali-G710'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(PackBuild, ExistingOutputNeedsForce) {
  const fs::path dir = fresh_dir("force");
  const fs::path log = dir / "tune.jsonl";
  write(log, record("mali", "Mali-G78", kReluKey, "relu.blocked", 8, "ok", 4.0));
  const fs::path out = dir / "pack.yaml";
  write(out, "# the user's pack\n");

  ToolResult r = run_tool("pack build " + log.string() + " -o " + out.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(out), "# the user's pack\n");

  r = run_tool("pack build --force " + log.string() + " -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const Pack pack = load_pack(out.string());
  ASSERT_EQ(pack.entries.size(), 1u);
  EXPECT_EQ(pack.entries[0].workload, kReluKey);
  EXPECT_DOUBLE_EQ(pack.entries[0].time_us, 4.0);
}

TEST(PackBuild, NoOkRecordIsAnError) {
  const fs::path dir = fresh_dir("none_ok");
  const fs::path log = dir / "tune.jsonl";
  write(log, record("mali", "Mali-G78", kReluKey, "relu.blocked", 8, "crash", 0.0));
  const ToolResult r = run_tool("pack build " + log.string() + " -o " + (dir / "p.yaml").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("no record with status ok"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "p.yaml"));
}

TEST(TuneLog, DriverAndCommandRoundTrip) {
  tune::LogRecord r;
  r.workload = kReluKey;
  r.plugin = "mali";
  r.device = "Mali-G78";
  r.schedule = "relu.blocked";
  r.status = "ok";
  r.median_us = 4.5;
  r.knobs = {{"wg_x", 8}};
  r.driver = "24.1.2";
  r.command = "tessera tune \"a b.onnx\" --targets mali:any";
  const auto back = tune::parse_log_line(tune::to_json_line(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->driver, r.driver);
  EXPECT_EQ(back->command, r.command);
  EXPECT_EQ(back->workload, r.workload);
  EXPECT_DOUBLE_EQ(back->median_us, 4.5);
  // A record from before the fields existed still reads, with both empty.
  const auto old = tune::parse_log_line(
      "{\"workload\": \"relu|x\", \"plugin\": \"mali\", \"device\": \"d\", \"schedule\": \"s\", "
      "\"knobs\": {}, \"status\": \"ok\", \"median_us\": 1, \"error\": \"\", \"timestamp\": "
      "\"t\"}");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->driver, "");
  EXPECT_EQ(old->command, "");
}

}  // namespace
}  // namespace tessera
