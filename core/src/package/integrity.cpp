// SHA-256 (FIPS 180-4; with x86 SHA-NI where present) and ed25519 signatures through libsodium,
// for package and pack integrity.
#include "tessera/integrity.hpp"

#include <algorithm>
#include <cstring>

#include "tessera/error.hpp"
#include "tessera/file_util.hpp"

#ifdef TESSERA_HAVE_SODIUM
#include <sodium.h>
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace tessera {

namespace {

constexpr std::array<uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

// One 64-byte block into `state`, in plain C++.
void block_portable(uint32_t* state, const uint8_t* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = uint32_t{p[4 * i]} << 24 | uint32_t{p[4 * i + 1]} << 16 | uint32_t{p[4 * i + 2]} << 8 |
           uint32_t{p[4 * i + 3]};
  }
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t t1 =
        h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

#if defined(__x86_64__)
// CPUID: SHA (leaf 7, EBX bit 29), SSSE3 and SSE4.1 (leaf 1, ECX bits 9 and 19).
bool cpu_has_sha_ni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool sse = (c & (1u << 9)) != 0 && (c & (1u << 19)) != 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return sse && (b & (1u << 29)) != 0;
}

// `count` blocks with the SHA-NI instructions. The state lives as ABEF and CDGH (the order
// sha256rnds2 takes); each step does four rounds, two per sha256rnds2, with the message schedule
// from sha256msg1/msg2 (sigma0 terms + W[i-16], then + W[i-7], then the sigma1 terms).
__attribute__((target("sha,sse4.1,ssse3"))) void blocks_sha_ni(uint32_t* state, const uint8_t* p,
                                                               size_t count) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0xB1);
  __m128i cdgh =
      _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4)), 0x1B);
  __m128i abef = _mm_alignr_epi8(tmp, cdgh, 8);
  cdgh = _mm_blend_epi16(cdgh, tmp, 0xF0);
  for (size_t b = 0; b < count; ++b, p += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[16];
    for (int i = 0; i < 16; ++i) {
      if (i < 4) {
        w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)),
                                byte_swap);
      } else {
        w[i] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w[i - 4], w[i - 3]),
                                                  _mm_alignr_epi8(w[i - 1], w[i - 2], 4)),
                                    w[i - 1]);
      }
      __m128i wk = _mm_add_epi32(
          w[i], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound.data() + 4 * i)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  tmp = _mm_shuffle_epi32(abef, 0x1B);
  cdgh = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(tmp, cdgh, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(cdgh, tmp, 8));
}
#endif

constexpr const char* kPublicPrefix = "ed25519:";
constexpr const char* kSecretPrefix = "ed25519-secret:";

std::string trimmed(const std::string& text) {
  const size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = text.find_last_not_of(" \t\r\n");
  return text.substr(b, e - b + 1);
}

// The bytes after `prefix` in `text`, which must be `n` bytes in hex.
std::vector<uint8_t> key_bytes(const std::string& text, const std::string& prefix, size_t n,
                               const std::string& where) {
  const std::string t = trimmed(text);
  if (t.compare(0, prefix.size(), prefix) != 0) {
    throw Error(where + ": '" + escaped(t.substr(0, 40)) + "' is not a key of the form " + prefix +
                "<" + std::to_string(2 * n) + " hex digits> (tessera keygen writes them)");
  }
  auto bytes = from_hex(t.substr(prefix.size()));
  if (!bytes || bytes->size() != n) {
    throw Error(where + ": the key after '" + prefix + "' must be " + std::to_string(2 * n) +
                " hex digits");
  }
  return *bytes;
}

#ifndef TESSERA_HAVE_SODIUM
[[noreturn]] void no_sodium() {
  throw Error(
      "this build of Tessera has no libsodium, so it cannot make or check ed25519 "
      "signatures (build with libsodium-dev installed)");
}
#endif

#ifdef TESSERA_HAVE_SODIUM
void init_sodium() {
  if (sodium_init() < 0) throw Error("libsodium failed to initialise");
}

std::vector<uint8_t> signed_message(const char* domain, const Sha256Digest& digest) {
  std::vector<uint8_t> m(domain, domain + std::strlen(domain) + 1);  // with its NUL
  m.insert(m.end(), digest.begin(), digest.end());
  return m;
}
#endif

}  // namespace

Sha256::Sha256(bool use_cpu_extensions)
    : extensions_(use_cpu_extensions), state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                              0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::blocks(const uint8_t* p, size_t count) {
  if (count == 0) return;
#if defined(__x86_64__)
  static const bool has_sha_ni = cpu_has_sha_ni();
  if (extensions_ && has_sha_ni) {
    blocks_sha_ni(state_.data(), p, count);
    return;
  }
#endif
  for (size_t b = 0; b < count; ++b) block_portable(state_.data(), p + 64 * b);
}

void Sha256::update(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  total_ += size;
  if (buffered_ != 0) {
    const size_t take = std::min(size, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take;
    p += take;
    size -= take;
    if (buffered_ < buffer_.size()) return;
    blocks(buffer_.data(), 1);
    buffered_ = 0;
  }
  const size_t whole = size / 64;
  blocks(p, whole);
  p += 64 * whole;
  size -= 64 * whole;
  if (size != 0) std::memcpy(buffer_.data(), p, size);
  buffered_ = size;
}

Sha256Digest Sha256::finish() {
  const uint64_t bits = total_ * 8;
  const uint8_t one = 0x80;
  update(&one, 1);
  const uint8_t zero = 0;
  while (buffered_ != 56) update(&zero, 1);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  update(length, 8);
  Sha256Digest out;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
  }
  return out;
}

