// Whole-file reads and atomic (temp + fsync + rename) writes.
#include "tessera/file_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

std::string parent_dir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Removes the temporary file unless released; keeps every early exit clean.
class TempFileGuard {
 public:
  explicit TempFileGuard(std::string path) : path_(std::move(path)) {}
  ~TempFileGuard() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  void set_fd(int fd) { fd_ = fd; }
  int fd() const { return fd_; }
  void close_fd() {
    if (fd_ >= 0 && ::close(fd_) != 0) {
      fd_ = -1;
      throw Error("cannot close '" + path_ + "': " + errno_text());
    }
    fd_ = -1;
  }
  void release() { path_.clear(); }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path + "' for reading: " + errno_text());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error("cannot read '" + path + "'");
  return buffer.str();
}

void write_file_atomic(const std::string& path, const std::string& bytes, bool overwrite) {
  if (path.empty()) throw Error("write_file_atomic: empty output path");
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) {
    if (S_ISDIR(existing.st_mode)) throw Error("output path '" + path + "' is a directory");
    if (!overwrite) {
      throw Error("output file '" + path +
                  "' already exists; pass --force to replace it (nothing was written)");
    }
  }
  // mkstemp needs a writable template ending in XXXXXX; same directory keeps rename atomic.
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(&tmpl[0]);
  if (fd < 0) throw Error("cannot create a temporary file beside '" + path + "': " + errno_text());
  TempFileGuard guard(tmpl);
  guard.set_fd(fd);
  ::fchmod(fd, 0644);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot write '" + tmpl + "' (for '" + path + "'): " + errno_text());
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) throw Error("cannot fsync '" + tmpl + "': " + errno_text());
  guard.close_fd();
  if (!overwrite) {
    // link() fails if `path` appeared meanwhile, so a concurrent writer's file is never replaced.
    if (::link(tmpl.c_str(), path.c_str()) != 0) {
      if (errno == EEXIST) {
        throw Error("output file '" + path +
                    "' already exists; pass --force to replace it (nothing was written)");
      }
      // File systems without hard links: fall back to rename.
      if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        throw Error("cannot rename '" + tmpl + "' to '" + path + "': " + errno_text());
      }
      guard.release();
    }
  } else if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    throw Error("cannot rename '" + tmpl + "' to '" + path + "': " + errno_text());
  } else {
    guard.release();  // renamed away: nothing left to remove
  }
  // After link() the temp name still exists as a second link; the guard unlinks it.
  const int dir_fd = ::open(parent_dir(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace tessera
