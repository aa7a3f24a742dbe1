// Squeeze on the mali plugin: the output shares the input's device buffer (same bytes, new shape).
#include "ops/shared.hpp"

namespace tessera::mali {
TESSERA_MALI_OP("Squeeze", check_alias, lower_alias);
}  // namespace tessera::mali
