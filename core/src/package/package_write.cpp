// Writing packages: a session's plan to a Package, and a Package to a .tsp file (the FlatBuffer
// of package.fbs, size-prefixed, then the 64-byte aligned weight area).
#include <flatbuffers/flatbuffers.h>

#include <map>
#include <string>
#include <vector>

#include "package/package_digest.hpp"
#include "package/package_format.hpp"
#include "package_generated.h"
#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/package.hpp"
#include "tessera/plugin_abi.h"
#include "tessera/session.hpp"

namespace tessera {

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// The weight area being built: each tensor's bytes once (constants shared between values, as
// the importer shares them, are stored once), at 64-byte aligned offsets.
class WeightArea {
 public:
  uint64_t add(const Tensor& t) {
    const void* key = t.raw();
    auto it = offsets_.find(key);
    if (it != offsets_.end() && it->second.second == t.nbytes()) return it->second.first;
    bytes_.resize(package_detail::align_up(bytes_.size()), '\0');
    const uint64_t offset = bytes_.size();
    bytes_.append(static_cast<const char*>(t.raw()), t.nbytes());
    if (key != nullptr) offsets_[key] = {offset, t.nbytes()};
    return offset;
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
  std::map<const void*, std::pair<uint64_t, size_t>> offsets_;
};

Offset<fb::TensorData> tensor_data(FlatBufferBuilder& b, WeightArea& weights, const Tensor& t) {
  const uint64_t offset = weights.add(t);
  return fb::CreateTensorDataDirect(b, static_cast<int32_t>(t.dtype()), &t.shape(), offset,
                                    t.nbytes());
}

Offset<fb::Attribute> attribute(FlatBufferBuilder& b, WeightArea& weights, const std::string& name,
                                const AttributeValue& value) {
  const auto n = b.CreateString(name);
  if (const auto* i = std::get_if<int64_t>(&value)) {
    fb::AttributeBuilder a(b);
    a.add_name(n);
    a.add_kind(fb::AttributeKind::Int);
    a.add_i(*i);
    return a.Finish();
  }
  if (const auto* f = std::get_if<float>(&value)) {
    fb::AttributeBuilder a(b);
    a.add_name(n);
    a.add_kind(fb::AttributeKind::Float);
    a.add_f(*f);
    return a.Finish();
  }
  if (const auto* s = std::get_if<std::string>(&value)) {
    const auto text = b.CreateString(*s);
    fb::AttributeBuilder a(b);
    a.add_name(n);
    a.add_kind(fb::AttributeKind::String);
    a.add_s(text);
    return a.Finish();
  }
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
    const auto v = b.CreateVector(*ints);
    fb::AttributeBuilder a(b);
    a.add_name(n);
    a.add_kind(fb::AttributeKind::Ints);
    a.add_ints(v);
    return a.Finish();
  }
  if (const auto* floats = std::get_if<std::vector<float>>(&value)) {
    const auto v = b.CreateVector(*floats);
    fb::AttributeBuilder a(b);
    a.add_name(n);
    a.add_kind(fb::AttributeKind::Floats);
    a.add_floats(v);
    return a.Finish();
  }
  if (const auto* strings = std::get_if<std::vector<std::string>>(&value)) {
    const auto v = b.CreateVectorOfStrings(*strings);
    fb::AttributeBuilder a(b);
    a.add_name(n);
    a.add_kind(fb::AttributeKind::Strings);
    a.add_strings(v);
    return a.Finish();
  }
  const auto t = tensor_data(b, weights, std::get<Tensor>(value));
  fb::AttributeBuilder a(b);
  a.add_name(n);
  a.add_kind(fb::AttributeKind::Tensor);
  a.add_tensor(t);
  return a.Finish();
}

Offset<fb::Value> value(FlatBufferBuilder& b, WeightArea& weights, const Value& v) {
  Offset<fb::TensorData> constant;
  if (v.constant) constant = tensor_data(b, weights, *v.constant);
  const std::vector<uint8_t> open(v.open_dims.begin(), v.open_dims.end());
  const auto open_dims = b.CreateVector(open);
  return fb::CreateValue(b, b.CreateString(v.name), static_cast<int32_t>(v.dtype),
                         b.CreateVector(v.shape), v.shape_known, open_dims, constant);
}

Offset<fb::Node> node(FlatBufferBuilder& b, WeightArea& weights, const Node& n,
                      const PackageNode& placed) {
  std::vector<Offset<fb::Attribute>> attrs;
  for (const auto& [name, v] : n.attrs.all()) attrs.push_back(attribute(b, weights, name, v));
  std::vector<Offset<fb::Knob>> knobs;
  for (const Knob& k : placed.config.knobs)
    knobs.push_back(fb::CreateKnob(b, b.CreateString(k.name), k.value));
  // Strings by length (CreateString of a std::string), never by c_str(): a name holding a NUL
  // byte must come back as it went out.
  const auto config =
      fb::CreateNodeConfig(b, b.CreateString(placed.config.schedule), b.CreateVector(knobs),
                           b.CreateString(placed.config_source));
  return fb::CreateNode(b, b.CreateString(n.name), b.CreateString(n.op_type),
                        b.CreateVector(n.inputs), b.CreateVector(n.outputs), b.CreateVector(attrs),
                        placed.target, b.CreateString(placed.precision), config);
}

Offset<fb::Target> target(FlatBufferBuilder& b, const PackageTarget& t) {
  std::vector<std::string> names, values;
  for (const auto& [name, v] : t.options) {
    names.push_back(name);
    values.push_back(v);
  }
  const auto option_names = b.CreateVectorOfStrings(names);
  const auto option_values = b.CreateVectorOfStrings(values);
  return fb::CreateTarget(b, b.CreateString(t.spec), b.CreateString(t.plugin),
                          b.CreateString(t.plugin_version), b.CreateString(t.plugin_abi),
                          b.CreateString(t.device), b.CreateString(t.driver),
                          b.CreateString(t.pack_file), b.CreateString(t.pack_level), t.threads,
                          option_names, option_values);
}

}  // namespace

