// Unsqueeze on the adreno plugin: the same elements under another shape, so the output shares the
// input's NCHW buffer (an image input is converted first: the texture layout is 4-D only).
#include "ops/shared.hpp"

namespace tessera::adreno {
TESSERA_ADRENO_OP("Unsqueeze", check_alias, lower_alias);
}  // namespace tessera::adreno
