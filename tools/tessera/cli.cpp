// Argument parsing and output helpers shared by the subcommands.
#include "cli.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "tessera/checked_math.hpp"

namespace tessera::cli {

namespace {

// Set when a command's options held --json: errors then end in one JSON object on stdout.
bool g_json_output = false;

}  // namespace

Args::Args(int argc, char** argv, std::vector<std::string> value_options,
           std::vector<std::string> flag_options) {
  auto known = [&](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  // The whole line is read before the first problem is thrown, so that a --json after a bad
  // option still makes the error a JSON object.
  std::string problem;
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
      if (inline_value && problem.empty()) problem = "option --" + name + " takes no value";
      flags_[name] = true;
    } else if (known(value_options, name)) {
      if (!inline_value) {
        if (i + 1 >= argc) {
          if (problem.empty()) problem = "option --" + name + " needs a value";
          continue;
        }
        value = argv[++i];
      }
      values_[name].push_back(value);
    } else if (problem.empty()) {
      std::string list;
      for (const auto& o : value_options) list += " --" + o;
      for (const auto& o : flag_options) list += " --" + o;
      problem = "unknown option --" + name + " (known:" + list + ")";
    }
  }
  g_json_output = flag("json");
  if (!problem.empty()) throw Error(problem);
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

std::string checked_plugin_dir(const std::string& dir) {
  if (!std::filesystem::path(dir).is_absolute()) {
    throw Error("--plugin-dir '" + escaped(dir) +
                "' is a relative path; plugin directories must be absolute (the working "
                "directory is never searched)");
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw Error("--plugin-dir: plugin directory '" + escaped(dir) + "' " +
                (std::filesystem::exists(dir, ec) ? "is not a directory" : "does not exist"));
  }
  return dir;
}

bool json_output() {
  return g_json_output;
}

int report_error(const std::string& command, const std::string& core_message) {
  const std::string message = spell_options(core_message, Frontend::kCli);
  std::fprintf(stderr, "tessera %s: error: %s\n", command.c_str(), message.c_str());
  if (g_json_output) std::printf("{\"error\": %s}\n", json_string(message).c_str());
  return 1;
}

int usage_error(const std::string& problem) {
  if (g_json_output) std::printf("{\"error\": %s}\n", json_string(problem).c_str());
  return 2;
}

int print_usage(const std::string& usage, bool asked) {
  if (asked) {
    std::fputs(usage.c_str(), stdout);
    return 0;
  }
  std::fputs(usage.c_str(), stderr);
  return usage_error(usage.substr(0, usage.find('\n')));
}

void apply_memory_limit_option(const Args& args) {
  if (args.has(kMemoryLimitOption)) set_memory_limit(args.get_bytes(kMemoryLimitOption, 0));
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
  std::map<std::string, std::string> given;  // input name -> the spec that named it
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error("--input-shape expects NAME=D0,D1,..., got '" + spec + "'");
    }
    const std::string name = spec.substr(0, eq);
    const auto [earlier, fresh] = given.emplace(name, spec);
    if (!fresh) {
      // Keeping either one would silently drop the other.
      throw Error("--input-shape is given twice for input '" + name + "' (" + earlier->second +
                  " and " + spec + "); give each input once");
    }
    // Split by hand: split_list drops empty items, which would read "4,,3" as [4, 3]. An empty
    // text after '=' is a scalar's shape [].
    const std::string dims = spec.substr(eq + 1);
    Shape shape;
    for (size_t start = 0, d = 0; !dims.empty() && start <= dims.size(); ++d) {
      const size_t comma = std::min(dims.find(',', start), dims.size());
      const std::string dim = dims.substr(start, comma - start);
      if (dim.empty()) {
        throw Error("--input-shape " + spec + ": dimension " + std::to_string(d) +
                    " is empty (give every dimension, e.g. " + name + "=1,3,224,224)");
      }
      int64_t value = 0;
      const auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
      if (ec != std::errc() || end != dim.data() + dim.size() || value < 0) {
        throw Error("--input-shape " + spec + ": '" + dim + "' is not a non-negative integer");
      }
      shape.push_back(value);
      start = comma + 1;
    }
    shapes[name] = shape;
  }
  return shapes;
}

}  // namespace tessera::cli
