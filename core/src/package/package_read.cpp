// Reading packages: map the file, verify the FlatBuffer, then check every index, dtype, shape,
// weight offset and size before building the graph, and re-infer the shapes to check the graph
// is what its nodes compute. Nothing from the file is used before it is checked.
#include <fcntl.h>
#include <flatbuffers/flatbuffers.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "package/package_digest.hpp"
#include "package/package_format.hpp"
#include "package_generated.h"
#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/opset.hpp"
#include "tessera/package.hpp"
#include "tessera/passes.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera {

namespace {

// Flatbuffer tables nested deeper than this, or more tables than this, are refused (a hostile
// buffer would otherwise make the verifier walk for a long time).
constexpr flatbuffers::uoffset_t kMaxDepth = 16;
constexpr flatbuffers::uoffset_t kMaxTables = 1u << 24;

std::string str(const flatbuffers::String* s) {
  return s == nullptr ? std::string() : s->str();
}

template <typename T>
std::vector<T> vec(const flatbuffers::Vector<T>* v) {
  return v == nullptr ? std::vector<T>() : std::vector<T>(v->begin(), v->end());
}

bool add_u64(uint64_t a, uint64_t b, uint64_t& sum) {
  return !__builtin_add_overflow(a, b, &sum);
}

bool known_precision(const std::string& p) {
  return p == "fp32" || p == "fp16" || p == "fp16-acc32";
}

class Decoder {
 public:
  Decoder(std::shared_ptr<std::byte[]> bytes, size_t size, std::string file,
          ContentHashCheck hash_check)
      : bytes_(std::move(bytes)), size_(size), file_(std::move(file)), hash_check_(hash_check) {}

  Package decode() {
    const auto* data = reinterpret_cast<const uint8_t*>(bytes_.get());
    if (size_ < 12) fail("file", std::to_string(size_) + " bytes is too short for a package");
    if (!flatbuffers::BufferHasIdentifier(data, fb::PackageIdentifier(), /*size_prefixed=*/true)) {
      fail("file", "not a Tessera package (no 'TSPK' identifier)");
    }
    uint32_t prefix = 0;
    std::memcpy(&prefix, data, 4);
    prefix = flatbuffers::EndianScalar(prefix);
    if (prefix > size_ - 4) {
      fail("size prefix", "says " + std::to_string(prefix) + " bytes but the file holds " +
                              std::to_string(size_ - 4) + " after it (truncated?)");
    }
    flatbuffers::Verifier verifier(data, size_t{4} + prefix, kMaxDepth, kMaxTables);
    if (!fb::VerifySizePrefixedPackageBuffer(verifier)) {
      fail("header", "the FlatBuffer does not verify (corrupted or truncated)");
    }
    const fb::Package* root = fb::GetSizePrefixedPackage(data);
    Package p;
    p.file = file_;
    p.format_version = root->format_version();
    if (p.format_version != kPackageFormatVersion) {
      fail("format_version", "is " + std::to_string(p.format_version) +
                                 ", this runtime reads version " +
                                 std::to_string(kPackageFormatVersion) +
                                 "; compile the model again with this version of tessera");
    }
    p.engine_version = str(root->engine_version());
    p.plugin_abi = str(root->plugin_abi());
    p.source_model = str(root->source_model());
    p.created_by = str(root->created_by());
    p.precision = str(root->precision());
    if (!known_precision(p.precision)) fail("precision", "'" + p.precision + "' is not known");

    weights_start_ = package_detail::align_up(size_t{4} + prefix);
    weights_size_ = root->weights_size();
    uint64_t end = 0;
    if (weights_start_ > size_ || !add_u64(weights_start_, weights_size_, end) || end != size_) {
      fail("weights_size", "the weight area of " + std::to_string(weights_size_) +
                               " bytes at offset " + std::to_string(weights_start_) +
                               " does not end where the file ends (" + std::to_string(size_) +
                               " bytes; truncated or extended?)");
    }
    if (root->targets() != nullptr) {
      for (flatbuffers::uoffset_t i = 0; i < root->targets()->size(); ++i)
        p.targets.push_back(target(*root->targets()->Get(i), "targets[" + std::to_string(i) + "]"));
    }
    graph(*root->graph(), p);
    // The content hash before any meaning is given to the content: a changed member is named
    // as changed, not reported as whatever inconsistency the change happens to make.
    check_members(*root, p);
    p.signatures = signatures(*root);
    check_shapes(p.graph);
    p.graph.prepared = true;
    return p;
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw Error(file_ + ": " + field + ": " + why);
  }

