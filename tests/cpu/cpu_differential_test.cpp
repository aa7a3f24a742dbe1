// The shared differential suite on the cpu plugin (reference runs what cpu refuses).
#include "differential_suite.hpp"

TESSERA_DIFFERENTIAL_SUITE(cpu, "cpu");
