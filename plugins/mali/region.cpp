// The mali target's `layout` option.
#include "region.hpp"

namespace tessera::mali {

std::optional<Storage> parse_layout(const std::string& value) {
  if (value == "nchw4c") return Storage::kNchw4c;
  if (value == "nchw") return Storage::kNchw;
  return std::nullopt;
}

std::string layout_choices(const std::string& value) {
  return "option 'layout' = '" + value + "' is not a layout; use 'nchw4c' (default) or 'nchw'";
}

}  // namespace tessera::mali
