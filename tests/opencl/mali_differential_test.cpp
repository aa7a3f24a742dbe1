// The shared differential suite (tests/plugins/differential_suite.*) on the mali plugin, driving
// any OpenCL device (PoCL in CI).
#include "differential_suite.hpp"

TESSERA_DIFFERENTIAL_SUITE(mali, "mali:any");
