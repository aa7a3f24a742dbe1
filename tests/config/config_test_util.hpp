// Helpers for the config tests: a scratch directory per test and "expect this to throw" capture.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "tessera/error.hpp"

namespace tessera::testing {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-config-XXXXXX").string();
    if (::mkdtemp(&tmpl[0]) == nullptr) throw Error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` to `name` (creating parent folders) and returns the full path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

// Runs `f`, which must throw tessera::Error, and returns the message ("" and a test failure if
// not).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-tessera exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a tessera::Error, nothing was thrown";
  return "";
}

inline std::string source_path(const std::string& rel) {
  return std::string(TESSERA_SOURCE_DIR) + "/" + rel;
}

}  // namespace tessera::testing
