// Integrity of packages (.tsp) and packs (YAML): SHA-256 content hashes, checked whenever one is
// read, and optional ed25519 signatures checked against a deployment's trusted keys.
//
// The hash answers "is this the file its writer wrote?" (a bad copy, a hand edit, a swapped op);
// anyone can recompute it, so it is no protection against someone who means harm. A signature
// answers "did someone holding this key approve exactly this content?": with trusted keys given
// (a deployment's `trusted_keys:`, SessionOptions::trusted_keys), a package or pack that carries
// no valid signature by one of them is refused with the reason.
//
// SHA-256 is written here (FIPS 180-4), so the runtime hashes on every target, the aarch64 device
// build included, with no library. Signatures use libsodium (crypto_sign_*, ed25519); a runtime
// built without it says so and refuses anything that must be signature-checked.
//
// Text forms: a public key is "ed25519:<64 hex digits>", a secret key file holds
// "ed25519-secret:<128 hex digits>" (libsodium's seed and public key), a signature is 128 hex
// digits. What is signed is a domain text ("tessera-package-v1", "tessera-pack-v1"), a NUL, then
// the 32 bytes of the content hash: a signature over a pack cannot be replayed on a package.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256. Uses the CPU's SHA instructions where it has them (x86 SHA-NI: several
// times faster, which matters for the weights of a package); `use_cpu_extensions` false keeps to
// the portable code (tests compare the two).
class Sha256 {
 public:
  explicit Sha256(bool use_cpu_extensions = true);
  void update(const void* data, size_t size);
  void update(const std::string& s) { update(s.data(), s.size()); }
  Sha256Digest finish();  // the object is spent afterwards

 private:
  void blocks(const uint8_t* p, size_t count);
  bool extensions_ = true;
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

Sha256Digest sha256(const void* data, size_t size);
inline Sha256Digest sha256(const std::string& s) {
  return sha256(s.data(), s.size());
}

// Lower-case hex of `size` bytes, and back (nullopt unless exactly 2*N hex digits).
std::string to_hex(const uint8_t* data, size_t size);
inline std::string to_hex(const Sha256Digest& d) {
  return to_hex(d.data(), d.size());
}
std::optional<std::vector<uint8_t>> from_hex(const std::string& text);

struct PublicKey {
  std::array<uint8_t, 32> bytes{};
  std::string text() const;  // "ed25519:<hex>"
  bool operator==(const PublicKey& o) const { return bytes == o.bytes; }
};

struct SecretKey {
  std::array<uint8_t, 64> bytes{};  // libsodium's secret key: seed, then the public key
  SecretKey() = default;
  SecretKey(const SecretKey&) = default;
  SecretKey& operator=(const SecretKey&) = default;
  ~SecretKey();  // overwrites the bytes, so a freed key leaves no copy in memory
  PublicKey public_key() const;
  std::string text() const;  // "ed25519-secret:<hex>"
};

struct Signature {
  PublicKey key;
  std::array<uint8_t, 64> bytes{};
};

// Throws tessera::Error "<where>: ..." saying what is wrong with the text.
PublicKey parse_public_key(const std::string& text, const std::string& where);
SecretKey parse_secret_key(const std::string& text, const std::string& where);
// A trusted-key entry: the key text itself, or the path of a file holding it (a `.pub` written
// by `tessera keygen`). Throws naming `where` and the entry.
PublicKey read_trusted_key(const std::string& entry, const std::string& where);

// True when this build links libsodium (signing and checking signatures work).
bool signatures_supported();
// Throws tessera::Error when signatures are not supported.
SecretKey generate_secret_key();
Signature sign_digest(const SecretKey& key, const char* domain, const Sha256Digest& digest);
bool verify_signature(const Signature& signature, const char* domain, const Sha256Digest& digest);

inline constexpr const char* kPackageSignatureDomain = "tessera-package-v1";
inline constexpr const char* kPackSignatureDomain = "tessera-pack-v1";

// Why content with `digest` and `signatures` is not trusted under `trusted_keys` (entries as
// read_trusted_key takes them), or nullopt when it is: no keys = no requirement; otherwise one
// signature by a trusted key must verify. The reason names the signers found and the keys asked
// for, so the fix (sign with the right key, or trust the signer) is clear.
std::optional<std::string> trust_problem(const std::vector<Signature>& signatures,
                                         const char* domain, const Sha256Digest& digest,
                                         const std::vector<std::string>& trusted_keys);

}  // namespace tessera
