// Packs: loading with validation, hierarchical selection with reasons and warnings, knob limits
// refusing single entries, merge keeping the faster entry, serialization round trip.
#include "tessera/pack.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "tessera/file_util.hpp"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using testing::error_of;
using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  return testing::source_path("tests/config/data/" + name);
}

const DeviceIdentity kG78{"ARM", "Mali-G78", "r32p1", 24};

TEST(PackLoad, FieldsReadIntoTypedValues) {
  const Pack p = load_pack(fixture("pack_device.yaml"));
  EXPECT_EQ(p.schema_version, 1);
  EXPECT_EQ(p.plugin, "mali");
  EXPECT_EQ(p.match.device, "Mali-G78");
  EXPECT_TRUE(p.match.driver.is_any());
  EXPECT_EQ(p.match.family, "");
  EXPECT_EQ(p.engine_version.text(), ">=0.1,<0.2");
  EXPECT_EQ(p.measured.how, "hand-written test fixture");
  EXPECT_EQ(p.measured.when, "2026-11-23");
  EXPECT_EQ(p.measured.tool_version, "0.1.0");
  ASSERT_EQ(p.entries.size(), 2u);
  EXPECT_EQ(p.entries[0].workload,
            "conv2d|in=1x32x112x112|w=64x32x1x1|s=1,1|p=0,0,0,0|d=1,1|g=1|f32|nchw");
  EXPECT_EQ(p.entries[0].schedule, "conv2d.nchw4c.direct");
  ASSERT_EQ(p.entries[0].knobs.size(), 3u);
  EXPECT_EQ(p.entries[0].knobs[0].name, "tile_x");
  EXPECT_EQ(p.entries[0].knobs[0].value, 2);
  EXPECT_EQ(p.entries[0].knobs[1].name, "wg_x");
  EXPECT_EQ(p.entries[0].knobs[1].value, 16);
  EXPECT_EQ(p.entries[0].knobs[2].value, 4);
  EXPECT_DOUBLE_EQ(p.entries[0].time_us, 230.0);
  EXPECT_EQ(p.entries[0].line, 12);
  EXPECT_EQ(p.entries[1].workload, "relu|in=1x64x112x112|f32|nchw");
  EXPECT_DOUBLE_EQ(p.entries[1].time_us, 12.25);
}

TEST(PackLoad, SerializeRoundTrip) {
  Pack p = load_pack(fixture("pack_device_driver.yaml"));
  // Times are written as the shortest text that reads back as the same double.
  p.entries[0].time_us = 147.859;
  const std::string text = serialize_pack(p);
  EXPECT_NE(text.find("time_us: 147.859\n"), std::string::npos) << text;
  const Pack q = parse_pack(text, "roundtrip.yaml");
  EXPECT_EQ(q.entries[0].time_us, 147.859);
  EXPECT_EQ(q.plugin, p.plugin);
  EXPECT_EQ(q.match.device, p.match.device);
  EXPECT_EQ(q.match.driver.text(), ">=32,<33");
  EXPECT_EQ(q.match.vendor, "ARM");
  EXPECT_EQ(q.engine_version.text(), p.engine_version.text());
  EXPECT_EQ(q.measured.how, p.measured.how);
  ASSERT_EQ(q.entries.size(), 1u);
  EXPECT_EQ(q.entries[0].workload, p.entries[0].workload);
  EXPECT_EQ(q.entries[0].schedule, p.entries[0].schedule);
  EXPECT_EQ(q.entries[0].knobs.size(), 3u);
  EXPECT_EQ(q.entries[0].knobs[2].name, "wg_y");
  EXPECT_EQ(q.entries[0].knobs[2].value, 8);
}

struct BadPack {
  const char* name;
  const char* entries_yaml;  // appended after a valid header (ends on line 10)
  const char* where;
  const char* message;
};

// Printed by its name: gtest's default (the struct's bytes) would put pointer values into the
// ctest names, which then differ between builds and runs.
void PrintTo(const BadPack& c, std::ostream* os) { *os << c.name; }

class PackBad : public ::testing::TestWithParam<BadPack> {};

