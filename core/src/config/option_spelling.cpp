// spell_options (tessera/error.hpp): the options core messages name, as each front end spells
// them.
#include <cstring>
#include <string>

#include "tessera/error.hpp"

namespace tessera {

namespace {

struct OptionSpelling {
  const char* name;        // as core messages write it, in backticks
  const char* spelled[3];  // by Frontend (kCli, kPython, kC); "" = that front end has none
};

constexpr OptionSpelling kOptions[] = {
    {"targets", {"--targets", "targets=", "options.targets"}},
    {"allow_fallback", {"--allow-fallback", "allow_fallback=True", "options.allow_fallback"}},
    {"replan_package", {"--replan", "replan=True", "options.replan_package"}},
    {"pack_files", {"--pack", "", ""}},
    {"overwrite", {"--force", "overwrite=True", ""}},
    {"set_memory_limit", {"--memory-limit", "", ""}},
};

}  // namespace

std::string spell_options(const std::string& message, Frontend frontend) {
  std::string out = message;
  for (const OptionSpelling& o : kOptions) {
    const char* spelled = o.spelled[static_cast<int>(frontend)];
    if (*spelled == 0) continue;
    const std::string marker = std::string("`") + o.name + "`";
    for (size_t at = out.find(marker); at != std::string::npos;
         at = out.find(marker, at + std::strlen(spelled))) {
      out.replace(at, marker.size(), spelled);
    }
  }
  return out;
}

}  // namespace tessera
