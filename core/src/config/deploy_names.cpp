// The names of deployment settings (precision, pack mode, memory kind), shared by the YAML
// reader (core/src/yaml/deploy_config.cpp), the session and the C API.
#include <optional>

#include "tessera/deploy_config.hpp"

namespace tessera {

const char* memory_kind_name(MemoryKind kind) {
  return kind == MemoryKind::kImage ? "image" : "buffer";
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp16Acc32:
      return "fp16-acc32";
    default:
      return "fp32";
  }
}

std::optional<Precision> parse_precision(const std::string& name) {
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kFp16Acc32}) {
    if (name == precision_name(p)) return p;
  }
  return std::nullopt;
}

const char* pack_mode_name(PackMode mode) {
  switch (mode) {
    case PackMode::kFiles:
      return "files";
    case PackMode::kNone:
      return "none";
    default:
      return "auto";
  }
}

TargetSpec default_target() {
  TargetSpec t;
  t.plugin = "reference";
  return t;
}

}  // namespace tessera