TEST_P(PackBad, ErrorNamesFileLineAndKeyPath) {
  testing::ScratchDir dir;
  const std::string header = R"(schema_version: 1
plugin: mali
match:
  device: "Mali-G78"
engine_version: "*"
measured:
  how: test
  when: "2026-01-02"
  tool_version: "0.1.0"
entries:
)";
  const std::string path = dir.write("bad_pack.yaml", header + GetParam().entries_yaml);
  const std::string msg = error_of([&] { load_pack(path); });
  EXPECT_THAT(msg, HasSubstr(path + ":" + GetParam().where));
  EXPECT_THAT(msg, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PackBad,
    ::testing::Values(
        BadPack{"UnknownEntryKey",
                "  - {workload: \"relu|f32\", schedule: s, knobs: {}, time_us: 1, tim_us: 2}\n",
                "11:64: entries[0].tim_us", "did you mean 'time_us'?"},
        BadPack{
            "KnobNotInteger",
            "  - workload: \"relu|f32\"\n    schedule: s\n    knobs: {wg_x: 8.5}\n    time_us: 1\n",
            "13:19: entries[0].knobs.wg_x", "expected an integer, got '8.5'"},
        BadPack{"TimeNotPositive", "  - {workload: \"relu|f32\", schedule: s, time_us: 0}\n",
                "11:50: entries[0].time_us", "out of range"},
        BadPack{"WorkloadWithSpaces", "  - {workload: \"relu | f32\", schedule: s, time_us: 1}\n",
                "11:16: entries[0].workload", "contains white space"},
        BadPack{"DuplicateWorkload",
                "  - {workload: \"relu|f32\", schedule: s, time_us: 1}\n"
                "  - {workload: \"relu|f32\", schedule: t, time_us: 2}\n",
                "12:16: entries[1].workload", "already has an entry (entries[0])"},
        BadPack{"MissingSchedule", "  - {workload: \"relu|f32\", time_us: 1}\n",
                "11:5: entries[0].schedule", "required key 'schedule' is missing"},
        BadPack{"ScheduleNameEndsInNewLines",
                "  - {workload: \"relu|f32\", schedule: \"s.direct\\n\\n\", time_us: 1}\n",
                "11:38: entries[0].schedule", "contains 0x0a: use letters, digits"},
        BadPack{"KnobNameWithSpace",
                "  - {workload: \"relu|f32\", schedule: s, knobs: {\"wg x\": 1}, time_us: 1}\n",
                "11:48: entries[0].knobs", "knob name 'wg x' contains 0x20"},
        BadPack{"EntriesNotAList", "  workload: x\n", "11:3: entries", "expected a list"}),
    [](const ::testing::TestParamInfo<BadPack>& info) { return std::string(info.param.name); });

TEST(PackLoad, HeaderErrors) {
  testing::ScratchDir dir;
  const std::string p1 = dir.write("a.yaml", "schema_version: 1\nplugin: mali\nmatch: {}\n");
  EXPECT_THAT(error_of([&] { load_pack(p1); }),
              HasSubstr(p1 + ":3:8: match: name at least one of device, family or vendor"));
  const std::string p2 =
      dir.write("b.yaml",
                "schema_version: 1\nplugin: mali\nmatch: {family: f}\nengine_version: \"*\"\n"
                "measured: {how: x, when: yesterday, tool_version: \"0.1\"}\nentries: []\n");
  EXPECT_THAT(error_of([&] { load_pack(p2); }),
              HasSubstr(p2 + ":5:26: measured.when: 'yesterday' is not an ISO date"));
  const std::string p3 = dir.write("c.yaml", "plugin: mali\n");
  EXPECT_THAT(error_of([&] { load_pack(p3); }), HasSubstr("schema_version"));
}

// measured.when must be a day of the calendar: the 31st of February or the 29th of February of a
// common year are refused naming the file, the line and the key; leap days of leap years load.
TEST(PackLoad, MeasuredDateMustExist) {
  testing::ScratchDir dir;
  const auto pack_dated = [&](const std::string& name, const std::string& when) {
    return dir.write(name,
                     "schema_version: 1\nplugin: mali\nmatch: {family: f}\n"
                     "engine_version: \"*\"\nmeasured: {how: x, when: \"" +
                         when + "\", tool_version: \"0.1\"}\nentries: []\n");
  };
  const struct {
    const char* when;
    const char* problem;
  } bad[] = {
      {"2026-02-31", "'2026-02-31' is not a calendar date: February 2026 has 28 days"},
      {"2026-02-29", "'2026-02-29' is not a calendar date: February 2026 has 28 days"},
      {"2100-02-29", "'2100-02-29' is not a calendar date: February 2100 has 28 days"},
      {"2026-04-31", "'2026-04-31' is not a calendar date: April 2026 has 30 days"},
      {"2026-13-01", "'2026-13-01' has month 13 (months are 01 to 12)"},
      {"2026-01-00", "'2026-01-00' is not a calendar date: January 2026 has 31 days"},
      {"2026-01-02x", "'2026-01-02x' is not an ISO date (YYYY-MM-DD)"},
  };
  for (const auto& c : bad) {
    const std::string path = pack_dated(std::string(c.when) + ".yaml", c.when);
    EXPECT_THAT(error_of([&] { load_pack(path); }),
                HasSubstr(path + ":5:26: measured.when: " + c.problem));
  }
  for (const char* when : {"2028-02-29", "2000-02-29", "2026-12-31T23:59:59Z"}) {
    EXPECT_EQ(load_pack(pack_dated(std::string(when) + ".yaml", when)).measured.when, when);
  }
}

