// The shared differential suite on the `reference` plugin.
#include "differential_suite.hpp"

TESSERA_DIFFERENTIAL_SUITE(reference, "reference");
