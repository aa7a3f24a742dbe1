// Argument parsing and output helpers shared by the subcommands.
#include "cli.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tessera/checked_math.hpp"

namespace tessera::cli {

Args::Args(int argc, char** argv, std::vector<std::string> value_options,
           std::vector<std::string> flag_options) {
  auto known = [&](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      if (arg.size() == 2 && arg[0] == '-' && arg[1] == 'o') {
        arg = "--output";  // `-o FILE` is the short form of --output
      } else {
        positionals_.push_back(arg);
        continue;
      }
    }
    std::string name = arg.substr(2);
    std::string value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    if (known(flag_options, name)) {
      if (inline_value) throw Error("option --" + name + " takes no value");
      flags_[name] = true;
    } else if (known(value_options, name)) {
      if (!inline_value) {
        if (i + 1 >= argc) throw Error("option --" + name + " needs a value");
        value = argv[++i];
      }
      values_[name].push_back(value);
    } else {
      std::string list;
      for (const auto& o : value_options) list += " --" + o;
      for (const auto& o : flag_options) list += " --" + o;
      throw Error("unknown option --" + name + " (known:" + list + ")");
    }
  }
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> Args::get_all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

namespace {

[[noreturn]] void bad_number(const std::string& name, const std::string& text,
                             const std::string& what) {
  throw Error("option --" + name + " expects " + what + ", got '" + text + "'");
}

}  // namespace

int64_t Args::get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  int64_t value = 0;
  // from_chars takes no leading '+' or spaces and reports overflow: "4294967297" for an int
  // option is an out-of-range error here, never a silent wrap.
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    bad_number(name, text, range);
  }
  return value;
}

double Args::get_number(const std::string& name, double fallback, double min, double max) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  char range[96];
  std::snprintf(range, sizeof range, "a number from %g to %g", min, max);
  const bool plain = !text.empty() &&
                     text.find_first_not_of("0123456789.-eE") == std::string::npos &&
                     text[0] != 'e' && text[0] != 'E';
  char* end = nullptr;
  errno = 0;
  const double value = plain ? std::strtod(text.c_str(), &end) : 0.0;
  if (!plain || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value) ||
      value < min || value > max) {
    bad_number(name, text, range);
  }
  return value;
}

int64_t Args::get_bytes(const std::string& name, int64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  const char* what = "a byte count such as 512M or 8G (suffixes K, M, G, T)";
  std::string digits = text;
  int shift = 0;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        break;
    }
    if (shift != 0) digits.pop_back();
  }
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 1 ||
      !try_mul(value, int64_t{1} << shift, value)) {
    bad_number(name, text, what);
  }
  return value;
}

void apply_memory_limit_option(const Args& args) {
  if (args.has(kMemoryLimitOption)) set_memory_limit(args.get_bytes(kMemoryLimitOption, 0));
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
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
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json_string(items[i]);
  return out + "]";
}

std::string json_int_list(const std::vector<int64_t>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::to_string(items[i]);
  return out + "]";
}

std::string json_number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", v);
  return text;
}

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& specs) {
  std::map<std::string, Shape> shapes;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error("--input-shape expects NAME=D0,D1,..., got '" + spec + "'");
    }
    Shape shape;
    for (const std::string& dim : split_list(spec.substr(eq + 1))) {
      int64_t value = 0;
      const auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
      if (ec != std::errc() || end != dim.data() + dim.size() || value < 0) {
        throw Error("--input-shape " + spec + ": '" + dim + "' is not a non-negative integer");
      }
      shape.push_back(value);
    }
    shapes[spec.substr(0, eq)] = shape;
  }
  return shapes;
}

}  // namespace tessera::cli
