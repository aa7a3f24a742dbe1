// Checked reads of regular files and atomic (temp + fsync + rename) writes.
#include "tessera/file_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "tessera/checked_math.hpp"
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

static const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

InputFile::InputFile(const std::string& path, const char* what, int64_t max_bytes) : path_(path) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever. It has no effect on
  // reads of regular files, the only kind kept.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) {
    throw Error("cannot open '" + path + "' (" + what + "): " + errno_text());
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const std::string err = errno_text();
    ::close(fd_);
    throw Error("cannot stat " + std::string(what) + " '" + path + "': " + err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(std::string(what) + " '" + path + "' is " + file_kind(st.st_mode) +
                "; expected a regular file");
  }
  size_ = static_cast<int64_t>(st.st_size);
  if (size_ > max_bytes) {
    ::close(fd_);
    throw Error(std::string(what) + " '" + path + "' is " + bytes_str(size_) +
                ", more than the limit of " + bytes_str(max_bytes) + " for this kind of file");
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t InputFile::read_at(int64_t offset, void* dst, size_t n) const {
  size_t done = 0;
  auto* out = static_cast<char*>(dst);
  while (done < n) {
    int64_t at = 0;
    if (!try_add(offset, static_cast<int64_t>(done), at)) break;
    const size_t chunk = std::min<size_t>(n - done, size_t{1} << 30);
    const ssize_t got = ::pread(fd_, out + done, chunk, static_cast<off_t>(at));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot read '" + path_ + "': " + errno_text());
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

std::string InputFile::read_all() const {
  std::string bytes(static_cast<size_t>(size_), '\0');
  if (read_at(0, bytes.data(), bytes.size()) != bytes.size()) {
    throw Error("'" + path_ + "' shrank while it was read");
  }
  char extra = 0;
  if (read_at(size_, &extra, 1) != 0) throw Error("'" + path_ + "' grew while it was read");
  return bytes;
}

AppendFile::AppendFile(const std::string& path, const char* what, bool* repaired) : path_(path) {
  if (repaired != nullptr) *repaired = false;
  fd_ =
      ::open(path.c_str(),
             O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd_ < 0) {
    const std::string why = errno == ELOOP ? "it is a symbolic link" : errno_text();
    throw Error("cannot open '" + path + "' (" + what + ") for appending: " + why);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = S_ISREG(st.st_mode) ? errno_text() : file_kind(st.st_mode);
    ::close(fd_);
    fd_ = -1;
    throw Error(std::string(what) + " '" + path + "' is " + kind + "; expected a regular file");
  }
  if (st.st_size > 0) {
    // The log's fd is write-only; the last byte is read through a second, read-only one.
    const int rd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    char last = '\n';
    if (rd >= 0) {
      if (::pread(rd, &last, 1, st.st_size - 1) != 1) last = '\n';
      ::close(rd);
    }
    if (last != '\n') {
      append_line("");
      if (repaired != nullptr) *repaired = true;
    }
  }
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append_line(const std::string& line) {
  const std::string bytes = line + "\n";
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw Error("cannot append to '" + path_ + "': " + errno_text());
    }
    done += static_cast<size_t>(n);
  }
}

std::string read_file(const std::string& path, const char* what, int64_t max_bytes) {
  return InputFile(path, what, max_bytes).read_all();
}

void write_file_atomic(const std::string& path, const std::string& bytes, bool overwrite) {
  write_file_atomic(path, {std::string_view(bytes)}, overwrite);
}

void write_file_atomic(const std::string& path, std::initializer_list<std::string_view> parts,
                       bool overwrite) {
  if (path.empty()) throw Error("write_file_atomic: empty output path");
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) {
    if (S_ISDIR(existing.st_mode)) throw Error("output path '" + path + "' is a directory");
    if (!overwrite) {
      throw Error("output file '" + path +
                  "' already exists; pass `overwrite` to replace it (nothing was written)");
    }
  }
  // mkstemp needs a writable template ending in XXXXXX; same directory keeps rename atomic.
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(&tmpl[0]);
  if (fd < 0) throw Error("cannot create a temporary file beside '" + path + "': " + errno_text());
  TempFileGuard guard(tmpl);
  guard.set_fd(fd);
  ::fchmod(fd, 0644);
  for (std::string_view bytes : parts) {
    size_t written = 0;
    while (written < bytes.size()) {
      const size_t chunk = std::min<size_t>(bytes.size() - written, size_t{1} << 30);
      const ssize_t n = ::write(fd, bytes.data() + written, chunk);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error("cannot write '" + tmpl + "' (for '" + path + "'): " + errno_text());
      }
      written += static_cast<size_t>(n);
    }
  }
  if (::fsync(fd) != 0) throw Error("cannot fsync '" + tmpl + "': " + errno_text());
  guard.close_fd();
  if (!overwrite) {
    // link() fails if `path` appeared meanwhile, so a concurrent writer's file is never replaced.
    if (::link(tmpl.c_str(), path.c_str()) != 0) {
      if (errno == EEXIST) {
        throw Error("output file '" + path +
                    "' already exists; pass `overwrite` to replace it (nothing was written)");
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
