#!/bin/bash
# On the GPU (issue 18): warp-record memory traces captured in full and replayed.
#  1. patterns --divergent 65536 (tests/trace_replay/patterns.cu: coalesced, strided, random,
#     shared-memory banks, a partial warp mask) traced by replay.bpf.o (every global and shared
#     access, bpf_gpu_warp_output, lossless), once through `gpuprobe run --output` (binary
#     capture, gpuprobe decode --json; --output sizes rings to 256 KiB per SM) and once through
#     `gpuprobe run --json` (1 MiB over the SMs: 4 KiB rings that the trace overflows many times,
#     so producers wait): check.py requires exactly one record per warp access, each lane's
#     address as the program computes it, nothing lost.
#  2. cuda-samples' vectorAdd (50000 elements, 196 blocks of 256) under vectoradd.bpf.o
#     (lossless warp records of every global load and store, and the kernel's A, B, C read at
#     its entry): the sample passes, and the capture holds 3 * 1563 warp records (1562 full
#     warps and one of 16 lanes per access) covering 150000 lane accesses, all base + 4-byte
#     stride, none lost, every lane's address A + 4i, B + 4i (loads) or C + 4i (stores).
# Inputs: BUILD/trace-replay (tests/trace_replay/build.sh, run by tests/gpu/prepare.sh).
# usage: BUILD=$PWD/build-gpu tests/gpu/trace_replay.sh       Exit 77 without a GPU.
# (DIVERGENT= N=4096 with a stand-in nvidia-smi and GPUPROBE_BACKEND=opencl: the same on PoCL,
# which emulates warps only where every thread of a block reaches the site)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$root/build}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
T=$BUILD/trace-replay
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
[ -x "$T/patterns" ] || { echo "SKIP: $T/patterns missing (tests/gpu/prepare.sh BUILD)"; exit 77; }
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
GP=$BUILD/bin/gpuprobe
fail=0
log() { tee -a "$OUT/trace_replay.log"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/device: /' | log

# 1. patterns, captured (--output) and printed (--json)
N=${N:-65536}
DIVERGENT=${DIVERGENT---divergent}
rm -f "$OUT/patterns.gpt"
s=$(date +%s.%N)
timeout 300 "$GP" run --output "$OUT/patterns.gpt" -p "$T/replay.bpf.o" -- "$T/patterns" $DIVERGENT "$N" \
	>"$OUT/patterns-cap.out" 2>"$OUT/patterns-cap.err"
rc=$?
e=$(date +%s.%N)
echo "patterns --output: exit $rc, $(awk "BEGIN {printf \"%.2f\", $e - $s}") s" | log
"$GP" decode --json "$OUT/patterns.gpt" >"$OUT/patterns-cap.json" 2>"$OUT/patterns-decode.err"
if [ $rc = 0 ] && python3 "$T/check.py" "$OUT/patterns-cap.out" "$OUT/patterns-cap.json" $DIVERGENT \
	>"$OUT/check-cap.txt"; then
	sed 's/^/  /' "$OUT/check-cap.txt" | log
	echo "PASS patterns captured with --output: every warp access, exact" | log
else
	sed 's/^/  /' "$OUT/check-cap.txt" | log; tail -3 "$OUT/patterns-cap.err" | log
	echo "FAIL patterns captured with --output" | log; fail=1
fi
timeout 300 "$GP" run --json "$OUT/patterns.json" -p "$T/replay.bpf.o" -- "$T/patterns" $DIVERGENT "$N" \
	>"$OUT/patterns-json.out" 2>"$OUT/patterns-json.err"
rc=$?
if [ $rc = 0 ] && python3 "$T/check.py" "$OUT/patterns-json.out" "$OUT/patterns.json" $DIVERGENT \
	>"$OUT/check-json.txt"; then
	tail -2 "$OUT/check-json.txt" | sed 's/^/  /' | log
	echo "PASS patterns printed with --json: every warp access, exact" | log
else
	sed 's/^/  /' "$OUT/check-json.txt" | log; tail -3 "$OUT/patterns-json.err" | log
	echo "FAIL patterns printed with --json (exit $rc)" | log; fail=1
fi

# 2. cuda-samples' vectorAdd, captured in full
if [ -x "$T/vectorAdd" ]; then
	rm -f "$OUT/vectorAdd.gpt"
	(cd "$OUT" && timeout 300 "$GP" run --output "$OUT/vectorAdd.gpt" -p "$T/vectoradd.bpf.o" -- \
		"$T/vectorAdd" >"$OUT/vectorAdd.out" 2>"$OUT/vectorAdd.err")
	rc=$?
	"$GP" decode --json "$OUT/vectorAdd.gpt" >"$OUT/vectorAdd.json" 2>/dev/null
	sum=$(python3 "$T/check.py" --summary "$OUT/vectorAdd.json")
	echo "vectorAdd: exit $rc, $(grep -c 'Test PASSED' "$OUT/vectorAdd.out") 'Test PASSED'; $sum" | log
	want="SUMMARY records 4689 lane_accesses 150000 regular 4689 lost 0 malformed 0"
	exact=$(python3 "$T/check.py" --vectoradd "$OUT/vectorAdd.json")
	echo "$exact" | log
	if [ $rc = 0 ] && grep -q "Test PASSED" "$OUT/vectorAdd.out" && [[ "$sum" == "$want"* ]] &&
		[[ "$sum" == *"strides 4:4689" ]] && [[ "$exact" == PASS* ]]; then
		echo "PASS vectorAdd captured in full: 4689 warp records, 150000 lane addresses exact, 0 lost" | log
	else
		echo "FAIL vectorAdd: expected '$want ... strides 4:4689'" | log; tail -3 "$OUT/vectorAdd.err" | log; fail=1
	fi
else
	echo "SKIP vectorAdd: not built (no cuda-samples on the build machine)" | log
fi
[ $fail = 0 ] && echo "ALL PASS" | log || echo "FAILED" | log
exit $fail
