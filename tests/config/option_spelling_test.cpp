// spell_options: a core error names an option by its API name, and each front end reads it in its
// own spelling (the `tessera` flag, the Python keyword, the C options field).
#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "tessera/file_util.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using testing::error_of;

TEST(SpellOptions, ACoreErrorReadsInEachFrontEndsSpelling) {
  const std::string core = error_of([] { parse_target_entries("mali[layout=nchw"); });
  EXPECT_EQ(core, "`targets` entry 'mali[layout=nchw': '[' has no closing ']'");
  EXPECT_EQ(spell_options(core, Frontend::kCli),
            "--targets entry 'mali[layout=nchw': '[' has no closing ']'");
  EXPECT_EQ(spell_options(core, Frontend::kPython),
            "targets= entry 'mali[layout=nchw': '[' has no closing ']'");
  EXPECT_EQ(spell_options(core, Frontend::kC),
            "options.targets entry 'mali[layout=nchw': '[' has no closing ']'");
}

TEST(SpellOptions, AnOptionAFrontEndLacksKeepsItsCoreName) {
  testing::ScratchDir dir;
  const std::string path = dir.write("out.txt", "kept");
  const std::string core = error_of([&] { write_file_atomic(path, "new", false); });
  const std::string head = "output file '" + path + "' already exists; pass ";
  const std::string tail = " to replace it (nothing was written)";
  EXPECT_EQ(core, head + "`overwrite`" + tail);
  EXPECT_EQ(spell_options(core, Frontend::kCli), head + "--force" + tail);
  EXPECT_EQ(spell_options(core, Frontend::kPython), head + "overwrite=True" + tail);
  EXPECT_EQ(spell_options(core, Frontend::kC), core);  // the C API writes no files
}

TEST(SpellOptions, OnlyKnownNamesInBackticksChangeEveryTime) {
  EXPECT_EQ(spell_options("`allow_fallback` or `allow_fallback`; `tessera info`; allow_fallback; "
                          "`allow_fallback2`",
                          Frontend::kCli),
            "--allow-fallback or --allow-fallback; `tessera info`; allow_fallback; "
            "`allow_fallback2`");
  EXPECT_EQ(spell_options("(`replan_package`)", Frontend::kC), "(options.replan_package)");
}

}  // namespace
}  // namespace tessera
