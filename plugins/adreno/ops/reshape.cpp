// Reshape on the adreno plugin: the result is not a 4-D activation, so it lives in an NCHW buffer
// shared with the input (an image input is converted to a buffer first).
#include "ops/shared.hpp"

namespace tessera::adreno {
TESSERA_ADRENO_OP("Reshape", check_alias, lower_alias);
}  // namespace tessera::adreno
