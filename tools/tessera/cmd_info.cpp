// `tessera info [--plugin-dir DIR]... [--pack FILE | --no-packs]`: version, plugin directories
// searched, every loaded plugin with its devices (each with the device family it matches and the
// tuned pack a run would select, with the reason), and every refused candidate with the reason.
#include <cstdio>

#include "cli.hpp"
#include "run_common.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"

namespace tessera::cli {

int cmd_info(int argc, char** argv) {
  Args args(argc, argv, {"plugin-dir", "pack"}, {"no-packs", "help"});
  if (args.flag("help") || !args.positionals().empty()) {
    std::printf(
        "usage: tessera info [--plugin-dir DIR]... [--pack FILE]... [--no-packs]\n"
        "  --plugin-dir DIR  also search this absolute directory (repeatable)\n"
        "  --pack FILE       show the selection among exactly these packs (repeatable)\n"
        "  --no-packs        show devices without pack selection\n"
        "Plugins are also searched in TESSERA_PLUGIN_PATH (colon-separated absolute dirs) and\n"
        "the install's plugin directory; never the working directory. Packs are searched in\n"
        "TESSERA_SCHEDULES_PATH and the install's share/tessera/schedules.\n");
    return args.flag("help") ? 0 : 2;
  }
  PluginHostOptions options;
  options.dirs = args.get_all("plugin-dir");
  const PluginHost host(options);
  SessionOptions pack_options;
  if (auto mode = pack_mode_from_options(args.get_all("pack"), args.flag("no-packs"))) {
    pack_options.pack_mode = *mode;
    pack_options.pack_files = args.get_all("pack");
  }

  std::printf("tessera %s (plugin ABI %s)\n\n", TESSERA_VERSION, plugin_abi_version().c_str());
  std::printf("plugin directories:\n");
  for (const PluginDir& d : host.dirs()) {
    std::printf("  %-50s [%s] %s\n", d.path.c_str(), d.origin.c_str(), d.status.c_str());
  }
  std::printf("\ndevice families and packs (default locations):\n");
  for (const char* sub : {"targets/devices", "schedules"}) {
    for (const PluginDir& d : default_data_dirs(sub)) {
      std::printf("  %-50s [%s]\n", d.path.c_str(), d.origin.c_str());
    }
  }
  std::printf("\nplugins loaded: %zu\n", host.plugins().size());
  for (const auto& p : host.plugins()) {
    std::printf("  %s %s (ABI %u.%u): %s\n    %s\n", p->name().c_str(), p->version().c_str(),
                p->abi_major(), p->abi_minor(), p->description().c_str(), p->path().c_str());
    if (p->devices().empty()) std::printf("    no devices\n");
    for (size_t i = 0; i < p->devices().size(); ++i) {
      const PluginDeviceInfo& d = p->devices()[i];
      std::printf("    device %zu: %s / %s [%s], driver %s, %d compute units", i, d.vendor.c_str(),
                  d.name.c_str(), d.kind.c_str(), d.driver_version.c_str(), d.compute_units);
      if (d.memory_bytes > 0) {
        std::printf(", %.0f MiB", static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0));
      }
      std::printf(", score %d", d.score);
      if (d.score <= 0) std::printf(" (unusable: %s)", d.unusable_reason.c_str());
      std::printf("\n");
      if (!d.features.empty()) std::printf("      features: %s\n", d.features.c_str());
      const DevicePackPlan pack = preview_device_pack(p->name(), d, pack_options);
      std::printf("      family: %s (%s)\n", pack.family.empty() ? "none" : pack.family.c_str(),
                  pack.family_reason.c_str());
      // The reason starts by naming the chosen file and level again; say them once.
      std::string reason = pack.reason;
      const std::string repeated =
          "pack " + pack.pack_file + " chosen at level " + pack.level + ": ";
      if (!pack.pack_file.empty() && reason.rfind(repeated, 0) == 0) {
        reason = reason.substr(repeated.size());
      }
      std::printf("      pack: %s, level %s: %s\n",
                  pack.pack_file.empty() ? "none" : pack.pack_file.c_str(), pack.level.c_str(),
                  reason.c_str());
      for (const std::string& w : pack.warnings) std::printf("        note: %s\n", w.c_str());
    }
  }
  std::printf("\nplugins refused: %zu\n", host.refusals().size());
  for (const PluginRefusal& r : host.refusals()) {
    std::printf("  %s: %s\n    %s\n", r.name.c_str(), r.reason.c_str(), r.path.c_str());
  }
  return 0;
}

}  // namespace tessera::cli
