#!/usr/bin/env bash
# Cross-builds tests/cpu_aarch64 (the cpu plugin's Highway kernels + core's reference ops) for
# aarch64 into BUILD_DIR and runs the test under qemu-aarch64, once per emulated CPU: cortex-a53
# (the little cores of the boards we target; NEON, no SVE) and qemu's "max" (every feature qemu
# has, SVE2 included). The test forces each Highway target the CPU supports and prints its name.
# Installs nothing: needs g++-aarch64-linux-gnu, qemu-user, libhwy-dev:arm64, libtbb-dev:arm64
# (tools/setup-aarch64.sh).
#
#   tests/cpu_aarch64/run_under_qemu.sh build-arm64
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$1

qemu=$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)
if [ -z "$qemu" ] || ! command -v aarch64-linux-gnu-g++ >/dev/null; then
  echo "run_under_qemu: needs aarch64-linux-gnu-g++ and qemu-aarch64 (tools/setup-aarch64.sh)" >&2
  exit 1
fi

args=(-DCMAKE_TOOLCHAIN_FILE="$root/targets/toolchains/aarch64-linux-gnu.cmake")
# Keep whatever generator an existing build dir was made with.
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then args+=(-G Ninja); fi
if command -v ccache >/dev/null; then args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$here" -B "$build" "${args[@]}" >/dev/null
# Two jobs at most: CI machines here are shared 2-core boxes.
cmake --build "$build" -j 2

# The multiarch loader when libc6:arm64 is installed (the test's oneTBB and libstdc++ are
# multiarch's), as targets/toolchains/aarch64-linux-gnu.cmake picks it: the cross sysroot's glibc
# is another build, and its loader with multiarch's libc.so.6 can hang in pthread_create.
root=/usr/aarch64-linux-gnu
[ -e /lib/ld-linux-aarch64.so.1 ] && root=/

status=0
for cpu in cortex-a53 max; do
  echo "== qemu-aarch64 -cpu $cpu: $build/cpu_aarch64_kernels_test"
  # A hung emulator must fail the run, not stall CI.
  timeout 120 "$qemu" -cpu "$cpu" -L "$root" "$build/cpu_aarch64_kernels_test" ||
    status=1
done
exit $status
