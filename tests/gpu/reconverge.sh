#!/bin/bash
# GPU test: a probe that branches never changes an application's results by leaving a warp
# split (tests/e2e/reconverge_test.sh has the why). tests/e2e/apps/transpose.cu moves values
# through shared memory between __syncthreads in blocks of two warps; block_insert.bpf.c inserts
# each block's key into a HASH map from one lane at kernel entry (the fft-cuda failure: one block
# of 512 wrong values per key inserted, before the fix). Checks:
#   native               transpose: PASS
#   probe (inlined, and GPUPROBE_INLINE=0 out of line)  PASS, and per_block counts 3*64 for
#                        every block (3 rounds of 64 threads) in the JSON output
#   warp_whole           PASS natively and under an entry+exit HASH probe, inlined and out of
#                        line (a kernel that needs each warp whole at its first __activemask)
#   fft (when CORPORA has app-regressions/fft-cuda): FFT PASS and iFFT PASS under the
#                        entry+exit HASH probe (CORPORA/probes/entry_exit_hash.bpf.o)
# usage: tests/gpu/reconverge.sh   (BUILD=<build dir> with bin/gpuprobe, lib/, e2e/transpose and
# e2e/block_insert.bpf.o from tests/e2e/build.sh). Logs under $OUT; exit 77 without a GPU.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$root/build}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
GP=$BUILD/bin/gpuprobe E=$BUILD/e2e
for f in "$GP" "$E/transpose" "$E/block_insert.bpf.o"; do
	[ -e "$f" ] || { echo "reconverge.sh: $f missing (tests/gpu/prepare.sh BUILD)"; exit 2; }
done
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"; exit 77; }
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
"$E/transpose" >"$OUT/native.out" 2>&1
check "native" "transpose: PASS" "$(tail -1 "$OUT/native.out")"
for mode in inline call; do
	[ $mode = call ] && export GPUPROBE_INLINE=0 || unset GPUPROBE_INLINE
	rm -f "$OUT/$mode.json"
	GPUPROBE_TOP=100000 "$GP" run --json "$OUT/$mode.json" -p "$E/block_insert.bpf.o" -- "$E/transpose" >"$OUT/$mode.out" 2>"$OUT/$mode.err"
	check "$mode: probe" "transpose: PASS" "$(grep '^transpose: [PF]' "$OUT/$mode.out" | tail -1)"
	# every block's key counted 3 rounds x 64 threads (the JSON's map entries of per_block)
	counts=$(python3 - "$OUT/$mode.json" <<'PY'
import json, sys, collections
last = None   # the last snapshot of per_block: {"type":"map","name":"per_block","data":{key: value}}
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except ValueError: continue
    if r.get("type") == "map" and r.get("name") == "per_block": last = r.get("data", {})
vals = collections.Counter((last or {}).values())
print(" ".join(f"{k}x{v}" for k, v in sorted(vals.items(), key=str)))
PY
)
	check "$mode: per_block values (value x keys)" "192x4096" "$counts"
done
unset GPUPROBE_INLINE
# A kernel that needs each warp whole at its first __activemask() (warp_whole.cu, the pattern of
# cuda-samples' cdpAdvancedQuicksort), under entry and exit sites that branch (a HASH counter):
# ptxas turns the two sites' bar.warp.sync into BRA.DIV + WARPSYNC.COLLECTIVE, which does not
# promise the warp whole afterwards (tests/gpu/logs/session13-h200-cdp-diag/README.md).
if [ -x "$E/warp_whole" ] && [ -e "$E/entry_exit_hash.bpf.o" ]; then
	"$E/warp_whole" >"$OUT/warp_whole-native.out" 2>&1
	check "warp_whole native" "warp_whole: PASS" "$(tail -1 "$OUT/warp_whole-native.out")"
	for mode in inline call; do
		[ $mode = call ] && export GPUPROBE_INLINE=0 || unset GPUPROBE_INLINE
		"$GP" run -p "$E/entry_exit_hash.bpf.o" -- "$E/warp_whole" >"$OUT/warp_whole-$mode.out" 2>&1
		check "warp_whole under entry+exit HASH ($mode)" "warp_whole: PASS" "$(grep '^warp_whole: ' "$OUT/warp_whole-$mode.out" | tail -1)"
	done
	unset GPUPROBE_INLINE
else
	echo "note: $E/warp_whole or $E/entry_exit_hash.bpf.o missing (tests/e2e/build.sh): warp_whole not run"
fi
C=${CORPORA:-$root/.carry/corpora}
if [ -d "$C/app-regressions/fft-cuda" ] && [ -e "$C/probes/entry_exit_hash.bpf.o" ]; then
	rm -rf "$OUT/fft" && cp -r "$C/app-regressions/fft-cuda" "$OUT/fft"
	make -C "$OUT/fft" ARCH=sm_90 >"$OUT/fft-build.log" 2>&1
	(cd "$OUT/fft" && "$GP" run -p "$C/probes/entry_exit_hash.bpf.o" -- ./main 1 10) >"$OUT/fft.out" 2>&1
	check "fft-cuda under entry_exit_hash" "FFT PASS iFFT PASS" "$(grep -oE '^i?FFT (PASS|FAIL)' "$OUT/fft.out" | tr '\n' ' ' | sed 's/ $//')"
else
	echo "note: no $C/app-regressions/fft-cuda (tests/gpu/stage_corpora.sh): fft-cuda not run"
fi
exit $fail
