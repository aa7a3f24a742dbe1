// Cast from float32 to float32 on the mali plugin (autocast's .float() on a tensor that already
// is): the output shares the input's device buffer. Casts that change the type fall back.
#include "ops/shared.hpp"

namespace tessera::mali {
TESSERA_MALI_OP("Cast", check_alias, lower_alias);
}  // namespace tessera::mali