Sha256Digest sha256(const void* data, size_t size) {
  Sha256 h;
  h.update(data, size);
  return h.finish();
}

std::string to_hex(const uint8_t* data, size_t size) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 15];
  }
  return out;
}

std::optional<std::vector<uint8_t>> from_hex(const std::string& text) {
  if (text.size() % 2 != 0) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = digit(text[i]), lo = digit(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<uint8_t>(hi << 4 | lo));
  }
  return out;
}

std::string PublicKey::text() const {
  return kPublicPrefix + to_hex(bytes.data(), bytes.size());
}

SecretKey::~SecretKey() {
  volatile uint8_t* p = bytes.data();
  for (size_t i = 0; i < bytes.size(); ++i) p[i] = 0;
}

PublicKey SecretKey::public_key() const {
  PublicKey k;
  std::memcpy(k.bytes.data(), bytes.data() + 32, 32);
  return k;
}

std::string SecretKey::text() const {
  return kSecretPrefix + to_hex(bytes.data(), bytes.size());
}

PublicKey parse_public_key(const std::string& text, const std::string& where) {
  const std::vector<uint8_t> b = key_bytes(text, kPublicPrefix, 32, where);
  PublicKey k;
  std::memcpy(k.bytes.data(), b.data(), 32);
  return k;
}

SecretKey parse_secret_key(const std::string& text, const std::string& where) {
  const std::vector<uint8_t> b = key_bytes(text, kSecretPrefix, 64, where);
  SecretKey k;
  std::memcpy(k.bytes.data(), b.data(), 64);
#ifdef TESSERA_HAVE_SODIUM
  // The public half must be the one the seed gives, or every signature made with it fails.
  init_sodium();
  uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(pk, sk, k.bytes.data());
  const bool consistent = std::memcmp(pk, k.bytes.data() + 32, 32) == 0;
  sodium_memzero(sk, sizeof sk);
  if (!consistent) throw Error(where + ": the secret key's public half does not match its seed");
#endif
  return k;
}

PublicKey read_trusted_key(const std::string& entry, const std::string& where) {
  if (entry.rfind(kPublicPrefix, 0) == 0) return parse_public_key(entry, where);
  if (entry.empty() || entry[0] != '/') {
    throw Error(where + ": '" + escaped(entry) +
                "' is neither a key (ed25519:<hex>) nor an absolute path of a .pub file");
  }
  return parse_public_key(read_file(entry, "public key", 4096), entry);
}

bool signatures_supported() {
#ifdef TESSERA_HAVE_SODIUM
  return true;
#else
  return false;
#endif
}

SecretKey generate_secret_key() {
#ifdef TESSERA_HAVE_SODIUM
  init_sodium();
  SecretKey k;
  uint8_t pk[crypto_sign_PUBLICKEYBYTES];
  crypto_sign_keypair(pk, k.bytes.data());
  return k;
#else
  no_sodium();
#endif
}

Signature sign_digest(const SecretKey& key, const char* domain, const Sha256Digest& digest) {
#ifdef TESSERA_HAVE_SODIUM
  init_sodium();
  Signature s;
  s.key = key.public_key();
  const std::vector<uint8_t> m = signed_message(domain, digest);
  crypto_sign_detached(s.bytes.data(), nullptr, m.data(), m.size(), key.bytes.data());
  return s;
#else
  (void)key, (void)domain, (void)digest;
  no_sodium();
#endif
}

bool verify_signature(const Signature& signature, const char* domain, const Sha256Digest& digest) {
#ifdef TESSERA_HAVE_SODIUM
  init_sodium();
  const std::vector<uint8_t> m = signed_message(domain, digest);
  return crypto_sign_verify_detached(signature.bytes.data(), m.data(), m.size(),
                                     signature.key.bytes.data()) == 0;
#else
  (void)signature, (void)domain, (void)digest;
  no_sodium();
#endif
}

std::optional<std::string> trust_problem(const std::vector<Signature>& signatures,
                                         const char* domain, const Sha256Digest& digest,
                                         const std::vector<std::string>& trusted_keys) {
  if (trusted_keys.empty()) return std::nullopt;
  if (!signatures_supported()) {
    return std::string(
        "trusted keys are given but this build of Tessera has no libsodium to check "
        "signatures with");
  }
  std::vector<PublicKey> trusted;
  for (const std::string& entry : trusted_keys)
    trusted.push_back(read_trusted_key(entry, "trusted_keys"));
  if (signatures.empty()) {
    return std::string("it is not signed, and trusted keys are given (sign it with tessera sign)");
  }
  std::string signers;
  for (const Signature& s : signatures) {
    const bool is_trusted = std::find(trusted.begin(), trusted.end(), s.key) != trusted.end();
    if (!is_trusted) {
      signers += (signers.empty() ? "" : ", ") + s.key.text() + " (not a trusted key)";
      continue;
    }
    if (verify_signature(s, domain, digest)) return std::nullopt;
    signers += (signers.empty() ? "" : ", ") + s.key.text() +
               " (its signature does not match the content: changed after signing)";
  }
  return "no signature by a trusted key verifies; signed by " + signers;
}

}  // namespace tessera
