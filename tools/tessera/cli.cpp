// Argument parsing and output helpers shared by the subcommands.
#include "cli.hpp"

#include <algorithm>
#include <cstdio>

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

int64_t Args::get_int(const std::string& name, int64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) {
    throw Error("option --" + name + " expects an integer, got '" + text + "'");
  }
  return value;
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
      try {
        size_t used = 0;
        shape.push_back(std::stoll(dim, &used));
        if (used != dim.size() || shape.back() < 0) throw Error("");
      } catch (const std::exception&) {
        throw Error("--input-shape " + spec + ": '" + dim + "' is not a non-negative integer");
      }
    }
    shapes[spec.substr(0, eq)] = shape;
  }
  return shapes;
}

}  // namespace tessera::cli