// Loads the candidates the way a plugin's schedules/ folder would hold them.
std::vector<Pack> load_all(const std::vector<std::string>& names) {
  std::vector<Pack> packs;
  for (const std::string& n : names) packs.push_back(load_pack(fixture(n)));
  return packs;
}

TEST(PackSelect, ExactDeviceAndDriverWins) {
  const auto packs = load_all(
      {"pack_vendor.yaml", "pack_family.yaml", "pack_device.yaml", "pack_device_driver.yaml"});
  const PackSelection s = select_pack(packs, "mali", kG78, "mali-valhall", "0.1.0");
  ASSERT_TRUE(s.pack.has_value());
  EXPECT_EQ(s.level, PackLevel::kDeviceDriver);
  EXPECT_EQ(s.pack->file, fixture("pack_device_driver.yaml"));
  EXPECT_THAT(s.reason, HasSubstr("chosen at level device+driver: device 'Mali-G78' and driver "
                                  "'r32p1' in '>=32,<33'; 1 tuned workload(s)"));
  EXPECT_TRUE(s.warnings.empty());
}

TEST(PackSelect, DeviceLevelWhenDriverDiffers) {
  const auto packs = load_all({"pack_device_driver.yaml", "pack_device.yaml", "pack_family.yaml"});
  const DeviceIdentity newer{"ARM", "Mali-G78", "r38p0", 24};
  const PackSelection s = select_pack(packs, "mali", newer, "mali-valhall", "0.1.0");
  ASSERT_TRUE(s.pack.has_value());
  EXPECT_EQ(s.level, PackLevel::kDevice);
  // Both device-level packs tie; the first candidate wins and the other is reported.
  EXPECT_EQ(s.pack->file, fixture("pack_device_driver.yaml"));
  EXPECT_THAT(s.reason, HasSubstr("level device: device 'Mali-G78' (driver differs)"));
  ASSERT_EQ(s.warnings.size(), 2u);
  EXPECT_THAT(s.warnings[0], HasSubstr("measured with driver '>=32,<33', this device has 'r38p0'"));
  EXPECT_THAT(s.warnings[1], HasSubstr("pack_device.yaml ignored: "));
  EXPECT_THAT(s.warnings[1], HasSubstr("matches at the same level (device)"));
}

TEST(PackSelect, FamilyThenVendorThenNone) {
  const auto packs = load_all({"pack_vendor.yaml", "pack_family.yaml"});
  const PackSelection fam = select_pack(packs, "mali", kG78, "mali-valhall", "0.1.0");
  EXPECT_EQ(fam.level, PackLevel::kFamily);
  EXPECT_EQ(fam.pack->file, fixture("pack_family.yaml"));
  EXPECT_THAT(fam.reason, HasSubstr("chosen at level family: family 'mali-valhall'"));

  const DeviceIdentity g76{"ARM", "Mali-G76", "r20p0", 10};
  const PackSelection ven = select_pack(packs, "mali", g76, "mali-bifrost", "0.1.0");
  EXPECT_EQ(ven.level, PackLevel::kVendor);
  EXPECT_EQ(ven.pack->file, fixture("pack_vendor.yaml"));
  EXPECT_THAT(ven.reason, HasSubstr("chosen at level vendor: vendor 'ARM'"));
  EXPECT_TRUE(ven.warnings.empty());
  ASSERT_EQ(ven.notes.size(), 1u);
  EXPECT_THAT(ven.notes[0],
              HasSubstr("pack_family.yaml ignored: it is for family 'mali-valhall', this device "
                        "is family 'mali-bifrost'"));

  const DeviceIdentity adreno{"QUALCOMM", "QUALCOMM Adreno(TM) 650", "", 3};
  const PackSelection none = select_pack(packs, "mali", adreno, "adreno-6xx", "0.1.0");
  EXPECT_FALSE(none.pack.has_value());
  EXPECT_EQ(none.level, PackLevel::kNone);
  EXPECT_THAT(none.reason, HasSubstr("no pack for plugin 'mali' matches device "
                                     "'QUALCOMM Adreno(TM) 650' (2 candidate(s)"));
  EXPECT_THAT(none.reason, HasSubstr("default heuristics"));
  EXPECT_TRUE(none.warnings.empty());
  EXPECT_EQ(none.notes.size(), 2u);
}