Package package_from_session(const Session& session) {
  const Graph& graph = session.graph();
  const ExecutionPlan& plan = session.plan();
  if (plan.nodes.size() != graph.nodes.size()) {
    throw Error("package: the session's plan has " + std::to_string(plan.nodes.size()) +
                " nodes but its graph " + std::to_string(graph.nodes.size()));
  }
  Package p;
  p.engine_version = TESSERA_VERSION;
  p.plugin_abi = package_detail::abi_text(TESSERA_PLUGIN_ABI_MAJOR, TESSERA_PLUGIN_ABI_MINOR);
  p.graph = graph;
  p.graph.unprepared.reset();
  p.graph.value_inputs.clear();
  p.graph.unsized_inputs.clear();
  p.graph.value_needed_at_run.clear();
  for (const Node& n : p.graph.nodes) {
    // Preparation inlines every If; a body left means the graph was never prepared.
    if (!n.subgraphs.empty()) {
      throw Error("package: " + graph.describe(n) + " still holds control-flow subgraphs");
    }
  }
  p.source_model = graph.source;
  // Targets in the order the plan resolved them; only those some node runs on.
  std::map<std::pair<std::string, std::string>, int32_t> target_index;
  for (const NodePlacement& n : plan.nodes) {
    const auto key = std::make_pair(n.target, n.device);
    auto it = target_index.find(key);
    if (it == target_index.end()) {
      PackageTarget t;
      t.spec = n.target;
      t.plugin = n.plugin;
      t.device = n.device;
      for (const DevicePackPlan& d : plan.packs) {
        if (d.target != n.target) continue;
        t.pack_file = d.pack_file;
        t.pack_level = d.level;
      }
      if (const auto loaded = session.plugin_host().find(n.plugin)) {
        t.plugin_version = loaded->version();
        t.plugin_abi = package_detail::abi_text(loaded->abi_major(), loaded->abi_minor());
        for (const PluginDeviceInfo& d : loaded->devices()) {
          if (d.name == n.device) t.driver = d.driver_version;
        }
      }
      it = target_index.emplace(key, static_cast<int32_t>(p.targets.size())).first;
      p.targets.push_back(std::move(t));
    }
    PackageNode placed;
    placed.target = it->second;
    placed.precision = n.precision;
    // The session's precision is what its reduced nodes run at (fp32 when none is).
    if (n.precision != "fp32") p.precision = n.precision;
    placed.config = n.config_choice;
    placed.config_source = n.config;
    p.nodes.push_back(std::move(placed));
  }
  return p;
}

std::string serialize_package(const Package& package) {
  const Graph& g = package.graph;
  if (package.nodes.size() != g.nodes.size()) {
    throw Error("package has " + std::to_string(package.nodes.size()) + " node placements for " +
                std::to_string(g.nodes.size()) + " graph nodes");
  }
  FlatBufferBuilder b(1 << 20);
  WeightArea weights;
  std::vector<Offset<fb::Value>> values;
  for (const Value& v : g.values) values.push_back(value(b, weights, v));
  std::vector<Offset<fb::Node>> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    nodes.push_back(node(b, weights, g.nodes[i], package.nodes[i]));
  const auto graph = fb::CreateGraphDirect(b, g.opset, &values, &nodes, &g.inputs, &g.outputs);
  std::vector<Offset<fb::Target>> targets;
  for (const PackageTarget& t : package.targets) targets.push_back(target(b, t));
  const std::string& area = weights.bytes();
  std::vector<uint8_t> member_sha256;
  for (const package_detail::MemberDigest& m : package_detail::member_digests(package))
    member_sha256.insert(member_sha256.end(), m.digest.begin(), m.digest.end());
  std::vector<Offset<fb::PackageSignature>> signatures;
  for (const Signature& s : package.signatures) {
    signatures.push_back(
        fb::CreatePackageSignature(b, b.CreateVector(s.key.bytes.data(), s.key.bytes.size()),
                                   b.CreateVector(s.bytes.data(), s.bytes.size())));
  }
  const auto root =
      fb::CreatePackage(b, kPackageFormatVersion, b.CreateString(package.engine_version),
                        b.CreateString(package.plugin_abi), b.CreateString(package.source_model),
                        b.CreateString(package.created_by), b.CreateString(package.precision),
                        graph, b.CreateVector(targets), area.size(), b.CreateVector(member_sha256),
                        b.CreateVector(signatures));
  b.FinishSizePrefixed(root, fb::PackageIdentifier());
  std::string bytes(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  bytes.resize(package_detail::align_up(bytes.size()), '\0');
  return bytes + area;
}

void write_package(const Package& package, const std::string& path, bool overwrite) {
  std::string bytes;
  try {
    bytes = serialize_package(package);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  write_file_atomic(path, bytes, overwrite);
}

}  // namespace tessera
