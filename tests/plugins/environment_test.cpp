// No shipped binary reads an undocumented TESSERA_* environment variable: every TESSERA_* name
// in the bytes of libtessera, the tessera command, the bundled plugins and libtessera-opencl
// (getenv needs the name as a string literal) must be on environment_allowlist.txt, which the
// README's list of variables mirrors. Test-only variables live in test binaries, never here.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') out.push_back(line);
  }
  return out;
}

bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Every maximal run "TESSERA_[A-Z0-9_]+" in `bytes`.
std::set<std::string> tessera_names(const std::string& bytes) {
  std::set<std::string> names;
  const std::string prefix = "TESSERA_";
  for (size_t at = bytes.find(prefix); at != std::string::npos; at = bytes.find(prefix, at + 1)) {
    if (at > 0 && is_name_char(bytes[at - 1])) continue;  // inside a longer name
    size_t end = at + prefix.size();
    while (end < bytes.size() && is_name_char(bytes[end])) ++end;
    if (end > at + prefix.size()) names.insert(bytes.substr(at, end - at));
  }
  return names;
}

TEST(Environment, ShippedBinariesReadOnlyDocumentedVariables) {
  const std::vector<std::string> allowed_list = lines_of(TESSERA_ENVIRONMENT_ALLOWLIST);
  ASSERT_FALSE(allowed_list.empty()) << TESSERA_ENVIRONMENT_ALLOWLIST;
  const std::set<std::string> allowed(allowed_list.begin(), allowed_list.end());
  const std::vector<std::string> binaries = lines_of(TESSERA_SHIPPED_BINARIES);
  ASSERT_GE(binaries.size(), 3u) << TESSERA_SHIPPED_BINARIES;
  for (const std::string& path : binaries) {
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << "cannot read " << path;
    // One read of the whole file: a character at a time took most of a minute for a sanitizer
    // tree's binaries with their debug info.
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string bytes = buffer.str();
    for (const std::string& name : tessera_names(bytes)) {
      EXPECT_TRUE(allowed.count(name))
          << path << " contains '" << name << "', not on " << TESSERA_ENVIRONMENT_ALLOWLIST
          << ": make the behaviour a per-target option (given to create) or a test hook in test "
             "code, or document the variable in the README and the allow-list";
    }
  }
}

// The scan itself: names are found whole, and a longer identifier is not split.
TEST(Environment, ScannerFindsWholeNames) {
  const char raw[] = "x\0TESSERA_A_B\0yMY_TESSERA_X\0TESSERA_\0";
  const std::string bytes(raw, sizeof(raw) - 1);
  EXPECT_EQ(tessera_names(bytes), (std::set<std::string>{"TESSERA_A_B"}));
}

}  // namespace