// Another device's pack is a note (expected wherever packs for several devices are installed),
// not a warning.
TEST(PackSelect, OtherDeviceIgnoredWithNote) {
  const auto packs = load_all({"pack_other_device.yaml", "pack_family.yaml"});
  const PackSelection s = select_pack(packs, "mali", kG78, "mali-valhall", "0.1.0");
  EXPECT_EQ(s.level, PackLevel::kFamily);
  EXPECT_TRUE(s.warnings.empty());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0], "pack " + fixture("pack_other_device.yaml") +
                            " ignored: it is for device 'Mali-G710', this device is 'Mali-G78'");
}

TEST(PackSelect, IncompatibleSchemaAndEngineIgnoredWithWarning) {
  const auto packs = load_all({"pack_schema2.yaml", "pack_old_engine.yaml", "pack_vendor.yaml"});
  EXPECT_EQ(packs[0].schema_version, 2);
  EXPECT_TRUE(packs[0].entries.empty());
  const PackSelection s = select_pack(packs, "mali", kG78, "mali-valhall", "0.1.0");
  EXPECT_EQ(s.level, PackLevel::kVendor);
  ASSERT_EQ(s.warnings.size(), 2u);
  EXPECT_THAT(s.warnings[0], HasSubstr("pack_schema2.yaml ignored: schema_version 2 is not "
                                       "supported by this engine (reads 1)"));
  EXPECT_THAT(s.warnings[1], HasSubstr("pack_old_engine.yaml ignored: made for engine versions "
                                       "'<0.1', this is 0.1.0"));
}

TEST(PackSelect, OtherPluginSkippedSilently) {
  const auto packs = load_all({"pack_other_plugin.yaml"});
  const PackSelection s = select_pack(packs, "mali", kG78, "mali-valhall", "0.1.0");
  EXPECT_FALSE(s.pack.has_value());
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_THAT(s.reason, HasSubstr("(0 candidate(s) for this plugin)"));
  const PackSelection cpu = select_pack(packs, "cpu", kG78, "", "0.1.0");
  EXPECT_EQ(cpu.level, PackLevel::kVendor);
}

TEST(PackKnobs, BreakingALimitRefusesThatEntryOnly) {
  Pack p = load_pack(fixture("pack_device.yaml"));
  // conv: wg 16*4 = 64 fits; relu: wg_x 64 breaks a limit of 32 on its schedule's bound.
  KnobLimits conv;
  conv.work_group_knobs = {"wg_x", "wg_y"};
  conv.max_work_group_size = 64;
  conv.bounds = {{"tile_x", 1, 8}};
  conv.required_knobs = {"tile_x"};
  KnobLimits eltwise;
  eltwise.bounds = {{"wg_x", 1, 32}};
  const std::vector<std::string> warnings =
      filter_pack_entries(p, [&](const std::string& schedule) -> const KnobLimits* {
        if (schedule == "conv2d.nchw4c.direct") return &conv;
        if (schedule == "eltwise.vec4") return &eltwise;
        return nullptr;
      });
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_EQ(p.entries[0].schedule, "conv2d.nchw4c.direct");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], fixture("pack_device.yaml") +
                             ":16: workload 'relu|in=1x64x112x112|f32|nchw' (schedule "
                             "eltwise.vec4): knob 'wg_x' = 64 is outside [1, 32]; entry ignored, "
                             "the schedule's heuristic is used for it");
}

TEST(PackKnobs, WorkGroupProductAndUnknownSchedule) {
  PackEntry e{"conv2d|x|f32", "conv2d.direct", {{"wg_x", 32}, {"wg_y", 16}}, 1.0, 3};
  KnobLimits limits;
  limits.work_group_knobs = {"wg_x", "wg_y"};
  limits.max_work_group_size = 384;
  const auto problem = check_knobs(e, limits);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem,
            "workload 'conv2d|x|f32' (schedule conv2d.direct): knob 'wg_x*wg_y' gives work-group "
            "size 512, above the device limit 384");
  limits.max_work_group_size = 512;
  EXPECT_FALSE(check_knobs(e, limits).has_value());
  limits.required_knobs = {"tile"};
  EXPECT_THAT(*check_knobs(e, limits), HasSubstr("knob 'tile' is missing"));

  Pack p;
  p.file = "x.yaml";
  p.plugin = "mali";
  p.entries = {e};
  const auto w = filter_pack_entries(p, [](const std::string&) { return nullptr; });
  EXPECT_TRUE(p.entries.empty());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("x.yaml:3: workload 'conv2d|x|f32': schedule 'conv2d.direct' is "
                              "unknown to plugin 'mali'"));
}

