// The regression suite's driver: runs committed inputs through the same harness functions the
// fuzzers run, in an ordinary build (Release, and the ASan/UBSan build of tools/run-tests.sh).
//
//   tessera_fuzz_tests TARGET [--expect] FILE|DIR...
//
// Each input must end as fuzz_target.hpp allows (accepted or a tessera::Error; anything else
// crashes or aborts the process, failing the test). With --expect every input FILE needs a
// FILE.expected beside it: its first line is `accepted`, or text the error message must contain
// (the clear error the fix gives: it names the key, node or value). Exit status 1 names each
// input that broke its expectation.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_target.hpp"

namespace fs = std::filesystem;

namespace {

struct Target {
  const char* name;
  int (*run)(const uint8_t*, size_t);
};
constexpr Target kTargets[] = {
    {"onnx", tessera_fuzz_onnx},
    {"npy", tessera_fuzz_npy},
    {"config", tessera_fuzz_config},
    {"pack", tessera_fuzz_pack},
    {"package", tessera_fuzz_package},
};

bool read_bytes(const fs::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

// Input files named on the command line, directories expanded (sorted; *.expected and dot files
// are not inputs).
std::vector<fs::path> inputs_of(const std::vector<std::string>& args) {
  std::vector<fs::path> files;
  for (const std::string& a : args) {
    if (!fs::is_directory(a)) {
      files.emplace_back(a);
      continue;
    }
    std::vector<fs::path> in_dir;
    for (const auto& e : fs::directory_iterator(a)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name[0] != '.' && e.path().extension() != ".expected")
        in_dir.push_back(e.path());
    }
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s onnx|npy|config|pack|package [--expect] FILE|DIR...\n",
                 argv[0]);
    return 2;
  }
  const Target* target = nullptr;
  for (const Target& t : kTargets) {
    if (std::strcmp(t.name, argv[1]) == 0) target = &t;
  }
  if (target == nullptr) {
    std::fprintf(stderr, "unknown fuzz target '%s' (onnx, npy, config, pack, package)\n", argv[1]);
    return 2;
  }
  bool expect = false;
  std::vector<std::string> args;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect") == 0) {
      expect = true;
    } else {
      args.emplace_back(argv[i]);
    }
  }
  int failed = 0;
  const std::vector<fs::path> files = inputs_of(args);
  for (const fs::path& file : files) {
    std::string bytes;
    if (!read_bytes(file, bytes)) {
      std::printf("FAIL %s: cannot read the input\n", file.c_str());
      ++failed;
      continue;
    }
    std::printf("run  %s (%zu bytes)\n", file.c_str(), bytes.size());
    std::fflush(stdout);  // the name is on record if the input crashes the process
    target->run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    const tessera::fuzz::Outcome& out = tessera::fuzz::last_outcome();
    const std::string got = out.accepted ? "accepted" : "error: " + out.message;
    if (!expect) {
      std::printf("ok   %s\n", got.c_str());
      continue;
    }
    std::string wanted;
    std::ifstream ex(file.string() + ".expected");
    if (!ex || !std::getline(ex, wanted) || wanted.empty()) {
      std::printf("FAIL %s: needs %s.expected (`accepted` or text of the expected error)\n",
                  file.c_str(), file.c_str());
      ++failed;
      continue;
    }
    const bool ok = wanted == "accepted" ? out.accepted
                                         : !out.accepted && out.message.find(wanted) !=
                                                                std::string::npos;
    std::printf("%s %s\n     expected: %s\n     got:      %s\n", ok ? "ok  " : "FAIL",
                file.c_str(), wanted.c_str(), got.c_str());
    if (!ok) ++failed;
  }
  if (files.empty()) {
    std::printf("FAIL no input files in the arguments\n");
    return 1;
  }
  std::printf("%zu input(s), %d failed\n", files.size(), failed);
  return failed ? 1 : 0;
}
