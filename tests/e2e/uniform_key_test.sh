#!/bin/bash
# CI (no GPU): a counter keyed by a site-constant context field adds through a warp-uniform
# address. The corpus's memory counter (`k = ctx->dir & 3; v = lookup(&by_dir, &k); atomic add`)
# grouped the lanes of every access with a match.any.sync before its atomic: chemv-cuda ran 4.8x
# native on the H100 (2026-11-25). The direction is the same in every lane at a site, so the
# element's address is too (base + this SM's shard + key * stride): a plain red, which ptxas
# aggregates per warp itself. A key that differs per lane (the lane id) keeps the grouping, as
# exact counting needs it. The null test of a warp-uniform element cannot split a warp: it is a
# bra.uni, and the site needs no activemask/bar.warp.sync bracket (instrument_reconverge.c).
# usage: uniform_key_test.sh GPUPROBE SRC_DIR WORK_DIR
set -u
# The per-site call shape (GPUPROBE_DEFER=0): deferred sites (ptx-frontend/instrument.h) have
# their own checks in tests/e2e/aggregate_test.sh and tests/own_driver/probes.sh.
export GPUPROBE_DEFER=0
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
probe() {   # name, key expression
	cat >"$W/$1.bpf.c" <<C
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 32); __type(key, __u32); __type(value, __u64); } counts SEC(".maps");
GPU_MEM("all", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	__u32 k = $2;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
C
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" -c "$W/$1.bpf.c" -o "$W/$1.bpf.o" || exit 2
}
probe by_dir 'ctx->dir & 3'
probe by_space_dir '(ctx->space * 4 + ctx->dir) & 31'
probe by_lane 'ctx->thread.lane_id'
probe by_dir_wide 'ctx->dir & 63'
"$NVCC" -arch=sm_90 -ptx "$SRC/tests/e2e/apps/transpose.cu" -o "$W/transpose.ptx" || exit 2
for p in by_dir by_space_dir by_lane by_dir_wide; do
	"$GP" ptx instrument --sms 132 -p "$W/$p.bpf.o" "$W/transpose.ptx" -o "$W/$p.ptx" 2>"$W/$p.err"
	check "$p: instrumented" 0 $?
	sites=$(grep -o '[0-9]* probe sites' "$W/$p.err" | grep -o '^[0-9]*')
	eval "${p}_sites=\${sites:-0} ${p}_match=$(grep -c 'match\.any\.sync' "$W/$p.ptx") ${p}_red=$(grep -c 'red\.global\.add' "$W/$p.ptx") ${p}_sync=$(grep -c 'bar\.warp\.sync' "$W/$p.ptx") ${p}_bound=$(grep -cE 'selp\.b64 .*gpm_p;' "$W/$p.ptx")"
	"$PTXAS" -arch=sm_90 "$W/$p.ptx" -o "$W/$p.cubin"
	check "$p: ptxas sm_90" 0 $?
done
[ "${by_dir_sites:-0}" -gt 0 ] || { echo "FAIL no probe sites"; fail=1; }
check "by_dir: no lane grouping" 0 "$by_dir_match"
# The probes are additive: each call counts its basic block's like sites (weighted,
# ptx-frontend/instrument_merge.c), and "sites" are calls. A weighted constant add is two reds
# under complementary predicates (weight 1, weight w: ebpf/lower_mem.c weighted_add), of which
# ptxas keeps one once the weight is the site's immediate.
check "by_dir: one red per call, two forms" "$((2 * by_dir_sites))" "$by_dir_red"
check "by_dir: no reconvergence (the null test is bra.uni)" 0 "$by_dir_sync"
check "by_space_dir: no lane grouping" 0 "$by_space_dir_match"
# lanes grouped by address and by the weighted value
check "by_lane: lanes grouped at every call" "$((2 * by_lane_sites))" "$by_lane_match"
check "by_lane: every site reconverges" "$by_lane_sites" "$by_lane_sync"
# A key known to be below max_entries (32) needs no bounds test and no null test: `& 3` and
# `& 31` bound it; a lane id (any u32) or `& 63` do not.
check "by_dir: no bounds test" 0 "$by_dir_bound"
check "by_space_dir: no bounds test" 0 "$by_space_dir_bound"
check "by_lane: a bounds test per site" "$by_lane_sites" "$by_lane_bound"
check "by_dir_wide: a bounds test per site" "$by_dir_wide_sites" "$by_dir_wide_bound"
exit $fail
