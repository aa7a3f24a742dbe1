// Small file helpers shared by config, pack and CLI code: whole-file reads and atomic writes.
#pragma once

#include <string>

namespace tessera {

// Reads the whole file. Throws tessera::Error naming the path if it cannot be opened or read.
std::string read_file(const std::string& path);

// Writes `bytes` to `path` so that readers see either the old file or the complete new one, never
// a partial file: a temporary file in the same directory is written, fsync'ed and renamed over
// `path` (rename is atomic within one file system), then the directory is fsync'ed.
// Refuses to replace an existing `path` unless `overwrite`; that error names the path and says to
// pass --force. On any failure the temporary file is removed and tessera::Error is thrown.
void write_file_atomic(const std::string& path, const std::string& bytes, bool overwrite);

}  // namespace tessera
