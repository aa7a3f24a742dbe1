// Packages (.tsp): a model compiled for its targets, loaded by the runtime without the ONNX
// importer, YAML or packs (core/schema/package.fbs has the file layout).
//
// A package holds the graph after import and the graph passes, each node's target, precision and
// schedule config with where that config came from, the targets as they were resolved (plugin,
// version, device, driver, pack) and the weights, 64-byte aligned. read_package maps the file
// and verifies it before it trusts any of it: the FlatBuffer verifier, then every value index,
// dtype, shape, weight offset and size (with overflow checks); a failure names the file and the
// field. Constant tensors then point into the mapping, which they keep alive.
//
// A Session made from a package (Session(Package, ...)) runs each node where the package says,
// with its config. When a target's plugin or device differs from the package's (another device,
// a plugin of another version), the session refuses with the reason, or with
// SessionOptions::replan_package plans the graph again for the devices at hand.
//
// Integrity (tessera/integrity.hpp): the writer stores a SHA-256 per member (the manifest, each
// target, the graph's shape, each value with its weights, each node with its config) and
// read_package refuses a package whose member differs, naming it ("graph.nodes[3] ('relu_1'):
// its content does not match ..."), before anything of it is used. Signatures (ed25519) sign
// the content hash; a session given trusted keys refuses a package no trusted key signed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/integrity.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera {

class Session;

// Bumped when a reader of the previous version could not read what the writer writes.
inline constexpr uint32_t kPackageFormatVersion = 1;

struct PackageTarget {
  std::string spec;    // "mali:any"
  std::string plugin;  // "mali"
  std::string plugin_version;
  std::string plugin_abi;  // "2.2"
  std::string device;      // the device's name when compiled
  std::string driver;
  std::string pack_file;  // "" = the schedules' heuristics
  std::string pack_level;
  int32_t threads = 0;
  std::vector<std::pair<std::string, std::string>> options;
};

struct PackageNode {
  int32_t target = -1;      // index into Package::targets
  std::string precision;    // what its region compiles at
  NodeConfigChoice config;  // schedule "" = the plugin's heuristic at load
  std::string config_source;
};

struct Package {
  std::string file;  // where it was read from ("" when made in memory)
  uint32_t format_version = kPackageFormatVersion;
  std::string engine_version;
  std::string plugin_abi;
  std::string source_model;
  std::string created_by;
  std::string precision = "fp32";
  Graph graph;  // prepared
  std::vector<PackageTarget> targets;
  std::vector<PackageNode> nodes;  // parallel to graph.nodes
  // The content hash read_package checked the members against (zero when made in memory). The
  // trust check uses it for a package read from a file instead of hashing the weights again, so
  // an application that edits a package it read must clear `file` (or this) to have its edit
  // checked against the signatures.
  Sha256Digest content_sha256{};
  // Signatures over the content hash, as read (checked only against trusted keys).
  std::vector<Signature> signatures;
};

// The package of a session's current plan: its graph, placement and configs.
Package package_from_session(const Session& session);

// The bytes of the .tsp file for `package`.
std::string serialize_package(const Package& package);

// Writes `package` to `path`. Refuses to replace an existing file unless `overwrite`; writes a
// temporary file beside it and renames it, so a failure leaves no partial package.
void write_package(const Package& package, const std::string& path, bool overwrite);

// Maps and verifies the package at `path`. Throws tessera::Error naming the file and field.
Package read_package(const std::string& path);
// Whether parse_package compares the members with the hashes stored in the package. Only the
// fuzzer passes kIgnoreForFuzzing: mutated bytes almost never keep their hashes, and the checks
// behind the hash must hold against a crafted package that states correct ones, so they are
// fuzzed with the comparison off (content_sha256 is then the content's own hash).
enum class ContentHashCheck { kCheck, kIgnoreForFuzzing };
// The same over bytes in memory (for the fuzzer); constants are copied out of `data`.
Package parse_package(const uint8_t* data, size_t size, const std::string& file,
                      ContentHashCheck hash_check = ContentHashCheck::kCheck);

// The content hash of `package` (over every member's SHA-256): what a signature signs.
Sha256Digest package_content_digest(const Package& package);
// Adds a signature by `key` over the content hash, replacing an earlier one by the same key.
// Throws tessera::Error when this build has no libsodium.
void sign_package(Package& package, const SecretKey& key);
// Why `package` is not trusted under `trusted_keys` (see trust_problem), or nullopt.
std::optional<std::string> package_trust_problem(const Package& package,
                                                 const std::vector<std::string>& trusted_keys);

// True when the file starts like a package (size prefix, then "TSPK" as the identifier).
bool is_package_file(const std::string& path);

}  // namespace tessera
