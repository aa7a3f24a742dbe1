// NumPy .npz archives as `--input FILE.npz`: every array in the archive is a model input of its
// name, for models with several inputs.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/tensor.hpp"

namespace tessera::cli {

// The arrays of an .npz file (a zip of .npy files, as np.savez and np.savez_compressed write
// them), by name ("x" for the member "x.npy"), in archive order. Members may be stored or
// deflated; each is checked against its CRC-32 and its sizes before use. Errors name the file and
// the member: a member that is not .npy, encrypted, compressed another way, or damaged.
std::vector<std::pair<std::string, Tensor>> read_npz(const std::string& path);

// load_or_generate_inputs (run_common.hpp) that also takes `FILE.npz` specs: each array of the
// archive is given to the input of its name. An array named after no model input, one that does
// not fit its input, or an input given twice (by two specs of either kind) is an error naming the
// file and the input. Inputs given neither way get seeded random data as before.
std::map<std::string, Tensor> load_inputs(const Graph& graph, const std::vector<std::string>& specs,
                                          uint64_t seed);

}  // namespace tessera::cli
