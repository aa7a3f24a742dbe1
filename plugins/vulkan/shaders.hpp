// The compute shaders (shaders/*.comp), compiled to SPIR-V by glslangValidator at build time and
// embedded in the plugin (embed_spirv.cmake writes the table).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::vulkan {

struct SpirvBlob {
  const uint32_t* words = nullptr;
  size_t count = 0;  // 32-bit words
};

// The SPIR-V of shaders/<name>.comp; words == nullptr when there is none.
SpirvBlob spirv(const std::string& name);
// A hash over every embedded shader: part of the pipeline cache's key.
uint64_t shaders_hash();

}  // namespace tessera::vulkan
