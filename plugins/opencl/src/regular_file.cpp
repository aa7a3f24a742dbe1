// read_regular_file: see regular_file.hpp.
#include "tessera_opencl/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tessera::opencl {
namespace {

// What `mode` says a path is instead of a regular file.
const char* not_regular(mode_t mode) {
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISDIR(mode)) return "is a directory, not a regular file";
  return "is not a regular file";
}

}  // namespace

RegularFile read_regular_file(const std::string& path, uint64_t max_bytes) {
  RegularFile out;
  auto ignored = [&](const std::string& problem) {
    out.state = RegularFile::State::kNotRegular;
    out.problem = problem;
    return out;
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return out;
    return ignored(std::string("cannot be read (") + std::strerror(errno) + ")");
  }
  if (!S_ISREG(st.st_mode)) return ignored(not_regular(st.st_mode));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return out;
    return ignored(std::string("cannot be opened (") + std::strerror(errno) + ")");
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return ignored(not_regular(st.st_mode));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    out.state = RegularFile::State::kTooLarge;
  } else {
    out.bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out.bytes.size()) {
      const ssize_t got = ::read(fd, out.bytes.data() + done, out.bytes.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      done += static_cast<size_t>(got);
    }
    out.bytes.resize(done);
    out.state = RegularFile::State::kRead;
  }
  ::close(fd);
  return out;
}

}  // namespace tessera::opencl
