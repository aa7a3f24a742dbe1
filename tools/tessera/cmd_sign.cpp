// `tessera keygen`, `tessera sign` and `tessera verify`: ed25519 keys, signatures on packages
// (.tsp) and packs (YAML), and checking a file's content hash and signatures as a session would.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"
#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/integrity.hpp"
#include "tessera/pack.hpp"
#include "tessera/package.hpp"

namespace tessera::cli {

namespace {

// Creates `path` with `mode` (O_EXCL unless `force`, then replaced) holding `text`.
void write_new_file(const std::string& path, const std::string& text, mode_t mode, bool force) {
  if (force) ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    throw Error(path + ": " + std::strerror(errno) +
                (errno == EEXIST ? " (give --force to replace it)" : ""));
  }
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw Error(path + ": cannot write: " + std::strerror(errno));
}

// A package starts with its FlatBuffer identifier; anything else is read as a pack (whose
// loader then names what is wrong with it).
bool is_pack_path(const std::string& path) {
  return !is_package_file(path);
}

// `signatures` with the one by `s.key` replaced, or `s` appended.
std::vector<Signature> with_signature(std::vector<Signature> signatures, const Signature& s) {
  for (Signature& old : signatures) {
    if (old.key == s.key) {
      old = s;
      return signatures;
    }
  }
  signatures.push_back(s);
  return signatures;
}

void sign_pack_file(const std::string& path, const SecretKey& key) {
  const std::string text = read_file(path, "pack", kMaxYamlFileBytes);
  // Loading checks the sha256 it has: a pack changed after it was sealed is not signed as is.
  const Pack pack = parse_pack(text, path);
  if (pack.sha256.empty()) {
    throw Error(path + ": has no sha256; `tessera pack seal " + path +
                "` adds it (check the pack first: signing says its content is approved)");
  }
  const Signature s = sign_digest(key, kPackSignatureDomain, pack_content_digest(pack));
  write_file_atomic(path, seal_pack_text(text, path, with_signature(pack.signatures, s)), true);
}

void sign_package_file(const std::string& path, const SecretKey& key) {
  Package package = read_package(path);  // checks every member's hash
  sign_package(package, key);
  write_package(package, path, /*overwrite=*/true);
}

}  // namespace

int cmd_keygen(int argc, char** argv) {
  Args args(argc, argv, {"output"}, {"force", "help"});
  if (args.flag("help") || !args.positionals().empty() || args.get("output").empty()) {
    return print_usage(
        "usage: tessera keygen -o|--output NAME [--force]\n"
        "Writes an ed25519 key pair: NAME.key (the secret key, readable by you only; keep it\n"
        "off the devices) and NAME.pub (the public key, for a deployment's trusted_keys: or\n"
        "the trusted-key option of run, bench and compile). Existing files are only\n"
        "replaced with --force.\n",
        args.flag("help"));
  }
  const std::string name = args.get("output");
  const SecretKey key = generate_secret_key();
  write_new_file(name + ".key", key.text() + "\n", 0600, args.flag("force"));
  write_new_file(name + ".pub", key.public_key().text() + "\n", 0644, args.flag("force"));
  std::printf("wrote %s.key (secret) and %s.pub: %s\n", name.c_str(), name.c_str(),
              key.public_key().text().c_str());
  return 0;
}

int cmd_sign(int argc, char** argv) {
  Args args(argc, argv, {"key"}, {"help"});
  if (args.flag("help") || args.positionals().empty() || args.get("key").empty()) {
    return print_usage(
        "usage: tessera sign --key NAME.key FILE...\n"
        "Adds an ed25519 signature over each file's content hash: a package (.tsp) or a pack\n"
        "(.yaml, which must carry its sha256: `tessera pack seal`). The file's content is\n"
        "checked first and kept; a signature by the same key is replaced.\n",
        args.flag("help"));
  }
  const std::string key_file = args.get("key");
  const SecretKey key = parse_secret_key(read_file(key_file, "secret key", 4096), key_file);
  for (const std::string& path : args.positionals()) {
    if (is_pack_path(path)) {
      sign_pack_file(path, key);
    } else {
      sign_package_file(path, key);
    }
    std::printf("signed %s with %s\n", path.c_str(), key.public_key().text().c_str());
  }
  return 0;
}

int cmd_verify(int argc, char** argv) {
  Args args(argc, argv, {"trusted-key"}, {"help"});
  if (args.flag("help") || args.positionals().empty()) {
    return print_usage(
        "usage: tessera verify [--trusted-key KEY]... FILE...\n"
        "Checks each package (.tsp) or pack (.yaml) as loading does: its content hash, and\n"
        "with --trusted-key (ed25519:<hex> or an absolute .pub file, repeatable) a signature\n"
        "by one of the keys. Prints the content hash and signers; exit 1 if any is refused.\n",
        args.flag("help"));
  }
  std::vector<std::string> keys;
  for (const std::string& k : args.get_all("trusted-key"))
    keys.push_back(read_trusted_key(k, "--trusted-key").text());
  int refused = 0;
  for (const std::string& path : args.positionals()) {
    try {
      std::optional<std::string> problem;
      std::string hash;
      std::vector<Signature> signatures;
      if (is_pack_path(path)) {
        const Pack pack = load_pack(path);
        if (pack.sha256.empty()) throw Error(path + ": has no sha256 (tessera pack seal)");
        hash = pack.sha256;
        signatures = pack.signatures;
        problem = pack_trust_problem(pack, keys);
      } else {
        const Package package = read_package(path);
        hash = to_hex(package.content_sha256);
        signatures = package.signatures;
        problem = package_trust_problem(package, keys);
      }
      std::string signers;
      for (const Signature& s : signatures) signers += " " + s.key.text();
      if (problem) throw Error(path + ": refused: " + *problem);
      std::printf("ok   %s: sha256:%s, signed by:%s\n", path.c_str(), hash.c_str(),
                  signers.empty() ? " nobody" : signers.c_str());
    } catch (const Error& e) {
      std::printf("FAIL %s\n", e.what());
      ++refused;
    }
  }
  return refused ? 1 : 0;
}

}  // namespace tessera::cli
