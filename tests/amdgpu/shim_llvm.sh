#!/bin/bash
# The shim's LLVM path (GPUPROBE_LLVM_CACHE) over the fake driver: a module whose LLVM-lowered
# form is in the cache is loaded from it; one that is not is loaded unchanged with one line saying
# so; with GPUPROBE_LLVM_LOWER the shim has gpuprobe lower it at load time, in a child process;
# with probes (PROBE.bpf.o given), the instrumented module is what LLVM lowers.
# usage: shim_llvm.sh SHIM_DIR FAKE_DRIVER APP GPUPROBE [PROBE.bpf.o]
set -u
shimdir=$1 fake=$2 app=$3 gp=$4 probe=${5:-}
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
run() { LD_LIBRARY_PATH=$shimdir GPUPROBE_REAL_LIBCUDA=$fake GPUPROBE_LOG=1 "$app" "$work/m.ptx" twice >"$work/out" 2>&1; }

GPUPROBE_LLVM_CACHE=$work/cache run || fail "empty cache: $(cat "$work/out")"
grep -q "module 1: LLVM path: no lowered module [0-9a-f]*-[0-9]*.ptx in $work/cache (fill it with" "$work/out" ||
	fail "no 'loaded unchanged' line: $(cat "$work/out")"
echo "ok: a module missing from the cache is loaded unchanged, said once"

"$gp" ptx llvm --target nvptx --arch sm_90 --cache "$work/cache" "$work/m.ptx" >/dev/null || fail "filling the cache"
GPUPROBE_LLVM_CACHE=$work/cache run || fail "cached: $(cat "$work/out")"
grep -q "module 1: LLVM path: loaded LLVM's PTX [0-9a-f]*-[0-9]*.ptx" "$work/out" || fail "not loaded from the cache: $(cat "$work/out")"
grep -q "kernel twice found" "$work/out" || fail "kernel not found: $(cat "$work/out")"
echo "ok: the cached LLVM PTX is loaded in place of the original"

rm -rf "$work/cache2"
GPUPROBE_LLVM_CACHE=$work/cache2 GPUPROBE_LLVM_LOWER=$gp run || fail "lower at load: $(cat "$work/out")"
grep -q "module 1: LLVM path: loaded LLVM's PTX" "$work/out" || fail "not lowered at load time: $(cat "$work/out")"
[ "$(ls "$work/cache2" | wc -l)" = 1 ] || fail "the cache holds $(ls "$work/cache2" | wc -l) files"
grep -q '^.target sm_[0-9]*' "$work/cache2"/*.ptx || fail "no PTX in the cache"
echo "ok: with GPUPROBE_LLVM_LOWER the shim lowers at load time (child process) and caches"

# with probes: the module is instrumented first (whole, at load), then LLVM lowers the instrumented
# PTX (the AMD path's order), under the instrumented text's key
if [ -n "$probe" ]; then
	rm -rf "$work/cache3"
	GPUPROBE_PROBES=$probe GPUPROBE_LLVM_CACHE=$work/cache3 GPUPROBE_LLVM_LOWER=$gp run ||
		fail "probes + lower at load: $(cat "$work/out")"
	grep -q "module 1: instrumented (1 probe sites in 1 functions)" "$work/out" || fail "not instrumented: $(cat "$work/out")"
	grep -q "module 1: LLVM path: loaded LLVM's PTX" "$work/out" || fail "instrumented PTX not lowered: $(cat "$work/out")"
	grep -q "each instrumented at its first launch" "$work/out" && fail "per-kernel instrumentation in the LLVM mode: $(cat "$work/out")"
	[ "$(ls "$work/cache3" | wc -l)" = 1 ] || fail "the probe cache holds $(ls "$work/cache3" | wc -l) files"
	cmp -s "$work/cache2"/*.ptx "$work/cache3"/*.ptx && fail "the lowered module with probes is the one without"
	grep -q 'atom.global' "$work/cache3"/*.ptx || fail "no atomic of the probe's HASH counter in LLVM's PTX"
	grep -q "kernel twice found" "$work/out" || fail "kernel not found with probes: $(cat "$work/out")"
	echo "ok: with probes, LLVM lowers the instrumented module (the probe's atomics in its PTX)"
fi

# a module LLVM cannot lower: one line, the original is loaded
sed -i 's/\tshl.b32 %r2, %r1, 1;/\ttex.1d.v4.u32.s32 {%r2, %r2, %r2, %r2}, [t, {%r1}];/' "$work/m.ptx"
GPUPROBE_LLVM_CACHE=$work/cache2 GPUPROBE_LLVM_LOWER=$gp run
grep -q "module 1: LLVM path: no lowered module" "$work/out" || fail "no line for a module that does not lower: $(cat "$work/out")"
echo "ok: a module that does not lower is loaded as given, with its reason"
