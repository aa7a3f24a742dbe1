// Sealing a pack file: its `sha256:` (and `signatures:`) written into the text it already has,
// every other line kept byte for byte, so a hand-written or measured pack keeps its numbers.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/pack.hpp"
#include "yaml/yaml_doc.hpp"

namespace tessera {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start) + "\n");
      break;
    }
    lines.push_back(text.substr(start, end - start + 1));
    start = end + 1;
  }
  return lines;
}

struct TopKey {
  std::string name;
  size_t line = 0;  // 0-based
};

// The top-level keys of a pack in file order; each must start a line (block style).
std::vector<TopKey> top_keys(const std::string& text, const std::string& file) {
  const config::YamlDoc doc = config::load_yaml_text(text, file);
  if (!doc.root.IsMap()) {
    config::fail_at(file, doc.root, "",
                    std::string("a pack is a map, got ") + config::node_kind(doc.root));
  }
  std::vector<TopKey> keys;
  for (const auto& kv : doc.root) {
    const YAML::Mark m = kv.first.Mark();
    if (m.is_null() || m.column != 0 || !kv.first.IsScalar()) {
      config::fail_at(file, kv.first, "",
                      "the pack is not in block style at its top level (one key per line), so "
                      "its hash cannot be written into it; write it as tessera pack build does");
    }
    keys.push_back({kv.first.Scalar(), static_cast<size_t>(m.line)});
  }
  std::sort(keys.begin(), keys.end(),
            [](const TopKey& a, const TopKey& b) { return a.line < b.line; });
  return keys;
}

// `lines` without the entries of the top-level keys sha256 and signatures.
std::vector<std::string> without_integrity(const std::vector<std::string>& lines,
                                           const std::vector<TopKey>& keys) {
  std::vector<char> drop(lines.size(), 0);
  for (size_t k = 0; k < keys.size(); ++k) {
    if (keys[k].name != "sha256" && keys[k].name != "signatures") continue;
    const size_t end = k + 1 < keys.size() ? keys[k + 1].line : lines.size();
    for (size_t i = keys[k].line; i < end && i < lines.size(); ++i) drop[i] = 1;
  }
  std::vector<std::string> kept;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!drop[i]) kept.push_back(lines[i]);
  }
  return kept;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l;
  return out;
}

}  // namespace

std::string seal_pack_text(const std::string& text, const std::string& file,
                           const std::vector<Signature>& signatures) {
  std::vector<std::string> lines = without_integrity(split_lines(text), top_keys(text, file));
  const Pack content = parse_pack(join(lines), file);
  if (content.schema_version != kPackSchemaVersion) {
    throw Error(file + ": schema_version " + std::to_string(content.schema_version) +
                " is not one this engine reads, so its content cannot be hashed");
  }
  const Sha256Digest digest = pack_content_digest(content);
  std::vector<std::string> added = {"sha256: \"" + to_hex(digest) + "\"\n"};
  if (!signatures.empty()) added.push_back("signatures:\n");
  for (const Signature& s : signatures) {
    added.push_back("  - key: \"" + s.key.text() + "\"\n");
    added.push_back("    signature: \"" + to_hex(s.bytes.data(), s.bytes.size()) + "\"\n");
  }
  // At the end: the lines before keep their numbers, which messages about entries cite.
  lines.insert(lines.end(), added.begin(), added.end());
  std::string sealed = join(lines);
  // What is written must load, with the same content and the signatures given.
  const Pack back = parse_pack(sealed, file);
  if (pack_content_digest(back) != digest || back.sha256 != to_hex(digest) ||
      back.signatures.size() != signatures.size()) {
    throw Error(file + ": the sealed pack does not read back with the same content");
  }
  return sealed;
}

}  // namespace tessera
