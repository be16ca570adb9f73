#!/bin/bash
# GPUPROBE_BACKEND=hip: the shim is the driver over the HIP backend (here the stand-in
# libamdhip64 of fake_hip.c): a CUDA program's PTX module is lowered by a child `gpuprobe ptx
# amdgpu` at its first launch, loaded as a code object for the named architecture, and launched
# with the program's grid, block and arguments.
# usage: hip_shim.sh SHIM_DIR FAKE_LIBAMDHIP64 APP GPUPROBE
set -u
shimdir=$1 fake=$2 app=$3 gp=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$work/m.ptx" <<'PTX'
.version 7.0
.target sm_70
.address_size 64
.visible .entry twice(.param .u64 p)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [p];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	shl.b32 %r2, %r1, 1;
	st.global.u32 [%rd3], %r2;
	ret;
}
PTX
for arch in gfx90a gfx942 gfx1100; do
	rm -f "$work/hip.log"
	LD_LIBRARY_PATH=$shimdir GPUPROBE_BACKEND=hip GPUPROBE_HIP_LIB=$fake GPUPROBE_HIP_ARCH=$arch FAKE_HIP_VERSION=50200000 \
		GPUPROBE_AMDGPU_LOWER=$gp FAKE_HIP_LOG=$work/hip.log GPUPROBE_LOG=1 "$app" "$work/m.ptx" twice launch >"$work/out" 2>&1 ||
		fail "$arch: $(cat "$work/out")"
	grep -q "own driver: hip backend on Fake AMD GPU (LLVM 19 $arch code object v4)" "$work/out" || fail "$arch: $(cat "$work/out")"
	grep -q "hipModuleLoadData: AMDGPU code object, ABI version 2, flags 0x[0-9a-f]*, 1 kernel(s), first twice" "$work/hip.log" ||
		fail "$arch: no code object loaded: $(cat "$work/hip.log")"
	grep -q "launch twice grid 2 1 1 block 32 1 1 shared 0 first-arg 0x" "$work/hip.log" || fail "$arch: no launch: $(cat "$work/hip.log")"
	echo "ok $arch: lowered at first launch, code object v4 loaded, launched (2 x 32)"
done
LD_LIBRARY_PATH=$shimdir GPUPROBE_BACKEND=hip GPUPROBE_HIP_LIB=$work/none.so "$app" "$work/m.ptx" twice >"$work/out" 2>&1
grep -q "GPUPROBE_BACKEND=hip: no HIP runtime ($work/none.so cannot be opened" "$work/out" || fail "no runtime: $(cat "$work/out")"
echo "ok: without a HIP runtime, one line and every CUDA call fails"
