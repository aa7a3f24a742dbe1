// Private helpers for reading user-written YAML (deployment configs, device descriptors, packs):
// a guarded loader that refuses pathological input before anything recurses over it, and a
// strict map reader whose errors name the file, line, column and key path.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::config {

// Hard limits on what a YAML document may contain. They are far above anything a real config or
// pack needs and far below what would exhaust the stack or the CPU.
struct YamlLimits {
  int max_depth = 64;            // nesting of maps/sequences (block or flow)
  size_t max_nodes = 1000000;    // nodes visited, counting each alias use (billion laughs)
  size_t max_bytes = 64u << 20;  // file size
};

// A parsed document and the name errors should use for it.
struct YamlDoc {
  std::string file;  // as given by the caller, used in messages
  YAML::Node root;
};

// Reads and parses `path`. The raw text is scanned for nesting depth first (so yaml-cpp never
// recurses deeply), then the node graph is walked with depth and visit-count limits (so aliases
// cannot multiply the work). Throws tessera::Error "file:line:col: message".
YamlDoc load_yaml_file(const std::string& path, const YamlLimits& limits = {});
// Same for text already in memory; `file` is only used in messages.
YamlDoc load_yaml_text(const std::string& text, const std::string& file,
                       const YamlLimits& limits = {});

// "file:line:col: key_path: message" with the node's 1-based position.
[[noreturn]] void fail_at(const std::string& file, const YAML::Node& node,
                          const std::string& key_path, const std::string& message);
std::string location(const std::string& file, const YAML::Node& node);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(const std::string& a, const std::string& b);
// The closest of `candidates` to `word` if it is close enough to be a likely typo, else "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// Human-readable kind of a node for "expected X, got Y" messages.
const char* node_kind(const YAML::Node& node);

// Strict reader for one YAML map: unknown keys are refused on construction (with a suggestion),
// typed getters check type and range. `path` is the key path of the map itself ("" for the root,
// "targets[1]", ...).
class MapReader {
 public:
  MapReader(const std::string& file, const YAML::Node& node, std::string path,
            std::vector<std::string> known_keys);

  bool has(const std::string& key) const;
  YAML::Node node(const std::string& key) const { return node_[key]; }
  const YAML::Node& self() const { return node_; }
  std::string key_path(const std::string& key) const;
  const std::string& file() const { return file_; }

  // Each getter returns `fallback` when the key is absent (or null), and throws when present
  // with the wrong type or out of range. require_* throw when absent.
  std::string str(const std::string& key, const std::string& fallback) const;
  std::string require_str(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) const;
  int64_t require_integer(const std::string& key, int64_t min, int64_t max) const;
  double number(const std::string& key, double fallback, double min, double max) const;
  bool boolean(const std::string& key, bool fallback) const;
  // One of `choices` (exact spelling); the error lists them.
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& choices) const;
  // A sequence of strings (a single string is not accepted as a list).
  std::vector<std::string> str_list(const std::string& key) const;
  // The value must be a map / sequence (or absent). Returns the node; an absent or null value
  // gives a node that tests false.
  YAML::Node map(const std::string& key) const;
  YAML::Node seq(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  std::string file_;
  YAML::Node node_;
  std::string path_;
};

// Scalar conversions with the same error style, for values not reached through a MapReader.
std::string scalar_str(const std::string& file, const YAML::Node& node, const std::string& path);
int64_t scalar_int(const std::string& file, const YAML::Node& node, const std::string& path,
                   int64_t min, int64_t max);

}  // namespace tessera::config