  PackageTarget target(const fb::Target& t, const std::string& field) const {
    PackageTarget out;
    out.spec = t.spec()->str();
    out.plugin = t.plugin()->str();
    if (out.spec.empty() || out.plugin.empty()) fail(field, "spec and plugin must not be empty");
    out.plugin_version = str(t.plugin_version());
    out.plugin_abi = str(t.plugin_abi());
    out.device = str(t.device());
    out.driver = str(t.driver());
    out.pack_file = str(t.pack_file());
    out.pack_level = str(t.pack_level());
    out.threads = t.threads();
    if (out.threads < 0 || out.threads > kMaxThreads) {
      fail(field + ".threads", std::to_string(out.threads) + " is outside 0.." +
                                   std::to_string(kMaxThreads) + " (0 = the plugin's default)");
    }
    const size_t names = t.option_names() ? t.option_names()->size() : 0;
    const size_t values = t.option_values() ? t.option_values()->size() : 0;
    if (names != values) {
      fail(field + ".option_values",
           std::to_string(values) + " values for " + std::to_string(names) + " option names");
    }
    for (size_t i = 0; i < names; ++i) {
      out.options.emplace_back(
          t.option_names()->Get(static_cast<flatbuffers::uoffset_t>(i))->str(),
          t.option_values()->Get(static_cast<flatbuffers::uoffset_t>(i))->str());
    }
    return out;
  }

  DType dtype(int32_t code, const std::string& field) const {
    if (!dtype_is_known(code))
      fail(field, "element type " + std::to_string(code) + " is not known");
    return static_cast<DType>(code);
  }

  // The verifier checks a vector's length field, not that 8-byte elements are 8-byte aligned: a
  // crafted buffer could make every read of them misaligned (undefined, a fault on some CPUs).
  template <typename T>
  const flatbuffers::Vector<T>* aligned(const flatbuffers::Vector<T>* v,
                                        const std::string& field) const {
    // An empty vector has no element to misread (and its data pointer need not be aligned).
    if (v != nullptr && v->size() != 0 &&
        reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) != 0) {
      fail(field, "its elements are not aligned (a corrupted buffer)");
    }
    return v;
  }

  Shape shape(const flatbuffers::Vector<int64_t>* dims, const std::string& field) const {
    Shape s = vec(aligned(dims, field));
    if (s.size() > 32) fail(field, "rank " + std::to_string(s.size()) + " is more than 32");
    for (int64_t d : s) {
      if (d < 0) fail(field, "dimension " + std::to_string(d) + " is negative");
    }
    return s;
  }

  // A tensor in the weight area, checked: dtype, shape, size = elements x element size, offset
  // aligned and inside the area, all with overflow checks.
  Tensor tensor(const fb::TensorData& t, const std::string& field) const {
    const DType type = dtype(t.dtype(), field + ".dtype");
    Shape dims = shape(t.shape(), field + ".shape");
    int64_t bytes = 0;
    try {
      bytes = shape_nbytes(dims, type);
    } catch (const Error& e) {
      fail(field + ".shape", e.what());
    }
    if (static_cast<uint64_t>(bytes) != t.size()) {
      fail(field + ".size", std::to_string(t.size()) + " bytes, but " + dtype_name(type) + " " +
                                shape_str(dims) + " takes " + std::to_string(bytes));
    }
    uint64_t end = 0;
    if (t.offset() % package_detail::kWeightAlignment != 0 || !add_u64(t.offset(), t.size(), end) ||
        end > weights_size_) {
      fail(field + ".offset", std::to_string(t.offset()) + " (+" + std::to_string(t.size()) +
                                  " bytes) is not an aligned range inside the " +
                                  std::to_string(weights_size_) + "-byte weight area");
    }
    // Into the mapping (or the copied bytes), which the tensor keeps alive.
    std::shared_ptr<std::byte[]> at(bytes_, bytes_.get() + weights_start_ + t.offset());
    return Tensor::over(type, std::move(dims), std::move(at));
  }

  ValueId value_index(int32_t id, size_t values, bool optional, const std::string& field) const {
    if (optional && id == kNoValue) return kNoValue;
    if (id < 0 || static_cast<size_t>(id) >= values) {
      fail(field, "value index " + std::to_string(id) + " is out of range (" +
                      std::to_string(values) + " values)");
    }
    return id;
  }

