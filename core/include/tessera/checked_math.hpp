// Overflow-checked integer arithmetic for every size computation (elements, bytes, strides,
// offsets). A model is untrusted input: a shape whose element count fits in int64 but whose byte
// size does not would otherwise wrap to a tiny allocation that kernels then write past.
//
// Header-only and free of core symbols, so the plugin SDK (plugin.hpp) uses the same helper.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "tessera/error.hpp"

namespace tessera {

// Non-throwing forms for code that reports errors as values (the plugin boundary): true and
// `out` set when the result fits in int64, false on overflow.
inline bool try_mul(int64_t a, int64_t b, int64_t& out) noexcept {
  return !__builtin_mul_overflow(a, b, &out);
}
inline bool try_add(int64_t a, int64_t b, int64_t& out) noexcept {
  return !__builtin_add_overflow(a, b, &out);
}

// Throwing forms: `what` names the quantity for the message ("value 'x': byte size").
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t out = 0;
  if (!try_mul(a, b, out)) {
    throw Error(std::string(what) + ": " + std::to_string(a) + " * " + std::to_string(b) +
                " overflows int64");
  }
  return out;
}
inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t out = 0;
  if (!try_add(a, b, out)) {
    throw Error(std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                " overflows int64");
  }
  return out;
}

// Byte counts as people read them: "17179869184 bytes (16.0 GiB)".
inline std::string bytes_str(int64_t bytes) {
  std::string s = std::to_string(bytes) + " bytes";
  if (bytes >= (int64_t{1} << 20)) {
    const bool gib = bytes >= (int64_t{1} << 30);
    const double v =
        static_cast<double>(bytes) / static_cast<double>(int64_t{1} << (gib ? 30 : 20));
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%.1f %s)", v, gib ? "GiB" : "MiB");
    s += buf;
  }
  return s;
}

}  // namespace tessera
