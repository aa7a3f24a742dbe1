#include "microarchitecture.hpp"

#include <map>

namespace tessera::cpu {

std::string x86_microarchitecture(const std::string& vendor, long family, long model) {
  if (vendor == "AuthenticAMD") {
    // Family 17h: Zen and Zen+ below model 30h, Zen 2 from there. Family 19h: Zen 4 is models
    // 10h-1Fh (Genoa) and 60h and up (Raphael, Phoenix), Zen 3 the rest. Family 1Ah: Zen 5.
    if (family == 23) return model < 0x30 ? "Zen" : "Zen 2";
    if (family == 25) return (model >= 0x10 && model <= 0x1f) || model >= 0x60 ? "Zen 4" : "Zen 3";
    if (family == 26) return "Zen 5";
  } else if (vendor == "GenuineIntel" && family == 6) {
    static const std::map<long, const char*> kIntel = {
        {85, "Skylake-SP"},       {106, "Ice Lake-SP"},    {108, "Ice Lake-SP"},
        {143, "Sapphire Rapids"}, {207, "Emerald Rapids"}, {173, "Granite Rapids"},
        {151, "Alder Lake"},      {154, "Alder Lake"},     {183, "Raptor Lake"},
        {186, "Raptor Lake"},     {191, "Raptor Lake"},    {170, "Meteor Lake"}};
    const auto it = kIntel.find(model);
    if (it != kIntel.end()) return it->second;
  }
  return "family " + std::to_string(family) + " model " + std::to_string(model);
}

}  // namespace tessera::cpu
