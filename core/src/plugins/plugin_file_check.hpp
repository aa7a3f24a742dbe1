// Checks on a plugin file and its directory made before dlopen: the loader maps whatever it is
// given, so a truncated library dies with SIGBUS inside dlopen and a FIFO blocks it forever.
#pragma once

#include <string>

namespace tessera::plugin_checks {

// "" when `path` may be handed to dlopen, else the reason (for PluginRefusal): not a regular
// file, not owned by this user or root, writable by anyone, implausibly small or large, not an
// ELF shared object of this build's class, byte order and machine, or truncated (program headers,
// a loadable segment or the section headers lie past the end of the file).
std::string file_problem(const std::string& path);

// "" when plugins may be loaded from directory `dir`, else the reason: a directory anyone can
// write to lets anyone plant a plugin.
std::string dir_problem(const std::string& dir);

}  // namespace tessera::plugin_checks
