// Pre-dlopen checks of plugin files and directories (see plugin_file_check.hpp).
#include "plugins/plugin_file_check.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "tessera/checked_math.hpp"

namespace tessera::plugin_checks {
namespace {

constexpr bool k64 = sizeof(void*) == 8;
using Ehdr = std::conditional_t<k64, Elf64_Ehdr, Elf32_Ehdr>;
using Phdr = std::conditional_t<k64, Elf64_Phdr, Elf32_Phdr>;
constexpr unsigned char kElfClass = k64 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kElfData =
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
// Shared libraries are far below this; a larger file is not a plugin built from this project.
constexpr int64_t kMaxPluginBytes = int64_t{1} << 31;

#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
constexpr const char* kMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
constexpr const char* kMachineName = "aarch64";
#elif defined(__arm__)
constexpr uint16_t kMachine = EM_ARM;
constexpr const char* kMachineName = "arm";
#elif defined(__i386__)
constexpr uint16_t kMachine = EM_386;
constexpr const char* kMachineName = "x86";
#elif defined(__riscv)
constexpr uint16_t kMachine = EM_RISCV;
constexpr const char* kMachineName = "riscv";
#else
#error "plugin_file_check.cpp: add this architecture's ELF machine"
#endif

// Closes the descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool read_exact(int fd, int64_t offset, void* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, static_cast<char*>(dst) + done, n - done,
                                static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

// "" when the table of `count` entries of `entry_size` bytes at `offset` lies inside `size`.
bool inside(int64_t offset, int64_t count, int64_t entry_size, int64_t size) {
  int64_t bytes = 0, end = 0;
  return offset >= 0 && try_mul(count, entry_size, bytes) && try_add(offset, bytes, end) &&
         end <= size;
}

std::string ownership_problem(const struct stat& st, const char* what) {
  if ((st.st_mode & S_IWOTH) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string(what) + " is writable by every user (mode " + mode +
           "), so anyone could plant or replace a plugin; chmod o-w it";
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return std::string(what) + " is owned by uid " + std::to_string(st.st_uid) +
           ", neither this user (uid " + std::to_string(::geteuid()) + ") nor root";
  }
  return "";
}

}  // namespace

std::string file_problem(const std::string& path) {
  // O_NONBLOCK: a FIFO named like a plugin must not block discovery.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return std::string("cannot stat: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (std::string why = ownership_problem(st, "the file"); !why.empty()) return why;
  const auto size = static_cast<int64_t>(st.st_size);
  if (size > kMaxPluginBytes) return "implausibly large for a plugin (" + bytes_str(size) + ")";
  Ehdr eh{};
  if (size < static_cast<int64_t>(sizeof eh) || !read_exact(f.fd, 0, &eh, sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return "not an ELF file (" + std::to_string(size) + " bytes, no ELF header)";
  }
  if (eh.e_ident[EI_CLASS] != kElfClass || eh.e_ident[EI_DATA] != kElfData) {
    return std::string("an ELF file of another word size or byte order than this ") + kMachineName +
           " build";
  }
  if (eh.e_machine != kMachine) {
    return "an ELF file for machine " + std::to_string(eh.e_machine) + ", not this " +
           kMachineName + " build (cross-compiled for another target?)";
  }
  if (eh.e_type != ET_DYN) return "an ELF file that is not a shared library";
  if (eh.e_phentsize != sizeof(Phdr) ||
      !inside(static_cast<int64_t>(eh.e_phoff), eh.e_phnum, sizeof(Phdr), size)) {
    return "truncated or corrupt: its program headers lie outside the " + std::to_string(size) +
           "-byte file";
  }
  for (int i = 0; i < eh.e_phnum; ++i) {
    Phdr ph{};
    if (!read_exact(f.fd, static_cast<int64_t>(eh.e_phoff) + i * static_cast<int64_t>(sizeof ph),
                    &ph, sizeof ph)) {
      return "truncated: cannot read program header " + std::to_string(i);
    }
    if (ph.p_type == PT_LOAD &&
        !inside(static_cast<int64_t>(ph.p_offset), 1, static_cast<int64_t>(ph.p_filesz), size)) {
      // The loader would map the missing bytes and fault (SIGBUS) on first touch.
      return "truncated: loadable segment " + std::to_string(i) + " ends at byte " +
             std::to_string(static_cast<uint64_t>(ph.p_offset) + ph.p_filesz) + " of a " +
             std::to_string(size) + "-byte file";
    }
  }
  if (eh.e_shoff != 0 &&
      !inside(static_cast<int64_t>(eh.e_shoff), eh.e_shnum, eh.e_shentsize, size)) {
    return "truncated: its section headers lie past the end of the " + std::to_string(size) +
           "-byte file";
  }
  return "";
}

std::string dir_problem(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::string("cannot stat: ") + std::strerror(errno);
  return ownership_problem(st, "the directory");
}

}  // namespace tessera::plugin_checks
