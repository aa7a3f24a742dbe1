#!/usr/bin/env bash
# Builds oneTBB's core library (libtbb) with ThreadSanitizer from Debian's own source package
# (the version libtbb-dev ships: 2021.8.0-2+deb12u1, Debian's patches applied) and installs it
# under PREFIX (default: build-tbb-tsan/install), for tools/run-tests.sh's build-tsan tree.
#
# Why: Debian's libtbb is not built with TSan. A task handed to a TBB worker goes through its
# uninstrumented queues, so TSan sees no happens-before edge between the thread that prepares a
# task's data and the worker that runs it and reports every parallel kernel as a race. An
# instrumented libtbb makes those hand-offs visible, so nothing of TBB needs suppressing and
# TBB-parallel code in Tessera is checked too (tests/SANITIZERS.md).
#
# Only the `tbb` target is built (not tbbmalloc, tbbbind, tests or examples): about 30 s on
# 2 cores. The source archives are checked against the .dsc's SHA-256 sums below; a second run
# with the same version finds the stamp and does nothing.
#   tools/build-tbb-tsan.sh [PREFIX]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/build-tbb-tsan/install}
work=$(dirname "$prefix")
version=2021.8.0
debian_revision=2+deb12u1
orig=onetbb_${version}.orig.tar.xz
orig_sha256=7e9111b8bb59c8800bf6d0b06afe7b0891937443d2dae1ee1101c8e2ede6a7ef
orig_sha1=9154974d2ef8dd341e9b39b05519e95a6de16f5a
debian=onetbb_${version}-${debian_revision}.debian.tar.xz
debian_sha256=b83a270205b38cdf66972fa1467c3e29493b88b92ecacf4f3672e87d67199df5
debian_sha1=48ecb05e7430d911b8a1bcd4f05844b40a449a0f
stamp="$prefix/.tessera-tbb-tsan-$version-$debian_revision"
if [ -f "$stamp" ]; then
  echo "oneTBB $version-$debian_revision with TSan: $prefix (already built)"
  exit 0
fi
mkdir -p "$work/src"
# deb.debian.org serves the current point release; snapshot.debian.org keeps every upload by its
# SHA-1 (the .dsc's Checksums-Sha1), so the pinned version stays fetchable after Debian moves on.
fetch() {
  local name=$1 sha=$2 sha1=$3 url
  local file="$work/src/$name"
  if [ -f "$file" ] && echo "$sha  $file" | sha256sum -c --quiet - 2>/dev/null; then return 0; fi
  for url in "https://deb.debian.org/debian/pool/main/o/onetbb/$name" \
             "https://snapshot.debian.org/file/$sha1"; do
    if curl -fsSL --retry 3 -o "$file.part" "$url" &&
       echo "$sha  $file.part" | sha256sum -c --quiet -; then
      mv "$file.part" "$file"
      return 0
    fi
  done
  rm -f "$file.part"
  echo "build-tbb-tsan: could not download $name with SHA-256 $sha" >&2
  return 1
}
fetch "$orig" "$orig_sha256" "$orig_sha1"
fetch "$debian" "$debian_sha256" "$debian_sha1"
src="$work/src/oneTBB-$version"
rm -rf "$src" "$work/src/debian"
tar -C "$work/src" -xf "$work/src/$orig"
tar -C "$work/src" -xf "$work/src/$debian"
# Debian's patches, in its series order (build fixes and test changes; none touches the
# scheduler), so the library is the one libtbb-dev ships but for the sanitizer.
while read -r patch; do
  case "$patch" in ''|'#'*) continue ;; esac
  patch -d "$src" -p1 -s <"$work/src/debian/patches/$patch"
done <"$work/src/debian/patches/series"
# TBB_SANITIZE adds -fsanitize=thread to compiling and linking (oneTBB's cmake/sanitize.cmake);
# RelWithDebInfo gives TSan reports file:line frames inside TBB.
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTBB_SANITIZE=thread -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBBMALLOC_BUILD=OFF \
  -DTBB_STRICT=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
ninja -C "$work/build" -j"$(nproc)" tbb >"$work/build.log" 2>&1 ||
  { tail -50 "$work/build.log"; exit 1; }
cmake --install "$work/build" --component runtime >/dev/null
cmake --install "$work/build" --component devel >/dev/null
touch "$stamp"
echo "oneTBB $version-$debian_revision with TSan: $prefix"
