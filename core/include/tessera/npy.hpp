// NumPy .npy reading and writing (format versions 1.0-3.0, little-endian, C order).
#pragma once

#include <string>

#include "tessera/tensor.hpp"

namespace tessera {

// Throws tessera::Error naming the file on a malformed header, unsupported dtype, Fortran order
// or a size mismatch.
Tensor read_npy(const std::string& path);
// The same for .npy bytes in memory (a member of an .npz archive); messages name `name`.
Tensor parse_npy(const std::string& bytes, const std::string& name);

// Writes atomically (temporary file + rename). Refuses to replace an existing file unless
// `overwrite` is set.
void write_npy(const std::string& path, const Tensor& tensor, bool overwrite);

}  // namespace tessera
