#!/usr/bin/env bash
# bpftime's map types 1501, 1503, 1504, 1512 and 1513 the way bpftime's CUDA examples use them
# (this folder's probes: same sections, map definitions and helper calls, our own text), without
# a GPU:
#   1. each probe builds (clang -target bpf, examples/vmlinux_min.h as vmlinux.h,
#      -D__TARGET_ARCH_x86, as bpftime's Makefiles build theirs) and `gpuprobe verify` passes
#      every program;
#   2. `gpuprobe ptx instrument` splices it into nvcc's PTX of examples/apps/vec_add.cu and
#      ptxas -arch=sm_90 compiles the result (kprobe/__memcapture: at every load and store);
#   3. `gpuprobe run` runs vec_add 8 (8 blocks of 32 threads) on gpuprobe's own driver over PoCL
#      (GPUPROBE_BACKEND=opencl) and the maps hold exactly what the geometry says;
#   4. malformed uses (hostile.bpf.c) fail with one clear line each.
# usage: run.sh GPUPROBE REPO WORK_DIR   (CLANG, NVCC, PTXAS override the tools). Exit 77 (skip)
# without clang or nvcc; step 3 is skipped (and said so) without an OpenCL device.
set -uo pipefail
g=$1 repo=$2 work=$3
here=$repo/tests/maps/bpftime
clang=${CLANG:-$(command -v clang || true)}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
ptxas=${PTXAS:-$(dirname "$nvcc")/ptxas}
[ -n "$clang" ] || { echo "SKIP: no clang"; exit 77; }
[ -x "$nvcc" ] && [ -x "$ptxas" ] || { echo "SKIP: no nvcc/ptxas at $(dirname "$nvcc")"; exit 77; }
rm -rf "$work" && mkdir -p "$work/vmlinux" "$work/rt" && chmod 700 "$work/rt" || exit 1
export XDG_RUNTIME_DIR=$work/rt
cp "$repo/examples/vmlinux_min.h" "$work/vmlinux/vmlinux.h"
fails=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fails=$((fails + 1)); fi; }
bpf() { "$clang" -target bpf -O2 -g -D__TARGET_ARCH_x86 -I/usr/include/x86_64-linux-gnu -I"$work/vmlinux" "$@"; }
. "$here/checks.sh"

probes="gpu_array gpu_hash host_maps kernel_shared special_sections"
# 1. build and verify: every program OK
declare -A nprogs=([gpu_array]=2 [gpu_hash]=2 [host_maps]=2 [kernel_shared]=4 [special_sections]=2)
for p in $probes; do
	bpf -c "$here/$p.bpf.c" -o "$work/$p.bpf.o" || { echo "FAIL $p: does not build"; fails=$((fails + 1)); continue; }
	"$g" verify "$work/$p.bpf.o" >"$work/$p.verify" 2>&1
	check "$p: verify exit 0" 0 $?
	check "$p: every program verifies" "${nprogs[$p]}" "$(grep -c '): OK, ' "$work/$p.verify")"
done

# 2. instrument nvcc's PTX, ptxas sm_90
"$nvcc" -arch=sm_90 -ptx -o "$work/vec_add.ptx" "$repo/examples/apps/vec_add.cu" || { echo "FAIL: nvcc -ptx"; exit 1; }
for p in gpu_array gpu_hash host_maps kernel_shared special_sections; do
	"$g" ptx instrument -p "$work/$p.bpf.o" --sms 4 -o "$work/$p.ptx" "$work/vec_add.ptx" 2>"$work/$p.ierr"
	check "$p: ptx instrument exit 0" 0 $?
	# entry and exit of vectorAdd; __memcapture: its 2 loads and store, oddEven's load and store
	sites="2 probe sites in 1 functions"
	[ $p = special_sections ] && sites="5 probe sites in 2 functions"
	check "$p: its sites" "gpuprobe: $work/vec_add.ptx: $sites" "$(grep 'probe sites' "$work/$p.ierr")"
	"$ptxas" -arch=sm_90 -o "$work/$p.cubin" "$work/$p.ptx" 2>"$work/$p.ptxas"
	check "$p: ptxas -arch=sm_90" 0 $?
done

# 4. malformed objects: one line each, exit 2 (bad usage or file), no crash
expect_bad() {   # case, command (verify or instrument), line
	bpf -DCASE="$1" -c "$here/hostile.bpf.c" -o "$work/hostile$1.bpf.o" || { echo "FAIL hostile $1: does not build"; fails=$((fails + 1)); return; }
	if [ "$2" = verify ]; then
		"$g" verify "$work/hostile$1.bpf.o" >"$work/hostile$1.out" 2>&1
	else
		"$g" ptx instrument -p "$work/hostile$1.bpf.o" -o "$work/hostile$1.ptx" "$work/vec_add.ptx" >"$work/hostile$1.out" 2>&1
	fi
	local rc=$?
	check "hostile $1: exit 2" 2 $rc
	check "hostile $1: one line" "$3" "$(cat "$work/hostile$1.out")"
}
expect_bad 1 verify "gpuprobe: $work/hostile1.bpf.o: map 'm': map_flags 0x1 has bits 0x1 that bpftime's type 1503 does not take (it takes 0x59c: BPF_F_MMAPABLE, BPF_F_NUMA_NODE, BPF_F_RDONLY/WRONLY[_PROG])"
expect_bad 2 verify "gpuprobe: $work/hostile2.bpf.o: map 'm': map_flags 0x100000 has bits 0x100000 that bpftime's type 1504 does not take (it takes 0x59c: BPF_F_MMAPABLE, BPF_F_NUMA_NODE, BPF_F_RDONLY/WRONLY[_PROG])"
expect_bad 3 instrument "gpuprobe: $work/hostile3.bpf.o: maps: map 'm': bpftime gpu array key size must be 4, not 8"
expect_bad 4 instrument "gpuprobe: $work/hostile4.bpf.o: maps: map 'm': needs 8796093022208 bytes, more than the 17179869184 allowed"
expect_bad 5 instrument "gpuprobe: $work/hostile5.bpf.o: maps: map 'm': max_entries 4294967295 is too large"
expect_bad 6 instrument "gpuprobe: $work/hostile6.bpf.o: maps: map 'm': value size 2097152 is not in 1..1048576"

# 3. run on the own driver over PoCL, counts exact
if command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q .; then
	echo "SKIP (step 3): no OpenCL device"
else
	"$nvcc" -arch=sm_90 -o "$work/vec_add" "$repo/examples/apps/vec_add.cu" || { echo "FAIL: nvcc"; exit 1; }
	run() { GPUPROBE_TOP=1000 GPUPROBE_BACKEND=opencl timeout 600 "$g" run -p "$work/$1.bpf.o" -- "$work/vec_add" 8 >"$work/$1.out" 2>"$work/$1.err"; }
	GPUPROBE_BACKEND=opencl timeout 600 "$g" run -- "$work/vec_add" 8 >"$work/plain.out" 2>"$work/plain.err"
	if [ $? != 0 ] || ! grep -q '^vec_add: ' "$work/plain.out"; then
		echo "SKIP (step 3): vec_add does not run on the own driver here: $(tail -2 "$work/plain.err")"
	else
		for p in gpu_array gpu_hash host_maps kernel_shared special_sections; do
			run $p; echo $? >"$work/$p.rc"
		done
		bpftime_maps_check "$work"
	fi
fi
[ $fails = 0 ] && echo "all passed" || echo "$fails failed (logs in $work)"
[ $fails = 0 ]
