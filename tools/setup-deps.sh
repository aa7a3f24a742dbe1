#!/usr/bin/env bash
# Installs what Tessera needs to build and test on Debian 12, only what is missing, quietly.
# Idempotent: a second run does nothing and prints nothing but one line.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git python3 python3-pip
  libonnx-dev libprotobuf-dev protobuf-compiler   # ONNX import (protobuf)
  libyaml-cpp-dev                                 # deployment YAML, packs
  zlib1g-dev                                      # tessera run --input FILE.npz (deflated)
  libflatbuffers-dev flatbuffers-compiler         # packages (.tsp): verifier + flatc
  libboost-dev                                    # Boost.DLL plugin loading (header-only)
  libsodium-dev                                   # ed25519 signatures of packages and packs
  libtbb-dev libhwy-dev                           # CPU plugin: threads, portable SIMD
  libxgboost-dev                                  # tuner's learned cost model
  libhiredis-dev redis-server                     # tuning farm: Redis client, server for its tests
  stunnel4 openssl                                # farm over TLS: the tunnel its test goes through
  libgtest-dev libgmock-dev                       # tests
  clang libclang-rt-dev                           # tools/run-fuzz.sh: libFuzzer (clang's runtime)
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo  # OpenCL + PoCL CPU device
  libvulkan-dev glslang-tools                     # vulkan plugin: headers, GLSL -> SPIR-V
  mesa-vulkan-drivers vulkan-validationlayers     # its tests: lavapipe + Khronos validation
  patchelf                                        # tools/bundle.sh: $ORIGIN run paths
  libstb-dev python3-pil                          # examples/classify: image decoding
  python3-dev                                     # the Python module's headers (nanobind)
  python3-torch python3-torchvision               # real-model corpus: PyTorch's ONNX exporter
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
$PY -c "import matplotlib" 2>/dev/null || pip_missing+=(matplotlib)  # tools/bench charts
$PY -c "import PIL" 2>/dev/null || pip_missing+=(pillow)  # examples/classify
$PY -c "import nanobind" 2>/dev/null || pip_missing+=(nanobind)  # the Python module (tools/python)
$PY -c "import pytest" 2>/dev/null || pip_missing+=(pytest)      # its tests (tests/python)
if ((${#pip_missing[@]})); then
  echo "setup: installing Python packages: ${pip_missing[*]}"
  # Debian's system python refuses global pip installs (PEP 668); --break-system-packages is
  # the documented opt-out for a build machine. pyenv/venv pythons ignore the flag's absence.
  $PY -m pip install -q "${pip_missing[@]}" 2>/dev/null ||
    $PY -m pip install -q --break-system-packages "${pip_missing[@]}"
fi
# timm (real-model corpus: convnext, mobilevit, efficientvit, fastvit, repvit) for Debian's torch
# 1.13: 0.9.16 exports all five with it; --no-deps keeps pip from replacing Debian's torch
# (timm's hub and safetensors imports are optional and no weights are downloaded).
TORCH_PY=/usr/bin/python3
TIMM_VERSION=0.9.16
if ! $TORCH_PY -c "import timm, sys; sys.exit(timm.__version__ != '$TIMM_VERSION')" 2>/dev/null; then
  echo "setup: installing timm $TIMM_VERSION for $TORCH_PY"
  $TORCH_PY -m pip install -q --no-deps --break-system-packages --root-user-action=ignore \
    "timm==$TIMM_VERSION"
fi
echo "setup: dependencies present"
