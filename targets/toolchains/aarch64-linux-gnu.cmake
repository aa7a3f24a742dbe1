# Cross build for 64-bit Arm Linux (glibc) with Debian's cross compiler (g++-aarch64-linux-gnu).
# Target libraries come from Debian multiarch (apt-get install libfoo-dev:arm64, after
# tools/setup-aarch64.sh added the arm64 architecture): headers in /usr/include (shared with the
# host), libraries and CMake package files in /usr/lib/aarch64-linux-gnu. Binaries built here run
# on this machine under qemu-aarch64 (ctest and try_run use CMAKE_CROSSCOMPILING_EMULATOR).
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=targets/toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(TESSERA_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${TESSERA_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TESSERA_CROSS_TRIPLE}-g++)

# Look for target libraries and packages only in the cross sysroot (/usr/aarch64-linux-gnu: libc,
# libstdc++) and the arm64 multiarch directories. The latter come from the root "/" together with
# CMAKE_LIBRARY_ARCHITECTURE: find_library searches /usr/lib/aarch64-linux-gnu, find_package
# /usr/lib/aarch64-linux-gnu/cmake/<pkg>, never the x86_64 ones. Programs (protoc, python) still
# come from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${TESSERA_CROSS_TRIPLE} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -L: where qemu finds the Arm dynamic loader (ld-linux-aarch64.so.1) and libc. Multiarch
# libraries in /usr/lib/aarch64-linux-gnu are found by that loader through its default paths.
# The multiarch loader (libc6:arm64, pulled in by every :arm64 library) when there is one: the
# cross sysroot's glibc is another build, and its loader with multiarch's libc.so.6 can hang.
find_program(TESSERA_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(TESSERA_QEMU_AARCH64)
  set(qemu_root /usr/${TESSERA_CROSS_TRIPLE})
  if(EXISTS /lib/ld-linux-aarch64.so.1)
    set(qemu_root /)
  endif()
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TESSERA_QEMU_AARCH64} -L ${qemu_root})
endif()

# pkg-config (FindPkgConfig runs the host's) reads the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${TESSERA_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
