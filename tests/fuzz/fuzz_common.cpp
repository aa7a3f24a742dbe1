// The outcome record and the one-time set-up shared by every harness (fuzz_target.hpp).
#include "fuzz_target.hpp"

#include "tessera/tensor.hpp"

namespace tessera::fuzz {

Outcome& last_outcome() {
  static Outcome outcome;
  return outcome;
}

void init_once() {
  static const bool done = [] {
    set_memory_limit(kFuzzMemoryLimitBytes);
    return true;
  }();
  (void)done;
}

}  // namespace tessera::fuzz
