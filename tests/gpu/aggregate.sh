#!/bin/bash
# GPU check of aggregated memory sites (ptx-frontend/instrument_merge.c: an additive memory probe
# counts a basic block's like accesses with one weighted call): the maps must be exactly those of
# a call per access (GPUPROBE_AGGREGATE=0), on the real driver.
#   - tests/e2e/aggregate/block.ptx (guarded loads, a rewritten guard, shared memory, a loop)
#     through ptx_launch, 2 blocks of 128 threads: count_dir and agg_bytes, on and off, equal to
#     the counts the file's header derives (loads 3584, stores 1024, atomics 256; bytes 17408
#     global, 2048 shared), the kernel's result as without probes;
#   - block.ptx under a basic-block counter, deferred and with GPUPROBE_DEFER=0: the same maps;
#   - app-regressions' chemv-cuda, fft-cuda and fma-cuda (`make run`, as tests/gpu/apps.sh) with
#     the corpus's memcount: PASS, the same maps on and off, and whole-run wall times (native,
#     off, on; each run after one untimed run of the same configuration, so the caches are warm:
#     "cached").
# usage: BUILD=$PWD/build-gpu [CORPORA=$PWD/.carry/corpora] [AGG_PROGRAMS="chemv-cuda ..."] tests/gpu/aggregate.sh
#   (tests/gpu/prepare.sh and tests/e2e/build.sh BUILD first; exit 77 without a GPU)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$root/build-gpu} CORPORA=${CORPORA:-$root/.carry/corpora}
GP=$BUILD/bin/gpuprobe E=$BUILD/e2e
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
[ -x "$GP" ] && [ -x "$E/ptx_launch" ] || { echo "SKIP: no $GP or $E/ptx_launch (tests/e2e/build.sh)"; exit 77; }
W=${AGG_WORK:-$(mktemp -d)}
mkdir -p "$W/rt" && chmod 700 "$W/rt" && export XDG_RUNTIME_DIR=$W/rt
# gpuprobe finds libbpf in BUILD/lib (the GPU machine has none); the apps run natively without it
GPR="env LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} $GP"
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fail=1; fi; }
maps() { grep -E '^@' "$1" | sort; }
B=$E/aggregate_block.ptx
"$E/ptx_launch" "$B" agg 2 128 3840 >"$W/plain.out" 2>&1
for p in count_dir agg_bytes; do
	for a in 1 0; do
		GPUPROBE_AGGREGATE=$a $GPR run -p "$E/$p.bpf.o" -- "$E/ptx_launch" "$B" agg 2 128 3840 \
			>"$W/$p.$a.out" 2>"$W/$p.$a.err"
		check "block.ptx, $p, GPUPROBE_AGGREGATE=$a: the kernel's result as without probes" \
			"$(cat "$W/plain.out")" "$(cat "$W/$p.$a.out")"
	done
	check "block.ptx, $p: the same maps on and off" "$(maps "$W/$p.0.err")" "$(maps "$W/$p.1.err")"
done
check "block.ptx, count_dir: loads, stores, atomics" "@by_dir[1]: 3584
@by_dir[2]: 1024
@by_dir[3]: 256" "$(maps "$W/count_dir.1.err")"
check "block.ptx, agg_bytes: global and shared bytes" "@bytes[1]: 17408
@bytes[2]: 2048" "$(maps "$W/agg_bytes.1.err")"
# Deferred sites (GPUPROBE_DEFER, default on: an additive probe's sites add to per-thread
# accumulators, each thread calls it once per class where it leaves) against a call per site:
# the memory counters above ran deferred; a basic-block counter here, on and off.
if [ -f "$E/bb_count.bpf.o" ]; then
	for d in 1 0; do
		GPUPROBE_DEFER=$d $GPR run -p "$E/bb_count.bpf.o" -- "$E/ptx_launch" "$B" agg 2 128 3840 \
			>"$W/bb.$d.out" 2>"$W/bb.$d.err"
		check "block.ptx, bb_count, GPUPROBE_DEFER=$d: the kernel's result as without probes" \
			"$(cat "$W/plain.out")" "$(cat "$W/bb.$d.out")"
	done
	check "block.ptx, bb_count: the same maps deferred and with a call per block" "$(maps "$W/bb.0.err")" "$(maps "$W/bb.1.err")"
	[ -n "$(maps "$W/bb.1.err")" ] || { echo "FAIL block.ptx, bb_count: no maps"; fail=1; }
fi
if [ ! -f "$CORPORA/probes/memcount.bpf.o" ]; then
	echo "SKIP (programs): no $CORPORA/probes/memcount.bpf.o (tests/gpu/stage_corpora.sh)"
	exit $fail
fi
timed() {   # OUT ERR command...: run it, print its wall seconds
	local out=$1 err=$2 t0 t1
	shift 2
	t0=$(date +%s.%N)
	"$@" >"$out" 2>"$err"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
printf '| program | native | memcount, a call per access | aggregated | maps equal |\n|---|---|---|---|---|\n' >"$W/table.md"
for prog in ${AGG_PROGRAMS:-chemv-cuda fft-cuda fma-cuda}; do
	d=$W/$prog
	rm -rf "$d" && cp -r "$CORPORA/app-regressions/$prog" "$d" && make -s -C "$d" ARCH=sm_90 >"$d.build" 2>&1 ||
		{ echo "FAIL $prog: build (see $d.build)"; fail=1; continue; }
	declare -A T=()
	for c in native 0 1; do
		if [ $c = native ]; then l=; else
			l="env GPUPROBE_AGGREGATE=$c $GPR run -p $CORPORA/probes/memcount.bpf.o --"; fi
		make -s -C "$d" run LAUNCHER="$l" >/dev/null 2>&1   # untimed: fills the caches
		T[$c]=$(timed "$d.$c.out" "$d.$c.err" make -s -C "$d" run LAUNCHER="$l")
		grep -q PASS "$d.$c.out" && ! grep -q FAIL "$d.$c.out"
		check "$prog ($c): PASS" 0 $?
	done
	check "$prog: the same memcount maps on and off" "$(maps "$d.0.err")" "$(maps "$d.1.err")"
	eq=$([ "$(maps "$d.0.err")" = "$(maps "$d.1.err")" ] && echo yes || echo NO)
	awk -v p="$prog" -v n="${T[native]}" -v o="${T[0]}" -v g="${T[1]}" -v e="$eq" 'BEGIN {
		printf "| %s | %.2f s | %.2f s (%.2fx) | %.2f s (%.2fx) | %s |\n", p, n, o, o / n, g, g / n, e }' >>"$W/table.md"
done
cat "$W/table.md"
[ $fail = 0 ] && echo "PASS aggregate (logs in $W)" || echo "FAIL aggregate (logs in $W)"
exit $fail
