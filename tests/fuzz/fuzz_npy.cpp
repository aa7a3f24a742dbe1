// Fuzz harness: .npy bytes through read_npy, as `tessera run --input NAME=FILE.npy` reads them.
// read_npy takes a path (it checks the file with fstat and reads by offset), so the bytes go
// into an in-memory file (memfd) named by its /proc/self/fd path: the reader under test is the
// real one, file checks included, and nothing touches the disk.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_target.hpp"
#include "tessera/npy.hpp"

namespace {

struct MemFile {
  int fd = -1;
  std::string path;
};

const MemFile& mem_file() {
  static const MemFile file = [] {
    MemFile f;
    f.fd = memfd_create("tessera-fuzz.npy", MFD_CLOEXEC);
    if (f.fd < 0) {
      std::perror("fuzz npy: memfd_create");
      std::abort();
    }
    f.path = "/proc/self/fd/" + std::to_string(f.fd);
    return f;
  }();
  return file;
}

}  // namespace

TESSERA_FUZZ_TARGET(npy) {
  const MemFile& f = mem_file();
  tessera::fuzz::fuzz_require(ftruncate(f.fd, 0) == 0, "ftruncate of the memfd");
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pwrite(f.fd, data + done, size - done, static_cast<off_t>(done));
    tessera::fuzz::fuzz_require(n > 0, "pwrite to the memfd");
    done += static_cast<size_t>(n);
  }
  return tessera::fuzz::run_input([&] {
    const tessera::Tensor t = tessera::read_npy(f.path);
    // An accepted array must be whole: its byte size is what shape and dtype say.
    tessera::fuzz::fuzz_require(
        static_cast<int64_t>(t.nbytes()) == tessera::shape_nbytes(t.shape(), t.dtype()),
        "read_npy returned a tensor whose byte size disagrees with its shape");
  });
}
