#!/bin/bash
# The AMD path's LLVM lowering executed end to end on the NVIDIA GPU (issue 15): modules are loaded
# through the shim's GPUPROBE_LLVM_CACHE mode, i.e. from the PTX that amdgpu/ (LLVM 19, target
# nvptx64) made of them, in place of the originals. Inputs come from tests/gpu/amdgpu_prepare.sh on
# the build machine (LLVM is not on the GPU machines). Parts:
#   1. conformance: tests/spirv's cases (less tests/amdgpu/not-lowered.txt) through the real driver,
#      every module loaded from LLVM's PTX (the shim's log is checked for each), every result exact;
#   2. eBPF: tests/lower's modules (313 conformance programs, the helper checks) the same way;
#   3. with APPS=1 and the corpus staged (tests/gpu/apps.sh's inputs): the cuda-samples corpus,
#      native against the shim in LLVM mode, without probes and with the entry+exit HASH counter on
#      every kernel (apps.sh APPS_CONFIGS, default "native shim a-fresh a-cached"; AMDGPU_APPS_CONFIGS),
#      outputs compared. With probes the instrumented modules are new to the cache: set
#      GPUPROBE_LLVM_LOWER to a gpuprobe that has amdgpu/ and LLVM 19 (carried) to lower them at load.
# usage: BUILD=$PWD/build tests/gpu/amdgpu.sh [CACHE]  (default CACHE: BUILD/llvm-cache; the lead carries BUILD)
# Exit 77 without a GPU or without the prepared inputs (the message says which).
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-$root/build}
cache=${1:-$B/llvm-cache}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "amdgpu.sh: SKIP: no NVIDIA GPU here"
	exit 77
fi
if [ ! -d "$cache" ] || [ -z "$(ls -A "$cache" 2>/dev/null)" ]; then
	echo "amdgpu.sh: SKIP: no lowered modules in $cache (run tests/gpu/amdgpu_prepare.sh on the build machine)"
	exit 77
fi
[ -x "$B/bin/spirv_conformance" ] && [ -e "$B/lib/libcuda.so.1" ] ||
	{ echo "amdgpu.sh: needs $B/bin/spirv_conformance and $B/lib/libcuda.so.1"; exit 2; }
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPUPROBE_BACKEND=nvidia GPUPROBE_LLVM_CACHE=$cache
rc=0

# 1. conformance cases (the harness dlopens libcuda.so.1: BUILD/lib first on LD_LIBRARY_PATH makes
#    that the shim, which finds the real driver itself)
cases=()
for c in "$root"/tests/spirv/cases/*.case; do
	n=$(basename "$c" .case)
	grep -q "^$n[[:space:]]" "$root/tests/amdgpu/not-lowered.txt" || cases+=("$c")
done
GPUPROBE_LOG=1 "$B/bin/spirv_conformance" --backend cuda "${cases[@]}" \
	>"$out/conformance.log" 2>"$out/conformance-shim.log"
r=$?
[ $r = 77 ] && { echo "amdgpu.sh: SKIP: $(head -3 "$out/conformance.log")"; exit 77; }
tail -1 "$out/conformance.log"
grep '^FAIL' "$out/conformance.log" | head -20
loaded=$(grep -c "LLVM path: loaded LLVM's PTX" "$out/conformance-shim.log")
unchanged=$(grep -c "LLVM path: .*loaded unchanged" "$out/conformance-shim.log")
echo "conformance: $loaded modules loaded from LLVM's PTX, $unchanged loaded unchanged (cases backend-restricted to opencl are skipped by the harness)"
# A module loads unchanged when the prepare step could not lower it whole (a case with a kernel
# that does not lower, isolate_kernels: the cache holds whole modules); its key must be one that
# `ptx llvm --cache` named in amdgpu_prepare.sh's log, with the reason. Any other is a failure.
unexpected=0
while read -r key; do
	why=$(grep -F "(key $key)" "$B/amdgpu-prepare-lower.log" 2>/dev/null | head -1)
	if [ -n "$why" ]; then
		echo "expected: $key loaded unchanged: ${why#gpuprobe: }"
	else
		echo "FAIL $key loaded unchanged, not named by amdgpu_prepare.sh"
		unexpected=$((unexpected + 1))
	fi
done < <(sed -n 's/.*LLVM path: no lowered module \([^ ]*\) in .*loaded unchanged.*/\1/p' "$out/conformance-shim.log")
[ $r = 0 ] && [ "$unexpected" = 0 ] && [ "$loaded" -gt 0 ] || rc=1

# 2. eBPF modules
if [ -x "$B/bin/lower_gpu_run" ]; then
	for m in conformance helpers; do
		[ -e "$B/lower-gpu/$m.ptx" ] || continue
		GPUPROBE_LOG=1 "$B/bin/lower_gpu_run" "$B/lower-gpu/$m.ptx" "$B/lower-gpu/$m.manifest" >"$out/ebpf-$m.log" 2>&1
		r=$?
		tail -1 "$out/ebpf-$m.log"
		grep -q "LLVM path: loaded LLVM's PTX" "$out/ebpf-$m.log" || { echo "FAIL ebpf $m: not loaded from LLVM's PTX"; r=1; }
		[ $r = 0 ] || { grep -m10 FAIL "$out/ebpf-$m.log"; rc=1; }
	done
else
	echo "amdgpu.sh: no $B/bin/lower_gpu_run: eBPF part skipped"
fi

# 3. the cuda-samples corpus, native against the LLVM path
if [ "${APPS:-0}" = 1 ]; then
	# shim: the LLVM path without probes; a-fresh/a-cached: the entry+exit HASH counter on every
	# kernel, each module instrumented and then lowered by LLVM (GPUPROBE_LLVM_LOWER, where the
	# cache lacks it)
	OUT=$out/apps APPS_CONFIGS="${AMDGPU_APPS_CONFIGS:-native shim a-fresh a-cached}" BUILD=$B \
		bash "$root/tests/gpu/apps.sh" >"$out/apps.log" 2>&1 || rc=1
	tail -5 "$out/apps.log"
	echo "apps: the 'shim' column is the LLVM path (GPUPROBE_LLVM_CACHE); table in $out/apps/apps.md"
	grep -h "LLVM path: .*loaded unchanged" -r "$out/apps" 2>/dev/null | sort | uniq -c | head
else
	echo "amdgpu.sh: cuda-samples corpus not run (APPS=1 with the corpus staged as tests/gpu/apps.sh wants)"
fi
[ $rc = 0 ] && echo "amdgpu.sh: PASS" || echo "amdgpu.sh: FAIL"
exit $rc
