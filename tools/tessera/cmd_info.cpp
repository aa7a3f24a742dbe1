// `tessera info [--plugin-dir DIR]... [--pack FILE | --no-packs]`: version, plugin directories
// searched, every loaded plugin with its devices (each with the device family it matches and the
// tuned pack a run would select, with the reason), and every refused candidate with the reason.
// --json prints the same as one JSON object.
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "run_common.hpp"
#include "tessera/error.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"

namespace tessera::cli {
namespace {

void print_json(const PluginHost& host, const SessionOptions& pack_options) {
  std::string out = "{\"version\": " + json_string(TESSERA_VERSION) +
                    ", \"plugin_abi\": " + json_string(plugin_abi_version()) +
                    ", \"plugin_dirs\": [";
  for (size_t i = 0; i < host.dirs().size(); ++i) {
    const PluginDir& d = host.dirs()[i];
    out += std::string(i ? ", " : "") + "{\"path\": " + json_string(d.path) +
           ", \"origin\": " + json_string(d.origin) + ", \"status\": " + json_string(d.status) +
           "}";
  }
  out += "], \"plugins\": [";
  for (size_t p = 0; p < host.plugins().size(); ++p) {
    const auto& plugin = host.plugins()[p];
    out += std::string(p ? ", " : "") + "{\"name\": " + json_string(plugin->name()) +
           ", \"version\": " + json_string(plugin->version()) + ", \"abi\": \"" +
           std::to_string(plugin->abi_major()) + "." + std::to_string(plugin->abi_minor()) +
           "\", \"description\": " + json_string(plugin->description()) +
           ", \"path\": " + json_string(plugin->path()) + ", \"devices\": [";
    for (size_t i = 0; i < plugin->devices().size(); ++i) {
      const PluginDeviceInfo& d = plugin->devices()[i];
      const DevicePackPlan pack = preview_device_pack(plugin->name(), d, pack_options);
      out += std::string(i ? ", " : "") + "{\"index\": " + std::to_string(i) +
             ", \"id\": " + json_string(d.id) +
             ", \"selector\": " + json_string(plugin->name() + ":" + d.id) +
             ", \"vendor\": " + json_string(d.vendor) + ", \"name\": " + json_string(d.name) +
             ", \"kind\": " + json_string(d.kind) +
             ", \"driver\": " + json_string(d.driver_version) +
             ", \"compute_units\": " + std::to_string(d.compute_units) +
             ", \"memory_bytes\": " + std::to_string(d.memory_bytes) +
             ", \"score\": " + std::to_string(d.score) +
             ", \"unusable_reason\": " + json_string(d.unusable_reason) +
             ", \"features\": " + json_string(d.features) +
             ", \"family\": " + json_string(pack.family) +
             ", \"family_reason\": " + json_string(pack.family_reason) +
             ", \"pack\": " + json_string(pack.pack_file) +
             ", \"pack_level\": " + json_string(pack.level) +
             ", \"pack_reason\": " + json_string(pack.reason) +
             ", \"pack_warnings\": " + json_string_list(pack.warnings) +
             ", \"pack_notes\": " + json_string_list(pack.notes) + "}";
    }
    out += "]}";
  }
  out += "], \"refused\": [";
  for (size_t i = 0; i < host.refusals().size(); ++i) {
    const PluginRefusal& r = host.refusals()[i];
    out += std::string(i ? ", " : "") + "{\"name\": " + json_string(r.name) +
           ", \"reason\": " + json_string(r.reason) + ", \"path\": " + json_string(r.path) + "}";
  }
  std::printf("%s]}\n", out.c_str());
}

}  // namespace

int cmd_info(int argc, char** argv) {
  Args args(argc, argv, {"plugin-dir", "pack"}, {"no-packs", "json", "help"});
  if (args.flag("help") || !args.positionals().empty()) {
    return print_usage(
        "usage: tessera info [--plugin-dir DIR]... [--pack FILE]... [--no-packs] [--json]\n"
        "  --plugin-dir DIR  also search this absolute directory (repeatable)\n"
        "  --pack FILE       show the selection among exactly these packs (repeatable)\n"
        "  --no-packs        show devices without pack selection\n"
        "  --json            the same as one JSON object (devices with their index and the\n"
        "                    selector naming them, e.g. mali:0)\n"
        "Plugins are also searched in TESSERA_PLUGIN_PATH (colon-separated absolute dirs) and\n"
        "the install's plugin directory; never the working directory. Packs are searched in\n"
        "TESSERA_SCHEDULES_PATH and the install's share/tessera/schedules.\n",
        args.flag("help"));
  }
  PluginHostOptions options;
  for (const std::string& dir : args.get_all("plugin-dir")) {
    options.dirs.push_back(checked_plugin_dir(dir));
  }
  const PluginHost host(options);
  SessionOptions pack_options;
  if (auto mode = pack_mode_from_options(args.get_all("pack"), args.flag("no-packs"))) {
    pack_options.pack_mode = *mode;
    pack_options.pack_files = args.get_all("pack");
  }

  if (args.flag("json")) {
    print_json(host, pack_options);
    return 0;
  }
  std::printf("tessera %s (plugin ABI %s)\n\n", TESSERA_VERSION, plugin_abi_version().c_str());
  // Plugin-provided text (descriptions, device names, refusals) comes escaped from the host;
  // paths come from the environment and directory listings and are escaped here.
  std::printf("plugin directories:\n");
  for (const PluginDir& d : host.dirs()) {
    std::printf("  %-50s [%s] %s\n", escaped(d.path).c_str(), d.origin.c_str(), d.status.c_str());
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
                p->abi_major(), p->abi_minor(), p->description().c_str(),
                escaped(p->path()).c_str());
    if (p->devices().empty()) std::printf("    no devices\n");
    for (size_t i = 0; i < p->devices().size(); ++i) {
      const PluginDeviceInfo& d = p->devices()[i];
      std::printf("    device %s (%s:%s): %s / %s [%s], driver %s, %d compute units", d.id.c_str(),
                  p->name().c_str(), d.id.c_str(), d.vendor.c_str(), d.name.c_str(), d.kind.c_str(),
                  d.driver_version.c_str(), d.compute_units);
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
      for (const std::string& w : pack.warnings) std::printf("        warning: %s\n", w.c_str());
      for (const std::string& n : pack.notes) std::printf("        note: %s\n", n.c_str());
    }
  }
  std::printf("\nplugins refused: %zu\n", host.refusals().size());
  for (const PluginRefusal& r : host.refusals()) {
    std::printf("  %s: %s\n    %s\n", r.name.c_str(), r.reason.c_str(), r.path.c_str());
  }
  return 0;
}

}  // namespace tessera::cli
