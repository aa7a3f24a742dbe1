#!/usr/bin/env bash
# Installs what the aarch64 cross build and its qemu test need on Debian 12 (amd64 host): the
# cross compiler, qemu user-mode emulation, and the arm64 builds of Highway and oneTBB through
# Debian multiarch (adds the arm64 architecture to dpkg once). Idempotent and quiet: a second run
# installs nothing and prints one line. Used by tests/cpu_aarch64 (ctest cpu_aarch64_qemu).
set -euo pipefail

HOST_PACKAGES=(g++-aarch64-linux-gnu qemu-user)
ARM64_PACKAGES=(libhwy-dev:arm64 libtbb-dev:arm64 libstb-dev:arm64)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

added_arch=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup-aarch64: adding dpkg architecture arm64"
  $SUDO dpkg --add-architecture arm64
  added_arch=1
fi

missing=()
for p in "${HOST_PACKAGES[@]}" "${ARM64_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup-aarch64: installing Debian packages: ${missing[*]}"
  # arm64 package lists exist only after an update following --add-architecture.
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
elif ((added_arch)); then
  $SUDO apt-get update -qq
fi
echo "setup-aarch64: aarch64 cross toolchain, qemu-aarch64 and arm64 Highway/oneTBB/stb present"
