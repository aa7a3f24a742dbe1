// What every fuzz harness of tests/fuzz shares: how a harness is declared, so that one function
// runs both under libFuzzer (tools/run-fuzz.sh, clang) and in the replay driver of the regression
// suite (tessera_fuzz_tests, any compiler), and how an input's outcome is judged.
//
// An input may end in exactly two ways: accepted, or a tessera::Error (the documented clean
// error, whose message names the file, key or node). Anything else escapes the harness: another
// exception type terminates the process, which libFuzzer reports as a crash, and a failed
// invariant (fuzz_require) aborts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/error.hpp"

namespace tessera::fuzz {

// How the last input ended: accepted (message empty) or the tessera::Error's message.
struct Outcome {
  bool accepted = false;
  std::string message;
};
Outcome& last_outcome();

// Process-wide set-up, once: a memory limit well below libFuzzer's -rss_limit_mb, so a model
// or .npy asking for more is refused by Tessera's own check (a clean error) rather than
// reported as an out-of-memory finding.
void init_once();
constexpr int64_t kFuzzMemoryLimitBytes = int64_t{256} << 20;

// Runs `body`; records acceptance or the tessera::Error's message. Other exceptions propagate.
template <typename Body>
int run_input(Body&& body) {
  init_once();
  Outcome& out = last_outcome();
  out = Outcome{};
  try {
    body();
    out.accepted = true;
  } catch (const Error& e) {
    out.message = e.what();
    if (out.message.empty()) {
      std::fprintf(stderr, "fuzz: a tessera::Error without a message\n");
      std::abort();
    }
  }
  return 0;
}

// An invariant of accepted input (a pack that loads must serialize to a pack that loads): on
// failure, prints `what` and aborts so libFuzzer keeps the input.
inline void fuzz_require(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant failed: %s\n", what.c_str());
    std::abort();
  }
}

}  // namespace tessera::fuzz

// The harness functions, one per target (fuzz_<target>.cpp).
int tessera_fuzz_onnx(const uint8_t* data, size_t size);
int tessera_fuzz_npy(const uint8_t* data, size_t size);
int tessera_fuzz_config(const uint8_t* data, size_t size);
int tessera_fuzz_pack(const uint8_t* data, size_t size);
int tessera_fuzz_package(const uint8_t* data, size_t size);

// TESSERA_FUZZ_TARGET(onnx) { ... } defines tessera_fuzz_onnx and, in the libFuzzer build
// (TESSERA_LIBFUZZER), the LLVMFuzzerTestOneInput entry that calls it.
#ifdef TESSERA_LIBFUZZER
#define TESSERA_FUZZ_ENTRY(name)                                                \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {     \
    return tessera_fuzz_##name(data, size);                                      \
  }
#else
#define TESSERA_FUZZ_ENTRY(name)
#endif
#define TESSERA_FUZZ_TARGET(name) \
  TESSERA_FUZZ_ENTRY(name)        \
  int tessera_fuzz_##name(const uint8_t* data, size_t size)
