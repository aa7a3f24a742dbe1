#!/usr/bin/env bash
# The examples built against an installed Tessera, as an application outside this tree builds
# them: `cmake --install` of the build tree to a temp prefix; examples/c_api and examples/classify
# configured with find_package(tessera) against it and checked as tests/capi checks the in-tree
# programs (against ONNX Runtime); the package's version check; then the prefix moved elsewhere
# and examples/c_api compiled with pkg-config (tessera-runtime.pc) against the moved prefix and
# checked again, with the moved `tessera` command making the test models.
# usage: examples_against_install.sh BUILD_DIR SOURCE_DIR PYTHON3
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
python=$3
capi_tests="$source_dir/tests/capi"
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
version=$(sed -n 's/^project(tessera VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")

echo "== install $build_dir -> $work/prefix"
cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"
# The prefix's libdir as installed (lib, or lib/<multiarch> where GNUInstallDirs picks it).
cmake_dir=$(dirname "$(find "$work/prefix" -name tesseraConfig.cmake)")
libdir=$(cd "$cmake_dir/../.." && pwd)

echo "== examples/c_api with find_package(tessera) against the prefix"
cmake -S "$source_dir/examples/c_api" -B "$work/c_api" "${generator[@]}" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/c_api-configure.log"
found=$(sed -n 's/^tessera_DIR:PATH=//p' "$work/c_api/CMakeCache.txt")
if [ "$found" != "$cmake_dir" ]; then
  echo "find_package(tessera) found '$found', not the installed $cmake_dir" >&2
  exit 1
fi
cmake --build "$work/c_api" >"$work/c_api-build.log"
"$python" "$capi_tests/c_example_test.py" "$work/c_api/tessera-c-example" "$work/prefix/bin/tessera"

if pkg-config --exists stb; then
  echo "== examples/classify with find_package(tessera) against the prefix"
  cmake -S "$source_dir/examples/classify" -B "$work/classify" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/classify-configure.log"
  cmake --build "$work/classify" >"$work/classify-build.log"
  "$python" "$capi_tests/classify_test.py" "$work/classify/tessera-classify" \
    "$work/prefix/bin/tessera" "$libdir/libtessera-runtime.so"
else
  echo "== examples/classify left out: needs stb_image (libstb-dev)"
fi

echo "== find_package(tessera) versions: $version and ${version%%.*}.0 accepted, the next major refused"
mkdir -p "$work/version"
cat >"$work/version/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(version_check LANGUAGES NONE)
find_package(tessera ${WANT} REQUIRED)
foreach(t tessera::runtime tessera::core tessera::tune tessera::plugin_api)
  if(NOT TARGET ${t})
    message(FATAL_ERROR "the installed package has no target ${t}")
  endif()
endforeach()
message(STATUS "found tessera ${tessera_VERSION}")
CMAKE
next_major=$((${version%%.*} + 1)).0
for want in "$version" "${version%%.*}.0" "$next_major"; do
  rm -rf "$work/version/build"
  if cmake -S "$work/version" -B "$work/version/build" -DWANT="$want" \
       -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/version.log" 2>&1; then
    accepted=yes
  else
    accepted=no
  fi
  expected=yes
  [ "$want" = "$next_major" ] && expected=no
  if [ "$accepted" = no ] && ! grep -q "compatible with requested version" "$work/version.log"; then
    accepted="no, for another reason than the version"
  fi
  if [ "$accepted" != "$expected" ]; then
    cat "$work/version.log"
    echo "find_package(tessera $want) accepted: $accepted, expected $expected" >&2
    exit 1
  fi
done

echo "== the prefix moved; examples/c_api with pkg-config against it"
mv "$work/prefix" "$work/moved"
moved_libdir=${libdir/#"$work/prefix"/"$work/moved"}
export PKG_CONFIG_PATH="$moved_libdir/pkgconfig"
pc_version=$(pkg-config --modversion tessera-runtime)
if [ "$pc_version" != "$version" ] || [ "$(pkg-config --modversion tessera)" != "$version" ]; then
  echo "pkg-config reports tessera-runtime $pc_version, tessera $(pkg-config --modversion tessera); the build is $version" >&2
  exit 1
fi
for lib in -ltessera -ltessera-runtime; do
  case " $(pkg-config --libs tessera) " in
    *" $lib "*) ;;
    *) echo "pkg-config --libs tessera: $(pkg-config --libs tessera) (needs $lib)" >&2
       exit 1 ;;
  esac
done
# shellcheck disable=SC2046
cc -o "$work/c-example-pc" "$source_dir/examples/c_api/main.c" \
  $(pkg-config --cflags --libs tessera-runtime) \
  -Wl,-rpath,"$(pkg-config --variable=libdir tessera-runtime)" -lm
"$python" "$capi_tests/c_example_test.py" "$work/c-example-pc" "$work/moved/bin/tessera"
