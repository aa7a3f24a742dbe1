// `tessera pack inspect|validate|merge|build|seal`: look at, check, combine and hash tuned packs
// (schedules/<plugin>/<device-or-family>.yaml), or build one from tuner logs. The format is in
// schedules/README.md.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/pack.hpp"
#include "tessera/tuner.hpp"

namespace tessera::cli {

int cmd_pack(int argc, char** argv);

namespace {

void print_pack_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tessera pack inspect FILE...\n"
               "       tessera pack validate FILE...\n"
               "       tessera pack merge -o OUT [--force] FILE...\n"
               "       tessera pack build -o OUT.yaml [--force] LOG.jsonl...\n"
               "       tessera pack seal FILE...\n\n"
               "  inspect   print each pack's header and its entries\n"
               "  validate  check each pack; exit 1 if any is malformed or of another schema\n"
               "  merge     combine packs for the same plugin and device into OUT, keeping the\n"
               "            faster entry per workload; OUT is written atomically and an existing\n"
               "            OUT is only replaced with --force\n"
               "  build     build a pack from `tessera tune --log` logs of one plugin and device:\n"
               "            the fastest ok record per workload; written like merge\n"
               "  seal      write each pack's sha256 (the hash of its content, checked when it\n"
               "            loads) into it, every other line kept as it is; for a pack written\n"
               "            or edited by hand. Signatures that no longer match are dropped\n");
}

std::string match_text(const Pack& p) {
  std::string out;
  auto add = [&](const char* what, const std::string& value) {
    if (!value.empty()) out += std::string(out.empty() ? "" : ", ") + what + " '" + value + "'";
  };
  add("device", p.match.device);
  if (!p.match.driver.is_any()) add("driver", p.match.driver.text());
  add("family", p.match.family);
  add("vendor", p.match.vendor);
  return out;
}

// "sha256 matches, valid signature by ed25519:..." or why the pack's content is not checked.
std::string integrity_text(const Pack& p) {
  if (p.sha256.empty()) return "no sha256: its content is not checked (tessera pack seal adds it)";
  std::string out = "sha256 matches";
  for (const Signature& s : p.signatures) {
    const char* state = !signatures_supported() ? "unchecked (no libsodium)"
                        : verify_signature(s, kPackSignatureDomain, pack_content_digest(p))
                            ? "valid"
                            : "INVALID (content changed after signing)";
    out += std::string(", ") + state + " signature by " + s.key.text();
  }
  return out;
}

int run_validate(const std::vector<std::string>& files) {
  int failed = 0;
  for (const std::string& f : files) {
    try {
      const Pack p = load_pack(f);
      if (p.schema_version != kPackSchemaVersion) {
        std::printf("FAIL %s: schema_version %d, this engine reads %d\n", f.c_str(),
                    p.schema_version, kPackSchemaVersion);
        ++failed;
        continue;
      }
      std::printf("ok   %s: plugin '%s', %s, engine %s, %zu entries; %s\n", f.c_str(),
                  p.plugin.c_str(), match_text(p).c_str(), p.engine_version.text().c_str(),
                  p.entries.size(), integrity_text(p).c_str());
    } catch (const Error& e) {
      std::printf("FAIL %s\n", e.what());
      ++failed;
    }
  }
  if (failed) std::printf("%d of %zu pack(s) failed\n", failed, files.size());
  return failed ? 1 : 0;
}

int run_inspect(const std::vector<std::string>& files) {
  for (const std::string& f : files) {
    const Pack p = load_pack(f);
    std::printf("%s\n  plugin:         %s\n  schema_version: %d\n", f.c_str(), p.plugin.c_str(),
                p.schema_version);
    if (p.schema_version != kPackSchemaVersion) {
      std::printf("  (entries not shown: this engine reads schema_version %d)\n\n",
                  kPackSchemaVersion);
      continue;
    }
    std::printf("  match:          %s\n  engine_version: %s\n", match_text(p).c_str(),
                p.engine_version.text().c_str());
    std::printf("  measured:       %s, with tessera %s: %s\n", p.measured.when.c_str(),
                p.measured.tool_version.c_str(), p.measured.how.c_str());
    std::printf("  integrity:      %s\n", integrity_text(p).c_str());
    std::printf("  entries:        %zu\n", p.entries.size());
    double total = 0;
    for (const PackEntry& e : p.entries) {
      std::string knobs;
      for (const Knob& k : e.knobs) {
        knobs += (knobs.empty() ? "" : " ") + k.name + "=" + std::to_string(k.value);
      }
      std::printf("  %12.2f us  %-28s %-30s %s\n", e.time_us, e.schedule.c_str(), knobs.c_str(),
                  e.workload.c_str());
      total += e.time_us;
    }
    if (!p.entries.empty()) std::printf("  %12.2f us  total of one run of each entry\n", total);
    std::printf("\n");
  }
  return 0;
}

