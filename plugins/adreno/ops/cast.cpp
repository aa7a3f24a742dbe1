// Cast from float32 to float32 on the adreno plugin (autocast's .float() on a tensor that already
// is): the output shares the input's NCHW buffer. Casts that change the type fall back.
#include "ops/shared.hpp"

namespace tessera::adreno {
TESSERA_ADRENO_OP("Cast", check_alias, lower_alias);
}  // namespace tessera::adreno
