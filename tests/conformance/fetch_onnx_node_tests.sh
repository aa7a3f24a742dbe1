#!/usr/bin/env bash
# Fetches the ONNX project's backend node tests (onnx/backend/test/data/node) into <dest>.
#
# The installed onnx package (1.17+) no longer ships this data, so the script downloads the
# onnx 1.16.2 wheel from PyPI (pip, no dependencies) and extracts only that folder with Python's
# zipfile. Idempotent: does nothing when <dest> already holds the test cases.
#
# Usage: fetch_onnx_node_tests.sh <dest-dir>
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <dest-dir>" >&2
  exit 2
fi
dest="$1"
version="1.16.2"
marker="${dest}/.complete-onnx-${version}"

if [[ -f "${marker}" ]]; then
  echo "ONNX node tests already present in ${dest}"
  exit 0
fi

python="${PYTHON:-python3}"
workdir="$(mktemp -d)"
trap 'rm -rf "${workdir}"' EXIT

# Any platform's wheel holds the same test data; ask for one that exists for this interpreter
# first, then fall back to a fixed manylinux/cp311 wheel so the download works on any host.
if ! "${python}" -m pip download --quiet --no-deps "onnx==${version}" -d "${workdir}" 2>/dev/null; then
  "${python}" -m pip download --quiet --no-deps --only-binary=:all: \
    --platform manylinux_2_17_x86_64 --python-version 3.11 "onnx==${version}" -d "${workdir}"
fi

wheel="$(ls "${workdir}"/onnx-"${version}"-*.whl 2>/dev/null | head -n 1 || true)"
if [[ -z "${wheel}" ]]; then
  echo "error: pip did not produce an onnx ${version} wheel in ${workdir}" >&2
  exit 1
fi

# Extract into a staging folder and rename at the end, so an interrupted run leaves no half tree.
staging="${dest}.partial"
rm -rf "${staging}"
mkdir -p "${staging}"
"${python}" - "${wheel}" "${staging}" <<'PY'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
prefix = "onnx/backend/test/data/node/"
count = 0
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if not info.filename.startswith(prefix) or info.is_dir():
            continue
        rel = info.filename[len(prefix):]
        # Refuse anything that would land outside the staging folder.
        target = os.path.realpath(os.path.join(out, rel))
        if not target.startswith(os.path.realpath(out) + os.sep):
            raise SystemExit("refusing path outside destination: " + info.filename)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as dst:
            dst.write(src.read())
        count += 1
if count == 0:
    raise SystemExit("no files under " + prefix + " in " + wheel)
print(f"extracted {count} files")
PY
rm -rf "${dest}"
mv "${staging}" "${dest}"
touch "${marker}"
echo "ONNX node tests ready in ${dest}"
