#!/bin/bash
# Build-machine step for tests/gpu/amdgpu.sh and amdgpu_bench.sh (the GPU machines have no LLVM 19):
# lowers, through amdgpu/ (LLVM 19, target nvptx64), every module those scripts load on the GPU,
# into one cache directory that the shim's GPUPROBE_LLVM_CACHE mode reads there:
#   - the conformance cases' PTX (spirv_conformance --dump, as the harness loads it);
#   - tests/lower's eBPF modules (BUILD/lower-gpu/*.ptx);
#   - the bench programs (tests/gpu/amdgpu_bench/*.cu, built here by nvcc into BUILD/amdgpu-bench);
#   - with APPS_WORK=DIR (tests/gpu/apps.sh's APPS_BUILD_ONLY=1 build of the cuda-samples corpus),
#     every program built there.
# usage: tests/gpu/amdgpu_prepare.sh BUILD [CACHE]   (default CACHE: BUILD/llvm-cache)
# Without BUILD it says SKIP (run-all.sh calls every script on the GPU machine).
# Then carry BUILD (and .carry/apps-work) and run tests/gpu/amdgpu.sh on the GPU machine.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "amdgpu_prepare.sh: SKIP: build-machine step (usage: tests/gpu/amdgpu_prepare.sh BUILD [CACHE])"; exit 77; }
B=$(realpath -m "$1")
cache=${2:-$B/llvm-cache}
gp=$B/bin/gpuprobe
printf '.version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n' >"$B/amdgpu-probe.ptx"
if ! "$gp" ptx llvm --target nvptx "$B/amdgpu-probe.ptx" >/dev/null 2>&1; then
	echo "amdgpu_prepare.sh: SKIP: needs $gp with lib/libgpuprobe-amdgpu.so (a build with llvm-19-dev)"
	exit 77
fi
for t in spirv_conformance lower_gpu_inputs lower_gpu_run shim; do
	cmake --build "$B" --target $t -j2 >"$B/amdgpu-prepare-$t.log" 2>&1 || echo "amdgpu_prepare.sh: target $t failed ($B/amdgpu-prepare-$t.log)"
done
arch=${ARCH:-sm_90}
mkdir -p "$cache" "$B/amdgpu-cases" "$B/amdgpu-bench"
# the cases' PTX exactly as the harness hands it to cuModuleLoadData
"$B/bin/spirv_conformance" --dump "$B/amdgpu-cases" "$root/tests/spirv/cases" >"$B/amdgpu-cases.log" 2>&1 || true
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
for s in vadd sgemm; do
	"$nvcc" -O3 -arch=$arch -o "$B/amdgpu-bench/$s" "$root/tests/gpu/amdgpu_bench/$s.cu" || echo "amdgpu_prepare.sh: nvcc $s failed"
done
files=("$B"/amdgpu-cases/*.ptx "$B"/lower-gpu/*.ptx "$B"/amdgpu-bench/vadd "$B"/amdgpu-bench/sgemm)
if [ -n "${APPS_WORK:-}" ] && [ -d "$APPS_WORK" ]; then
	while IFS= read -r f; do files+=("$f"); done < <(find "$APPS_WORK" -type f -perm -u+x ! -name '*.sh' ! -name '*.py' | sort)
fi
"$gp" ptx llvm --target nvptx --arch "$arch" --cache "$cache" "${files[@]}" 2>"$B/amdgpu-prepare-lower.log" | tee "$B/amdgpu-prepare.txt"
echo "amdgpu_prepare.sh: $(ls "$cache" | wc -l) lowered modules in $cache ($(du -sh "$cache" | cut -f1)); not lowered: see $B/amdgpu-prepare-lower.log"
