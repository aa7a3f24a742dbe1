// A package's content hash: one SHA-256 per member, computed from the decoded package (not from
// the FlatBuffer's bytes, whose layout is the builder's choice), so the writer and the reader
// hash the same canonical encoding and a reader names the member that differs.
//
// Members, in this order: "manifest" (format and engine version, ABI, source model, created_by,
// precision), "targets[i]", "graph" (opset, inputs, outputs, how many values and nodes),
// "graph.nodes[i] ('name')" (op type, edges, attributes, target, precision, config), and
// "graph.values[i] ('name')" (with a constant's dtype, shape and bytes: the weights). The weights
// come last, so a reader that stops at the first member that differs reads them only when the
// rest matched.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/integrity.hpp"
#include "tessera/package.hpp"

namespace tessera::package_detail {

struct MemberDigest {
  std::string member;
  Sha256Digest digest;
};

size_t member_count(const Package& package);
// Hashes the members in order, calling `visit` with each; stops when it returns false.
void visit_members(
    const Package& package,
    const std::function<bool(const std::string& member, const Sha256Digest&)>& visit);
std::vector<MemberDigest> member_digests(const Package& package);

// The package's content hash: over the member count and every member digest (`count` digests
// of 32 bytes at `digests`), in order. This is what a signature signs.
Sha256Digest root_digest(const uint8_t* digests, size_t count);
Sha256Digest root_digest(const std::vector<MemberDigest>& members);

}  // namespace tessera::package_detail