TEST(PackMerge, KeepsTheFasterEntryPerWorkload) {
  const auto packs = load_all({"merge_a.yaml", "merge_b.yaml"});
  std::vector<std::string> notes;
  const Pack m = merge_packs(packs, &notes);
  ASSERT_EQ(m.entries.size(), 3u);
  // conv: B is faster (80 < 100); relu: A is faster (5 < 6); add: only in B.
  EXPECT_EQ(m.entries[0].schedule, "conv2d.nchw4c.winograd");
  EXPECT_DOUBLE_EQ(m.entries[0].time_us, 80);
  EXPECT_EQ(m.entries[0].knobs[1].value, 16);
  EXPECT_EQ(m.entries[1].workload, "relu|in=1x16x56x56|f32|nchw");
  EXPECT_DOUBLE_EQ(m.entries[1].time_us, 5);
  EXPECT_EQ(m.entries[1].knobs[0].value, 64);
  EXPECT_EQ(m.entries[2].workload, "add|a=1x16x56x56|b=1x16x56x56|f32|nchw");
  EXPECT_EQ(m.match.family, "mali-valhall");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], HasSubstr("kept " + fixture("merge_b.yaml") + " (80 us) over "));
  EXPECT_THAT(notes[1], HasSubstr("kept " + fixture("merge_a.yaml") + " (5 us) over "));
}

TEST(PackMerge, RefusesDifferentDevices) {
  const auto packs = load_all({"merge_a.yaml", "pack_device.yaml"});
  EXPECT_THAT(error_of([&] { merge_packs(packs); }),
              HasSubstr("only packs for the same plugin and device can be merged"));
}

TEST(PackMerge, WrittenPackReloadsAndIsNotOverwrittenWithoutForce) {
  testing::ScratchDir dir;
  const Pack m = merge_packs(load_all({"merge_a.yaml", "merge_b.yaml"}));
  const std::string out = dir.file("merged.yaml");
  write_file_atomic(out, serialize_pack(m), false);
  const Pack back = load_pack(out);
  ASSERT_EQ(back.entries.size(), 3u);
  EXPECT_DOUBLE_EQ(back.entries[0].time_us, 80);
  EXPECT_EQ(back.measured.when, "2026-11-23");
  const std::string before = read_file(out, "file", kMaxYamlFileBytes);
  EXPECT_THAT(error_of([&] { write_file_atomic(out, "other", false); }),
              HasSubstr("'" + out + "' already exists; pass `overwrite`"));
  EXPECT_EQ(read_file(out, "file", kMaxYamlFileBytes), before);
}

TEST(PackScan, LoadsGoodPacksAndWarnsAboutBadOnes) {
  testing::ScratchDir dir;
  dir.write("mali/a.yaml", read_file(fixture("pack_family.yaml"), "file", kMaxYamlFileBytes));
  dir.write("mali/b.yaml", "schema_version: 1\nplugin: mali\nmatch: {vendor: ARM}\nbogus: 1\n");
  dir.write("mali/c.yaml", read_file(fixture("pack_other_plugin.yaml"), "file", kMaxYamlFileBytes));
  dir.write("mali/notes.txt", "not a pack");
  const PackScan scan = scan_packs(dir.path(), "mali");
  ASSERT_EQ(scan.packs.size(), 1u);
  EXPECT_EQ(scan.packs[0].file, dir.file("mali/a.yaml"));
  EXPECT_EQ(scan.packs[0].match.family, "mali-valhall");
  ASSERT_EQ(scan.warnings.size(), 2u);
  EXPECT_THAT(scan.warnings[0], HasSubstr(dir.file("mali/b.yaml") + ":4:1: bogus: unknown key"));
  EXPECT_THAT(scan.warnings[1],
              HasSubstr("says plugin 'cpu' but lies in the folder of plugin 'mali'"));
  const PackScan none = scan_packs(dir.path(), "adreno");
  EXPECT_TRUE(none.packs.empty());
  EXPECT_TRUE(none.warnings.empty());
}

}  // namespace
}  // namespace tessera