// Reads `-o OUT`, `--force` and the positional files of merge / build.
void parse_output_args(const std::string& action, const std::vector<std::string>& args,
                       std::string* output, bool* force, std::vector<std::string>* files) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--force") {
      *force = true;
    } else if (a == "-o" || a == "--output") {
      if (i + 1 >= args.size()) throw Error("pack " + action + ": " + a + " needs a file name");
      *output = args[++i];
    } else if (a.rfind("--output=", 0) == 0) {
      *output = a.substr(9);
    } else if (!a.empty() && a[0] == '-') {
      throw Error("pack " + action + ": unknown option '" + a + "' (known: -o/--output, --force)");
    } else {
      files->push_back(a);
    }
  }
  if (output->empty()) throw Error("pack " + action + ": give the output file with -o OUT");
}

int run_build(const std::vector<std::string>& args) {
  std::string output;
  bool force = false;
  std::vector<std::string> logs;
  parse_output_args("build", args, &output, &force, &logs);
  if (logs.empty()) throw Error("pack build: give at least one tuner log (LOG.jsonl)");
  const Pack pack = tune::pack_from_logs(logs);
  write_file_atomic(output, serialize_validated_pack(pack, output), force);
  std::printf("wrote %s: plugin '%s', %s, %zu entries from %zu log(s)\n", output.c_str(),
              pack.plugin.c_str(), match_text(pack).c_str(), pack.entries.size(), logs.size());
  return 0;
}

int run_merge(const std::vector<std::string>& args) {
  std::string output;
  bool force = false;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--force") {
      force = true;
    } else if (a == "-o" || a == "--output") {
      if (i + 1 >= args.size()) throw Error("pack merge: " + a + " needs a file name");
      output = args[++i];
    } else if (a.rfind("--output=", 0) == 0) {
      output = a.substr(9);
    } else if (!a.empty() && a[0] == '-') {
      throw Error("pack merge: unknown option '" + a + "' (known: -o/--output, --force)");
    } else {
      files.push_back(a);
    }
  }
  if (output.empty()) throw Error("pack merge: give the output file with -o OUT");
  if (files.empty()) throw Error("pack merge: give at least one pack to merge");
  std::vector<Pack> packs;
  for (const std::string& f : files) packs.push_back(load_pack(f));
  std::vector<std::string> notes;
  const Pack merged = merge_packs(packs, &notes);
  write_file_atomic(output, serialize_validated_pack(merged, output), force);
  for (const std::string& n : notes) std::printf("  %s\n", n.c_str());
  std::printf("wrote %s: %zu entries from %zu pack(s)\n", output.c_str(), merged.entries.size(),
              files.size());
  return 0;
}

// Records the hash of each pack's current content. Signatures are kept while they still sign
// that content and dropped (with a line saying so) when the content changed under them.
int run_seal(const std::vector<std::string>& files) {
  if (files.empty()) throw Error("pack seal: give at least one pack file");
  for (const std::string& f : files) {
    if (!f.empty() && f[0] == '-') throw Error("pack seal: unknown option '" + f + "'");
  }
  for (const std::string& f : files) {
    const std::string text = read_file(f, "pack", kMaxYamlFileBytes);
    const Sha256Digest digest = pack_content_digest(parse_pack(seal_pack_text(text, f, {}), f));
    // The signatures the file has, when its sha256 still matches its content (otherwise they
    // signed other content); kept while they verify.
    std::vector<Signature> old;
    try {
      old = parse_pack(text, f).signatures;
    } catch (const Error&) {
      std::printf(
          "  %s: its content changed since its sha256 was written; a signature it had "
          "is dropped\n",
          f.c_str());
    }
    std::vector<Signature> kept;
    for (const Signature& s : old) {
      if (!signatures_supported() || verify_signature(s, kPackSignatureDomain, digest)) {
        kept.push_back(s);
      } else {
        std::printf("  %s: signature by %s dropped: it does not sign this content\n", f.c_str(),
                    s.key.text().c_str());
      }
    }
    const std::string sealed = seal_pack_text(text, f, kept);
    if (sealed == text) {
      std::printf("ok   %s: sha256:%s already recorded\n", f.c_str(), to_hex(digest).c_str());
      continue;
    }
    write_file_atomic(f, sealed, /*overwrite=*/true);
    std::printf("sealed %s: sha256:%s\n", f.c_str(), to_hex(digest).c_str());
  }
  return 0;
}

}  // namespace

int cmd_pack(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    print_pack_usage(args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string action = args[0];
  args.erase(args.begin());
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      print_pack_usage(stdout);
      return 0;
    }
  }
  if (action == "merge") return run_merge(args);
  if (action == "build") return run_build(args);
  if (action == "seal") return run_seal(args);
  if (action != "inspect" && action != "validate") {
    std::fprintf(stderr, "tessera pack: unknown action '%s'\n\n", action.c_str());
    print_pack_usage(stderr);
    return 2;
  }
  if (args.empty()) throw Error("pack " + action + ": give at least one pack file");
  for (const std::string& a : args) {
    if (!a.empty() && a[0] == '-') throw Error("pack " + action + ": unknown option '" + a + "'");
  }
  return action == "inspect" ? run_inspect(args) : run_validate(args);
}

}  // namespace tessera::cli