  AttributeValue attribute(const fb::Attribute& a, const std::string& field) const {
    switch (a.kind()) {
      case fb::AttributeKind::Int:
        return a.i();
      case fb::AttributeKind::Float:
        return a.f();
      case fb::AttributeKind::String:
        return str(a.s());
      case fb::AttributeKind::Ints:
        return vec(aligned(a.ints(), field + ".ints"));
      case fb::AttributeKind::Floats:
        return vec(a.floats());
      case fb::AttributeKind::Strings: {
        std::vector<std::string> out;
        if (a.strings() != nullptr) {
          for (const flatbuffers::String* s : *a.strings()) out.push_back(s->str());
        }
        return out;
      }
      case fb::AttributeKind::Tensor:
        if (a.tensor() == nullptr) fail(field + ".tensor", "is missing");
        return tensor(*a.tensor(), field + ".tensor");
    }
    fail(field + ".kind", std::to_string(static_cast<int>(a.kind())) + " is not an attribute kind");
  }

  void graph(const fb::Graph& g, Package& p) const {
    Graph& out = p.graph;
    out.source = file_;
    // The op files implement these opsets only (as the importer enforces): a graph claiming
    // another would run under semantics nobody checked it against.
    if (g.opset() < kMinOpset || g.opset() > kMaxOpset) {
      fail("graph.opset", "is " + std::to_string(g.opset()) + "; Tessera supports opsets " +
                              std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                              " of the default ONNX domain");
    }
    out.opset = g.opset();
    const size_t values = g.values() ? g.values()->size() : 0;
    for (size_t i = 0; i < values; ++i) {
      const fb::Value& v = *g.values()->Get(static_cast<flatbuffers::uoffset_t>(i));
      const std::string field = "graph.values[" + std::to_string(i) + "]";
      Value value;
      value.name = v.name()->str();
      if (value.name.empty()) fail(field + ".name", "is empty");
      value.dtype = dtype(v.dtype(), field + ".dtype");
      value.shape = shape(v.shape(), field + ".shape");
      value.shape_known = v.shape_known();
      if (v.open_dims() != nullptr) {
        for (uint8_t open : *v.open_dims()) value.open_dims.push_back(open != 0);
      }
      if (!value.open_dims.empty() && value.open_dims.size() != value.shape.size()) {
        fail(field + ".open_dims", std::to_string(value.open_dims.size()) + " flags for rank " +
                                       std::to_string(value.shape.size()));
      }
      if (v.constant() != nullptr) {
        Tensor c = tensor(*v.constant(), field + ".constant");
        if (c.dtype() != value.dtype || !value.shape_known || c.shape() != value.shape) {
          fail(field + ".constant", std::string("is ") + dtype_name(c.dtype()) + " " +
                                        shape_str(c.shape()) + " but the value is " +
                                        dtype_name(value.dtype) + " " + shape_str(value.shape));
        }
        value.constant = std::make_shared<const Tensor>(std::move(c));
      }
      out.values.push_back(std::move(value));
    }
    std::set<std::string> names;
    for (const Value& v : out.values) {
      if (!names.insert(v.name).second) fail("graph.values", "name '" + v.name + "' is repeated");
    }
    // Each value has at most one producer: a graph input, a constant or one node output; a node
    // reads only values produced before it, so the order is topological and has no cycle.
    std::vector<char> available(values, 0);
    for (size_t i = 0; i < values; ++i) available[i] = out.values[i].constant != nullptr;
    for (int32_t id : vec(g.inputs())) {
      const ValueId v = value_index(id, values, false, "graph.inputs");
      if (available[static_cast<size_t>(v)]) {
        fail("graph.inputs",
             "'" + out.values[static_cast<size_t>(v)].name + "' is listed twice or is a constant");
      }
      if (!out.values[static_cast<size_t>(v)].shape_known) {
        fail("graph.inputs",
             "'" + out.values[static_cast<size_t>(v)].name + "' has no known shape");
      }
      available[static_cast<size_t>(v)] = 1;
      out.inputs.push_back(v);
    }
    const size_t nodes = g.nodes() ? g.nodes()->size() : 0;
    std::set<std::string> node_names;
    for (size_t i = 0; i < nodes; ++i) {
      const fb::Node& n = *g.nodes()->Get(static_cast<flatbuffers::uoffset_t>(i));
      const std::string field = "graph.nodes[" + std::to_string(i) + "]";
      Node node;
      node.name = n.name()->str();
      node.op_type = n.op_type()->str();
      if (node.name.empty() || node.op_type.empty()) fail(field, "name and op_type must be set");
      if (!node_names.insert(node.name).second)
        fail(field + ".name", "'" + node.name + "' is repeated");
      const std::string where = field + " ('" + node.name + "')";
      for (int32_t id : vec(n.inputs())) {
        const ValueId v = value_index(id, values, true, where + ".inputs");
        if (v != kNoValue && !available[static_cast<size_t>(v)]) {
          fail(where + ".inputs", "reads '" + out.values[static_cast<size_t>(v)].name +
                                      "' before any node produces it");
        }
        node.inputs.push_back(v);
      }
      for (int32_t id : vec(n.outputs())) {
        const ValueId v = value_index(id, values, true, where + ".outputs");
        if (v != kNoValue) {
          if (available[static_cast<size_t>(v)]) {
            fail(where + ".outputs",
                 "'" + out.values[static_cast<size_t>(v)].name + "' already has a producer");
          }
          available[static_cast<size_t>(v)] = 1;
        }
        node.outputs.push_back(v);
      }
      if (n.attributes() != nullptr) {
        for (flatbuffers::uoffset_t a = 0; a < n.attributes()->size(); ++a) {
          const fb::Attribute& attr = *n.attributes()->Get(a);
          const std::string name = attr.name()->str();
          if (node.attrs.has(name)) fail(where + ".attributes", "'" + name + "' is repeated");
          node.attrs.set(name, attribute(attr, where + ".attributes['" + name + "']"));
        }
      }
      PackageNode placed;
      placed.target = n.target();
      if (placed.target < 0 || static_cast<size_t>(placed.target) >= p.targets.size()) {
        fail(where + ".target", std::to_string(placed.target) + " is out of range (" +
                                    std::to_string(p.targets.size()) + " targets)");
      }
      placed.precision = str(n.precision());
      if (placed.precision != "fp32" && placed.precision != p.precision) {
        fail(where + ".precision",
             "'" + placed.precision + "' is neither fp32 nor the package's " + p.precision);
      }
      if (const fb::NodeConfig* c = n.config()) {
        placed.config.schedule = str(c->schedule());
        placed.config_source = str(c->source());
        if (c->knobs() != nullptr) {
          for (const fb::Knob* k : *c->knobs()) {
            if (k->name()->size() == 0) fail(where + ".config.knobs", "a knob has no name");
            placed.config.knobs.push_back({k->name()->str(), k->value()});
          }
        }
      }
      out.nodes.push_back(std::move(node));
      p.nodes.push_back(std::move(placed));
    }
    std::set<ValueId> outputs;
    for (int32_t id : vec(g.outputs())) {
      const ValueId v = value_index(id, values, false, "graph.outputs");
      if (!available[static_cast<size_t>(v)]) {
        fail("graph.outputs",
             "'" + out.values[static_cast<size_t>(v)].name + "' is never produced");
      }
      if (!outputs.insert(v).second)
        fail("graph.outputs", "value index " + std::to_string(v) + " is repeated");
      out.outputs.push_back(v);
    }
    if (out.outputs.empty()) fail("graph.outputs", "the graph has no outputs");
  }

