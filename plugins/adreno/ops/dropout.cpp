// Dropout (inference: the input unchanged) on the adreno plugin: the output shares the input's
// NCHW buffer (an image input is converted first), like Reshape.
#include "ops/shared.hpp"

namespace tessera::adreno {
TESSERA_ADRENO_OP("Dropout", check_alias, lower_alias);
}  // namespace tessera::adreno
