// The shared differential suite (tests/plugins/differential_suite.*) on the adreno plugin,
// driving any OpenCL device with image support (PoCL in CI).
#include "differential_suite.hpp"

TESSERA_DIFFERENTIAL_SUITE(adreno, "adreno:any");
