// The canonical encoding a package's member hashes are taken over, and package signing and trust.
// Every field is written with its length or a fixed width (little-endian), so no two different
// contents encode alike.
#include "package/package_digest.hpp"

#include <cstring>
#include <tuple>
#include <type_traits>

#include "tessera/error.hpp"

namespace tessera::package_detail {

namespace {

class Canon {
 public:
  void u64(uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    h_.update(b, 8);
  }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void str(const std::string& s) {
    u64(s.size());
    h_.update(s);
  }
  template <typename T>
  void ints(const std::vector<T>& v) {
    static_assert(std::is_integral_v<T>);
    u64(v.size());
    for (T x : v) i64(static_cast<int64_t>(x));
  }
  void f32(float f) {
    uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    u64(bits);
  }
  void tensor(const Tensor& t) {
    i64(static_cast<int64_t>(t.dtype()));
    ints(t.shape());
    u64(t.nbytes());
    h_.update(t.raw(), t.nbytes());
  }
  Sha256Digest finish() { return h_.finish(); }

 private:
  Sha256 h_;
};

void attribute(Canon& c, const AttributeValue& value) {
  c.u64(value.index());
  if (const auto* i = std::get_if<int64_t>(&value)) {
    c.i64(*i);
  } else if (const auto* f = std::get_if<float>(&value)) {
    c.f32(*f);
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    c.str(*s);
  } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
    c.ints(*is);
  } else if (const auto* fs = std::get_if<std::vector<float>>(&value)) {
    c.u64(fs->size());
    for (float f : *fs) c.f32(f);
  } else if (const auto* ss = std::get_if<std::vector<std::string>>(&value)) {
    c.u64(ss->size());
    for (const std::string& s : *ss) c.str(s);
  } else {
    c.tensor(std::get<Tensor>(value));
  }
}

Sha256Digest manifest(const Package& p) {
  Canon c;
  c.u64(p.format_version);
  c.str(p.engine_version);
  c.str(p.plugin_abi);
  c.str(p.source_model);
  c.str(p.created_by);
  c.str(p.precision);
  return c.finish();
}

Sha256Digest target(const PackageTarget& t) {
  Canon c;
  for (const std::string* s : {&t.spec, &t.plugin, &t.plugin_version, &t.plugin_abi, &t.device,
                               &t.driver, &t.pack_file, &t.pack_level})
    c.str(*s);
  c.i64(t.threads);
  c.u64(t.options.size());
  for (const auto& [name, value] : t.options) {
    c.str(name);
    c.str(value);
  }
  return c.finish();
}

Sha256Digest graph(const Graph& g) {
  Canon c;
  c.i64(g.opset);
  c.ints(g.inputs);
  c.ints(g.outputs);
  c.u64(g.values.size());
  c.u64(g.nodes.size());
  return c.finish();
}

Sha256Digest value(const Value& v) {
  Canon c;
  c.str(v.name);
  c.i64(static_cast<int64_t>(v.dtype));
  c.ints(v.shape);
  c.u64(v.shape_known);
  c.u64(v.open_dims.size());
  for (bool open : v.open_dims) c.u64(open);
  c.u64(v.constant != nullptr);
  if (v.constant) c.tensor(*v.constant);
  return c.finish();
}

Sha256Digest node(const Node& n, const PackageNode& placed) {
  Canon c;
  c.str(n.name);
  c.str(n.op_type);
  c.ints(n.inputs);
  c.ints(n.outputs);
  c.u64(n.attrs.all().size());
  for (const auto& [name, v] : n.attrs.all()) {
    c.str(name);
    attribute(c, v);
  }
  c.i64(placed.target);
  c.str(placed.precision);
  c.str(placed.config.schedule);
  c.u64(placed.config.knobs.size());
  for (const Knob& k : placed.config.knobs) {
    c.str(k.name);
    c.i64(k.value);
  }
  c.str(placed.config_source);
  return c.finish();
}

}  // namespace

size_t member_count(const Package& p) {
  return 2 + p.targets.size() + p.graph.nodes.size() + p.graph.values.size();
}

void visit_members(
    const Package& p,
    const std::function<bool(const std::string& member, const Sha256Digest&)>& visit) {
  const Graph& g = p.graph;
  if (p.nodes.size() != g.nodes.size()) {
    throw Error("package has " + std::to_string(p.nodes.size()) + " node placements for " +
                std::to_string(g.nodes.size()) + " graph nodes");
  }
  if (!visit("manifest", manifest(p))) return;
  for (size_t i = 0; i < p.targets.size(); ++i) {
    if (!visit("targets[" + std::to_string(i) + "]", target(p.targets[i]))) return;
  }
  if (!visit("graph", graph(g))) return;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!visit("graph.nodes[" + std::to_string(i) + "] ('" + escaped(g.nodes[i].name) + "')",
               node(g.nodes[i], p.nodes[i])))
      return;
  }
  for (size_t i = 0; i < g.values.size(); ++i) {
    if (!visit("graph.values[" + std::to_string(i) + "] ('" + escaped(g.values[i].name) + "')",
               value(g.values[i])))
      return;
  }
}

std::vector<MemberDigest> member_digests(const Package& p) {
  std::vector<MemberDigest> out;
  out.reserve(member_count(p));
  visit_members(p, [&](const std::string& member, const Sha256Digest& d) {
    out.push_back({member, d});
    return true;
  });
  return out;
}

Sha256Digest root_digest(const uint8_t* digests, size_t count) {
  Sha256 h;
  h.update("tessera-package-members", 23);
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(uint64_t{count} >> (8 * i));
  h.update(b, 8);
  h.update(digests, count * std::tuple_size<Sha256Digest>::value);
  return h.finish();
}

Sha256Digest root_digest(const std::vector<MemberDigest>& members) {
  std::vector<uint8_t> bytes;
  for (const MemberDigest& m : members) bytes.insert(bytes.end(), m.digest.begin(), m.digest.end());
  return root_digest(bytes.data(), members.size());
}

}  // namespace tessera::package_detail

namespace tessera {

Sha256Digest package_content_digest(const Package& package) {
  return package_detail::root_digest(package_detail::member_digests(package));
}

void sign_package(Package& package, const SecretKey& key) {
  const Signature s = sign_digest(key, kPackageSignatureDomain, package_content_digest(package));
  for (Signature& old : package.signatures) {
    if (old.key == s.key) {
      old = s;
      return;
    }
  }
  package.signatures.push_back(s);
}

std::optional<std::string> package_trust_problem(const Package& package,
                                                 const std::vector<std::string>& trusted_keys) {
  if (trusted_keys.empty()) return std::nullopt;
  // read_package checked the members against the hashes it read, so its result holds the
  // content hash; a package built or changed in memory is hashed now.
  const Sha256Digest digest = package.file.empty() || package.content_sha256 == Sha256Digest{}
                                  ? package_content_digest(package)
                                  : package.content_sha256;
  return trust_problem(package.signatures, kPackageSignatureDomain, digest, trusted_keys);
}

}  // namespace tessera
