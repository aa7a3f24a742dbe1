// The one error type used inside core (and in C++ code on the plugin side).
//
// Inside core, failures throw tessera::Error; at the plugin boundary they become a status code
// plus a message (see plugin_abi.h). Messages name the file, node, key or kernel involved and,
// where possible, what would fix it.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Raised for an op, attribute value or dtype that Tessera knows it does not implement.
// Kept separate so conformance runners can tell "unsupported" from "wrong".
class UnsupportedError : public Error {
 public:
  explicit UnsupportedError(const std::string& message) : Error(message) {}
};

// Options named in messages. A message that tells the caller which option would help names it
// by its API name in backticks: "pass `overwrite` to replace it", "(`allow_fallback`)", the
// SessionOptions field or function parameter, so the message as thrown reads right for a C++
// caller. A front end shows its own spelling where it prints an error: spell_options(message,
// Frontend::kCli) writes the `tessera` flag (--force, --allow-fallback), kPython the keyword
// (overwrite=True, allow_fallback=True), kC the tessera_session_options field
// (options.allow_fallback). Names a front end has no spelling for (a C caller writes no files)
// and other text in backticks (`tessera info`) stay as they are. The names, one table:
// core/src/config/option_spelling.cpp.
enum class Frontend { kCli, kPython, kC };
std::string spell_options(const std::string& message, Frontend frontend);

// `text` with control characters written as \xNN: names taken from a user's file go into
// messages through this, so a new line or a NUL in a name cannot break the message apart.
inline std::string escaped(const std::string& text) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace tessera
