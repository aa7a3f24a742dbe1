#!/usr/bin/env bash
# Installs what Tessera needs to build and test on Debian 12, only what is missing, quietly.
# Idempotent: a second run does nothing and prints nothing but one line.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git python3 python3-pip
  libonnx-dev libprotobuf-dev protobuf-compiler   # ONNX import (protobuf)
  libyaml-cpp-dev                                 # deployment YAML, packs
  libboost-dev libboost-filesystem-dev            # Boost.DLL plugin loading
  libtbb-dev libhwy-dev                           # CPU plugin: threads, portable SIMD
  libxgboost-dev                                  # tuner's learned cost model
  libgtest-dev libgmock-dev                       # tests
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo  # OpenCL + PoCL CPU device
  libvulkan-dev
  patchelf                                        # tools/bundle.sh: $ORIGIN run paths
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
pip_missing=()
$PY -c "import numpy" 2>/dev/null || pip_missing+=(numpy)
$PY -c "import onnxruntime" 2>/dev/null || pip_missing+=(onnxruntime)
$PY -c "import onnx" 2>/dev/null || pip_missing+=(onnx)
if ((${#pip_missing[@]})); then
  echo "setup: installing Python packages: ${pip_missing[*]}"
  # Debian's system python refuses global pip installs (PEP 668); --break-system-packages is
  # the documented opt-out for a build machine. pyenv/venv pythons ignore the flag's absence.
  $PY -m pip install -q "${pip_missing[@]}" 2>/dev/null ||
    $PY -m pip install -q --break-system-packages "${pip_missing[@]}"
fi
echo "setup: dependencies present"
