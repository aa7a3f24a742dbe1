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

}  // namespace tessera
