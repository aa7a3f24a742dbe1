// Text a plugin hands to core (its version and description, device names, messages of failed
// calls) as core keeps it: control characters escaped, so that a plugin cannot move the cursor,
// clear the screen or forge lines where `tessera info`, plans and errors print it.
#pragma once

#include <cstddef>
#include <string>

#include "tessera/error.hpp"

namespace tessera::detail {

// `text` escaped; "" for NULL.
inline std::string plugin_text(const char* text) {
  return text == nullptr ? std::string() : escaped(text);
}

// The message a failed slot wrote into its tsr_message buffer `text`, escaped; "no message" when
// empty. The buffer's last byte is made NUL first: a plugin that filled it whole is not read past.
template <size_t N>
std::string plugin_message(char (&text)[N]) {
  text[N - 1] = '\0';
  return text[0] != '\0' ? escaped(text) : "no message";
}

}  // namespace tessera::detail
