// Reading a file the GPU plugins keep beside their work (kernel-cache entries, CLML tuning
// caches, dumped kernel sources) without ever blocking: only a regular file is opened. Core's
// InputFile does the same for models and packs; a plugin cannot link it, so the plugins share
// this one.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::opencl {

// What is at a path: nothing yet, a regular file read whole, a file larger than the caller
// takes, or something else that is left unread (`problem` says what, e.g. "is a FIFO, not a
// regular file").
struct RegularFile {
  enum class State { kMissing, kRead, kTooLarge, kNotRegular } state = State::kMissing;
  std::string bytes;
  std::string problem;
};

// Reads `path` whole when it is a regular file of at most `max_bytes`. Anything else is not even
// opened: opening a FIFO would wait forever for a writer, and would release one waiting on it.
// The open itself is non-blocking and checked again, for a FIFO put there after the stat. A file
// cut short while it is read comes back short (callers check their own sizes).
RegularFile read_regular_file(const std::string& path, uint64_t max_bytes);

}  // namespace tessera::opencl
