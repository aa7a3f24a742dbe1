#!/usr/bin/env bash
# Makes a relocatable Tessera bundle: the install tree plus every non-system shared library it
# needs, with $ORIGIN rpaths, so it runs on a board or machine without the build dependencies.
# Usage: tools/bundle.sh BUILD_DIR OUT_DIR   (patchelf, if installed, gives carried libraries
# an $ORIGIN run path so libraries loaded with dlopen find their dependencies too)
set -euo pipefail
build=${1:?build dir}
out=${2:?output dir}
cmake --install "$build" --prefix "$out" >/dev/null
command -v patchelf >/dev/null ||
  echo "bundle: patchelf not found (apt-get install patchelf): carried libraries keep their run" \
    "paths, so the tuner's dlopen()ed libxgboost will not find libdmlc beside it" >&2
libdir="$out/lib"
# Libraries every target system has (glibc, the C++ runtime, the GPU driver) are not carried.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libgcc_s|libstdc\+\+|libcuda|libnvidia)'
carry() {
  ldd "$1" 2>/dev/null | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    [[ $name =~ $skip ]] && continue
    [ -f "$libdir/$name" ] && continue
    cp -L "$path" "$libdir/$name"
    # A carried library finds its own dependencies beside it, also when it is dlopen()ed.
    command -v patchelf >/dev/null && patchelf --set-rpath '$ORIGIN' "$libdir/$name"
    carry "$libdir/$name"
  done
}
for f in "$out"/bin/* "$libdir"/*.so* "$libdir"/tessera/plugins/*.so; do
  [ -f "$f" ] && carry "$f"
done
# Loaded with dlopen, so ldd does not see them: the tuner's cost model (optional) and the Vulkan
# loader the vulkan plugin opens (a machine with a Vulkan driver but no loader, such as the
# device machine with NVIDIA's ICD, gets it from lib/, which the plugin's run path covers).
for soname in libxgboost.so.0 libvulkan.so.1; do
  # awk reads to the end: exiting at the first match would kill ldconfig with SIGPIPE, which
  # pipefail and set -e turn into the end of this script.
  path=$(ldconfig -p | awk -v n="$soname" '$1 == n && !found {print $NF; found = 1}')
  if [ -n "$path" ] && [ ! -f "$libdir/$soname" ]; then
    cp -L "$path" "$libdir/$soname"
    command -v patchelf >/dev/null && patchelf --set-rpath '$ORIGIN' "$libdir/$soname"
    carry "$libdir/$soname"
  fi
done
# Every binary and library of the bundle finds its libraries inside it or on the system (the
# runtime and libtessera-tune beside each other in lib/): fail here, not on the board.
missing=$(for f in "$out"/bin/* "$libdir"/*.so* "$libdir"/tessera/plugins/*.so; do
  [ -f "$f" ] && env -u LD_LIBRARY_PATH ldd "$f" 2>/dev/null | awk -v f="$f" '/not found/{print f": "$1}'
done)
if [ -n "$missing" ]; then
  echo "bundle: libraries not found:" >&2
  echo "$missing" >&2
  exit 1
fi
echo "bundle: $out ($(du -sh "$out" | cut -f1))"
