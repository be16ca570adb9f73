#!/usr/bin/env bash
# Set up a fresh Debian 12 machine and build: installs the Debian packages gpuprobe needs
# (skipped when they are all present), then configures and builds into build/.
# Usage: scripts/build.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config clang llvm
  libbpf-dev libelf-dev zlib1g-dev libzstd-dev liblz4-dev bpftool
  libjson-c-dev libyaml-dev libmicrohttpd-dev python3
  spirv-headers spirv-tools llvm-spirv-15 pocl-opencl-icd ocl-icd-opencl-dev opencl-headers
  prometheus)   # prometheus: tests/planes/metrics.sh scrapes `gpuprobe run --metrics` with it

# gpuprobe run --trace's Perfetto traces (protobuf-c); tests/trace: protoc decodes a trace and
# headless Chromium renders the HTML reports (chromium: about a minute to install)
PACKAGES+=(protobuf-c-compiler libprotobuf-c-dev protobuf-compiler chromium)

# amdgpu/: LLVM 19's C API (the AMDGCN and NVPTX targets), ld.lld-19 for AMDGCN code objects
PACKAGES+=(llvm-19-dev lld-19 clang-19)

# scripts/container.sh (ctest container.debian): the Debian 12 image without a registry
PACKAGES+=(mmdebstrap buildah)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build.sh: installing ${missing[*]}"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build build -j"$(nproc)"
# The examples (probes with clang -target bpf, apps with nvcc) for README's example line.
if [ -x /usr/local/cuda/bin/nvcc ]; then
  examples/build.sh build
else
  echo "build.sh: /usr/local/cuda/bin/nvcc not found: examples not built"
fi
