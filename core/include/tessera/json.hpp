// JSON string quoting and unquoting, written once for the tree: the CLI's --json reports, the
// tuner's log and the clml plugin's subgraph dumps. Header-only so that plugins, which build
// against the public headers alone, use the same rules.
#pragma once

#include <cstdio>
#include <string>

namespace tessera {

// `s` as a JSON string literal, quotes included: '"' and '\' escaped, \n and \t by name, the
// other control characters as \u00XX; bytes >= 0x80 (UTF-8) pass through.
inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// The character after a backslash in a JSON string, decoded: `at` indexes the character after
// the backslash and is moved past the escape. \uXXXX below 0x80 decodes to that byte, above to
// its UTF-8 bytes (surrogate pairs are not joined). Returns false on a malformed escape.
inline bool json_unescape_at(const std::string& s, size_t& at, std::string& out) {
  if (at >= s.size()) return false;
  const char c = s[at++];
  switch (c) {
    case '"':
    case '\\':
    case '/':
      out += c;
      return true;
    case 'n':
      out += '\n';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'u': {
      if (at + 4 > s.size()) return false;
      unsigned code = 0;
      for (int i = 0; i < 4; ++i) {
        const char h = s[at++];
        code <<= 4;
        if (h >= '0' && h <= '9')
          code |= static_cast<unsigned>(h - '0');
        else if (h >= 'a' && h <= 'f')
          code |= static_cast<unsigned>(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F')
          code |= static_cast<unsigned>(h - 'A' + 10);
        else
          return false;
      }
      if (code < 0x80) {
        out += static_cast<char>(code);
      } else if (code < 0x800) {
        out += static_cast<char>(0xc0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3f));
      } else {
        out += static_cast<char>(0xe0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (code & 0x3f));
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace tessera
