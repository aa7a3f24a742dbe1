// Small file helpers shared by the importer, config, pack, tuner and CLI code: checked reads of
// untrusted files and atomic writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tessera {

// Per-format size limits, checked before a byte is read so that /dev/zero, a FIFO or a huge file
// named by mistake ends in a clear error instead of a hang or bad_alloc.
// ONNX models: protobuf cannot parse messages of 2 GiB or more (weights go to external data).
constexpr int64_t kMaxModelFileBytes = (int64_t{1} << 31) - 1;
// Deployment YAML, device-family descriptors, packs: text written by people or the tuner.
constexpr int64_t kMaxYamlFileBytes = int64_t{64} << 20;
// Tuning logs: JSON lines, a few hundred bytes per measurement.
constexpr int64_t kMaxTuneLogBytes = int64_t{1} << 30;

// A file opened for reading that is known to be a regular file of at most a given size.
// Opening never blocks (a FIFO is refused, not waited on); directories, devices, sockets and
// FIFOs get an error naming the file and what it is. Not copyable; closes on destruction.
class InputFile {
 public:
  // `what` names the format for messages ("ONNX model", "deployment YAML"). Throws
  // tessera::Error naming `path` when it cannot be opened, is not a regular file, or is larger
  // than `max_bytes`.
  InputFile(const std::string& path, const char* what, int64_t max_bytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  // The descriptor of the checked file, open while this object lives: map or read it here rather
  // than opening `path` again (the name could meanwhile name something else).
  int fd() const { return fd_; }
  // Size at open time (fstat).
  int64_t size() const { return size_; }
  // Reads up to `n` bytes at `offset`; returns how many were read (fewer only at end of file).
  // Throws tessera::Error naming the file on an I/O error.
  size_t read_at(int64_t offset, void* dst, size_t n) const;
  // The whole file (size() bytes); throws if it shrank or grew while being read.
  std::string read_all() const;

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// A log opened for appending lines (the tuner's JSON-lines log). Opening refuses anything but a
// regular file and never follows a symlink at `path`; a file whose last line lacks its newline
// (a run killed mid-write) gets one first, so the next record starts on a line of its own and
// the log stays readable on resume. Not copyable; closes on destruction.
class AppendFile {
 public:
  // Throws tessera::Error naming `path` (and `what`) on failure. Sets `repaired` when a newline
  // had to be added after a partial last line.
  AppendFile(const std::string& path, const char* what, bool* repaired = nullptr);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  // Appends `line` and a newline in one write; throws tessera::Error naming the file on failure.
  void append_line(const std::string& line);

 private:
  std::string path_;
  int fd_ = -1;
};

// Reads the whole regular file `path` of at most `max_bytes` (see InputFile). Throws
// tessera::Error naming the path if it cannot be opened or read, or is not a regular file.
std::string read_file(const std::string& path, const char* what, int64_t max_bytes);

// Writes `bytes` to `path` so that readers see either the old file or the complete new one, never
// a partial file: a temporary file in the same directory is written, fsync'ed and renamed over
// `path` (rename is atomic within one file system), then the directory is fsync'ed.
// Refuses to replace an existing `path` unless `overwrite`; that error names the path and says to
// pass `overwrite` (spelled as the front end's option: tessera/error.hpp). On any failure the
// temporary file is removed and tessera::Error is thrown.
// The temporary is created by mkstemp (O_EXCL, a fresh unpredictable name), so a planted symlink
// is never followed.
void write_file_atomic(const std::string& path, const std::string& bytes, bool overwrite);
// The same for a file made of several pieces written in order (a header and a tensor's data),
// without first copying them into one string.
void write_file_atomic(const std::string& path, std::initializer_list<std::string_view> parts,
                       bool overwrite);

}  // namespace tessera
