#!/bin/bash
# CI (no GPU): the lanes that enter a probe site leave it together when the probe can branch.
# fft-cuda with an entry probe counting into a HASH map computed one block of wrong results per
# key inserted (H100, 2026-11-25): the inserting lane ran the long insert path while the other
# lanes of its warp went on to the application's first __syncthreads; bar.sync is aligned, so
# those lanes marked the whole warp as arrived and the block's other warp read shared memory
# the inserting lane had not yet written. Since then a site of a probe that branches is
#   activemask.b32 %__gp_wm ... probe ... bar.warp.sync %__gp_wm
# directly before the application's next instruction, inlined or out of line; a straight-line
# probe (all_mem: one red.add per access) gets neither (ptxas failed with C7600 on CUB's onesweep
# kernel given a bar.warp.sync after each of 360 out-of-line calls). tests/gpu/reconverge.sh
# runs the kernel (tests/e2e/apps/transpose.cu) on the GPU.
# usage: reconverge_test.sh GPUPROBE SRC_DIR WORK_DIR
set -u
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
for p in block_insert all_mem; do
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
		-c "$SRC/tests/e2e/probes/$p.bpf.c" -o "$W/$p.bpf.o" || exit 2
done
# The entry+exit HASH counter (two sites that branch in every kernel).
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
	-c "$SRC/tests/gpu/first_kernel/entry_exit.bpf.c" -o "$W/entry_exit_hash.bpf.o" || exit 2
# A block-begin probe that branches (a ring reservation), run by thread 0 only: the split
# around it is reconverged too (fft-cuda computed wrong blocks under it, H100 2026-11-25).
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
	-c "$SRC/tests/gpu/apps_probes/block_ring.bpf.c" -o "$W/block_ring.bpf.o" || exit 2
"$NVCC" -arch=sm_90 -ptx "$SRC/tests/e2e/apps/transpose.cu" -o "$W/transpose.ptx" || exit 2
body() { awk '/\.entry _Z16transpose_blocks/ {f=1} f {print} f && /^}/ {exit}' "$1"; }
# The first application instruction of the kernel (its first ld.param) and what comes right
# before it; the capture before the probe's first instruction.
before_app() { body "$1" | sed 's/^[[:space:]]*//' | grep -v '^$' | grep -B1 -m1 '^ld\.param.*_param_[0-9]' | head -1; }
for mode in inline call; do
	[ $mode = call ] && export GPUPROBE_INLINE=0 || unset GPUPROBE_INLINE
	"$GP" ptx instrument -p "$W/block_insert.bpf.o" "$W/transpose.ptx" -o "$W/hash_$mode.ptx" 2>"$W/hash_$mode.err"
	check "$mode: instrumented" 0 $?
	check "$mode: the entry site ends with bar.warp.sync of the captured mask" \
		"bar.warp.sync %__gp_wm;" "$(before_app "$W/hash_$mode.ptx" | tr -s ' \t' ' ')"
	check "$mode: one capture of the mask" 1 "$(body "$W/hash_$mode.ptx" | grep -c 'activemask\.b32[[:space:]]*%__gp_wm')"
	"$PTXAS" -arch=sm_90 "$W/hash_$mode.ptx" -o "$W/hash_$mode.cubin"
	check "$mode: ptxas sm_90" 0 $?
	"$GP" ptx instrument -p "$W/all_mem.bpf.o" "$W/transpose.ptx" -o "$W/mem_$mode.ptx" 2>"$W/mem_$mode.err"
	check "$mode: straight-line probe: no capture, no reconvergence" "0 0" \
		"$(body "$W/mem_$mode.ptx" | grep -c 'activemask\.b32[[:space:]]*%__gp_wm') $(body "$W/mem_$mode.ptx" | grep -c 'bar\.warp\.sync')"
	"$GP" ptx instrument -p "$W/block_ring.bpf.o" "$W/transpose.ptx" -o "$W/ring_$mode.ptx" 2>"$W/ring_$mode.err"
	check "$mode: block begin: the lanes around thread 0's call meet before the application" \
		"bar.warp.sync %__gp_wo;" "$(before_app "$W/ring_$mode.ptx" | tr -s ' \t' ' ')"
	check "$mode: block begin: captured before thread 0's branch" 1 \
		"$(body "$W/ring_$mode.ptx" | grep -c 'activemask\.b32[[:space:]]*%__gp_wo')"
	"$PTXAS" -arch=sm_90 "$W/ring_$mode.ptx" -o "$W/ring_$mode.cubin"
	check "$mode: block begin: ptxas sm_90" 0 $?
done
# Entry and exit sites that branch (a HASH counter) in a kernel with an early return: the entry
# site ends in bar.warp.sync, the exit site right before the kernel's ret does not (no
# application instruction follows it; with it, ptxas made the entry's sync a BRA.DIV +
# WARPSYNC.COLLECTIVE, under which cdpAdvancedQuicksort's warps came apart on an H200).
"$NVCC" -arch=sm_90 -ptx "$SRC/tests/e2e/apps/warp_whole.cu" -o "$W/warp_whole.ptx" || exit 2
unset GPUPROBE_INLINE
"$GP" ptx instrument -p "$W/entry_exit_hash.bpf.o" "$W/warp_whole.ptx" -o "$W/ww.ptx" 2>"$W/ww.err"
check "entry+exit: instrumented" 0 $?
wbody() { awk '/\.entry _Z7scatter/ {f=1} f {print} f && /^}/ {exit}' "$1" | sed 's/^[[:space:]]*//' | grep -v '^$'; }
check "entry+exit: captures of the mask (one per site)" 2 "$(wbody "$W/ww.ptx" | grep -c 'activemask\.b32[[:space:]]*%__gp_wm')"
check "entry+exit: one bar.warp.sync, the entry site's" 1 "$(wbody "$W/ww.ptx" | grep -c 'bar\.warp\.sync')"
check "entry+exit: the exit site's last instruction is no sync" 0 "$(wbody "$W/ww.ptx" | grep -B1 -m1 '^ret;' | head -1 | grep -c 'bar\.warp')"
"$PTXAS" -arch=sm_90 "$W/ww.ptx" -o "$W/ww.cubin"
check "entry+exit: ptxas sm_90" 0 $?
exit $fail
