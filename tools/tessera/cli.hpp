// Shared pieces of the `tessera` subcommands: argument parsing and common option handling.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/json.hpp"
#include "tessera/tensor.hpp"

namespace tessera::cli {

// A small, strict option parser: `--name value`, `--name=value`, boolean `--flag`, repeated
// options, positionals. Unknown options are an error that names them and lists the known ones.
class Args {
 public:
  // `value_options` take a value; `flag_options` do not. Names are given without dashes.
  Args(int argc, char** argv, std::vector<std::string> value_options,
       std::vector<std::string> flag_options);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  // Last value given for `name`, or `fallback`.
  std::string get(const std::string& name, const std::string& fallback = "") const;
  // Every value given for a repeatable option, in order.
  std::vector<std::string> get_all(const std::string& name) const;
  // Parses an integer option strictly (decimal digits with an optional '-', nothing else) and
  // checks it lies in [min, max]; errors name the option, the text and the range.
  int64_t get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  // The same for a finite decimal number (NaN and infinities are refused).
  double get_number(const std::string& name, double fallback, double min, double max) const;
  // A byte count: digits with an optional K, M, G or T suffix (powers of 1024), at least 1.
  int64_t get_bytes(const std::string& name, int64_t fallback) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, bool> flags_;
  std::vector<std::string> positionals_;
};

// True when the command line being run asked for --json (set by Args).
bool json_output();
// A command that failed: "tessera COMMAND: error: MESSAGE" on stderr and, with --json, one object
// {"error": MESSAGE} on stdout, so that a script reading stdout gets JSON either way; the options
// MESSAGE names are written as this command's flags (spell_options). Returns 1, the exit code.
int report_error(const std::string& command, const std::string& message);
// A command called wrongly, once its usage went to stderr: with --json, {"error": PROBLEM} on
// stdout. Returns 2, the exit code of a usage error.
int usage_error(const std::string& problem);
// A command's usage: on stdout when asked for (--help; returns 0), else on stderr as a usage
// error naming its first line (returns usage_error's 2).
int print_usage(const std::string& usage, bool asked);

// A --plugin-dir value as given, or an error naming it when it is relative or is not an existing
// directory (the plugin host would only record it as not searched, and the user would never
// learn why the plugins are absent). The wording is the C API's for options.plugin_dir.
std::string checked_plugin_dir(const std::string& dir);

// Applies --memory-limit BYTES[K|M|G|T] (every command that loads a model takes it): tensors and
// session plans above it are refused by name before anything is allocated.
void apply_memory_limit_option(const Args& args);
// The option name every model-loading command adds to its value options.
constexpr const char* kMemoryLimitOption = "memory-limit";

using tessera::json_string;  // tessera/json.hpp
// ["a", "b"]: a JSON array of string literals.
std::string json_string_list(const std::vector<std::string>& items);
// [1, 3, 224]: a JSON array of integers (shapes, class indices).
std::string json_int_list(const std::vector<int64_t>& items);
// A time or estimate as a JSON number with 3 decimals (microsecond values to the nanosecond).
std::string json_number(double v);

// "a,b,c" -> {"a","b","c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text, char separator = ',');

// Parses "--input-shape name=1,3,224,224" values into a map. An empty dimension ("4,,3") and an
// input named twice are errors naming the option and the spec.
std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& specs);

// Subcommands: argv[0] is the subcommand name. Return the process exit code.
int cmd_run(int argc, char** argv);
int cmd_zoo(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_plan(int argc, char** argv);
int cmd_compile(int argc, char** argv);
int cmd_pack(int argc, char** argv);
int cmd_tune(int argc, char** argv);
int cmd_agent(int argc, char** argv);
int cmd_farm(int argc, char** argv);
int cmd_keygen(int argc, char** argv);
int cmd_sign(int argc, char** argv);
int cmd_verify(int argc, char** argv);
// This executable, which is also the tuner's measuring worker (`tessera tune --worker`).
std::string this_executable();
int cmd_bench(int argc, char** argv);

}  // namespace tessera::cli