  // Each member's SHA-256 against the one the writer stored (package_digest.hpp); sets the
  // package's content hash.
  void check_members(const fb::Package& root, Package& p) const {
    if (hash_check_ == ContentHashCheck::kIgnoreForFuzzing) {
      p.content_sha256 = package_detail::root_digest(package_detail::member_digests(p));
      return;
    }
    const auto* stored = root.member_sha256();
    if (stored == nullptr || stored->size() == 0) {
      fail("member_sha256",
           "is missing: the package carries no content hash, so a change to it could not be "
           "seen; compile the model again with this version of tessera");
    }
    const size_t count = package_detail::member_count(p);
    const size_t digest_size = std::tuple_size<Sha256Digest>::value;
    if (stored->size() != count * digest_size) {
      fail("member_sha256", std::to_string(stored->size()) + " bytes of hashes for " +
                                std::to_string(count) + " members (" +
                                std::to_string(count * digest_size) +
                                " bytes): values or nodes were added or removed after writing");
    }
    size_t i = 0;
    package_detail::visit_members(p, [&](const std::string& member, const Sha256Digest& d) {
      const uint8_t* want = stored->data() + i * digest_size;
      if (std::memcmp(want, d.data(), digest_size) != 0) {
        fail(member, "its content does not match the SHA-256 written with the package (sha256:" +
                         to_hex(want, digest_size) + ", content sha256:" + to_hex(d) +
                         "): the package was changed or damaged after it was written; compile "
                         "it again");
      }
      ++i;
      return true;
    });
    p.content_sha256 = package_detail::root_digest(stored->data(), count);
  }

  std::vector<Signature> signatures(const fb::Package& root) const {
    std::vector<Signature> out;
    if (root.signatures() == nullptr) return out;
    for (flatbuffers::uoffset_t i = 0; i < root.signatures()->size(); ++i) {
      const fb::PackageSignature& s = *root.signatures()->Get(i);
      const std::string field = "signatures[" + std::to_string(i) + "]";
      Signature sig;
      if (s.public_key() == nullptr || s.public_key()->size() != sig.key.bytes.size())
        fail(field + ".public_key", "must be 32 bytes (an ed25519 public key)");
      if (s.signature() == nullptr || s.signature()->size() != sig.bytes.size())
        fail(field + ".signature", "must be 64 bytes (an ed25519 signature)");
      std::memcpy(sig.key.bytes.data(), s.public_key()->data(), sig.key.bytes.size());
      std::memcpy(sig.bytes.data(), s.signature()->data(), sig.bytes.size());
      out.push_back(sig);
    }
    return out;
  }

  // Plugins size their buffers from the values' shapes, so the shapes a package states must be
  // the ones its nodes compute: infer them again from the inputs and constants and compare.
  void check_shapes(const Graph& g) const {
    // Values that no node produces are read by none either (decode checked that), so only the
    // produced ones are inferred again.
    std::vector<char> produced(g.values.size(), 0);
    for (const Node& n : g.nodes) {
      for (ValueId v : n.outputs) {
        if (v != kNoValue) produced[static_cast<size_t>(v)] = 1;
      }
    }
    Graph inferred = g;
    for (size_t i = 0; i < inferred.values.size(); ++i) {
      if (!produced[i]) continue;
      inferred.values[i].shape.clear();
      inferred.values[i].shape_known = false;
    }
    try {
      infer_shapes(inferred);
    } catch (const Error& e) {
      fail("graph", std::string("shape inference failed: ") + e.what());
    }
    for (size_t i = 0; i < g.values.size(); ++i) {
      if (!produced[i]) continue;
      const Value& stated = g.values[i];
      const Value& computed = inferred.values[i];
      if (stated.dtype != computed.dtype || stated.shape_known != computed.shape_known ||
          (stated.shape_known && stated.shape != computed.shape)) {
        fail("graph.values[" + std::to_string(i) + "] ('" + stated.name + "')",
             std::string("states ") + dtype_name(stated.dtype) + " " + shape_str(stated.shape) +
                 " but its producer computes " + dtype_name(computed.dtype) + " " +
                 (computed.shape_known ? shape_str(computed.shape) : std::string("(unknown)")));
      }
    }
  }

  std::shared_ptr<std::byte[]> bytes_;
  size_t size_ = 0;
  std::string file_;
  ContentHashCheck hash_check_ = ContentHashCheck::kCheck;
  size_t weights_start_ = 0;
  uint64_t weights_size_ = 0;
};

// Packages larger than this are refused before mapping (a weight area of 64 GiB is no phone's).
constexpr int64_t kMaxPackageBytes = int64_t{64} << 30;

}  // namespace

bool is_package_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  uint8_t head[12] = {};
  const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::read(fd, head, 12) == 12;
  ::close(fd);
  return ok && flatbuffers::BufferHasIdentifier(head, fb::PackageIdentifier(), true);
}

Package parse_package(const uint8_t* data, size_t size, const std::string& file,
                      ContentHashCheck hash_check) {
  std::shared_ptr<std::byte[]> copy(new std::byte[size == 0 ? 1 : size]);
  if (size != 0) std::memcpy(copy.get(), data, size);
  return Decoder(std::move(copy), size, file, hash_check).decode();
}

Package read_package(const std::string& path) {
  // A regular file within the limit, opened without blocking on a FIFO, and mapped through the
  // same descriptor: the file checked is the file mapped.
  const InputFile file(path, "package", kMaxPackageBytes);
  const size_t size = static_cast<size_t>(file.size());
  if (size == 0) throw Error(path + ": file: 0 bytes is too short for a package");
  // Private and writable: a plugin that (wrongly) wrote into a weight would change its own copy
  // of the page, never the file.
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd(), 0);
  if (base == MAP_FAILED) throw Error(path + ": cannot map package: " + std::strerror(errno));
  std::shared_ptr<std::byte[]> mapping(static_cast<std::byte*>(base),
                                       [size](std::byte* p) { ::munmap(p, size); });
  return Decoder(std::move(mapping), size, path, ContentHashCheck::kCheck).decode();
}

}  // namespace tessera
