#!/bin/bash
# Every built-in tool (gpuprobe run -t, docs/tools.md) on the GPU, on programs whose geometry
# makes the counts computable, checked exactly; invariants between tools where the counts depend
# on the PTX nvcc wrote.
#   examples/apps/vec_add G (G = 4 and 8): vectorAdd<<<G, 32>>> (c[i] = a[i] + b[i]), then
#     oddEven<<<G, 32>>> (odd lanes loop, even lanes multiply: divergent), one launch each.
#     kcount, launches: 1 launch, G blocks, 32G threads per kernel; launches: 2 calls in all,
#     every launch in [32, 64) threads per block. memcount: vectorAdd 64G loads, 32G stores;
#     oddEven 32G loads, 32G stores; no atomics. memtrace -k vectorAdd: 96G records, none lost.
#     ktime: 1 launch each, time > 0. bbcount + opcodes + divergence in one run: per kernel the
#     classes add up to @instructions, @active_lanes = @basic_blocks (thread-level entries are
#     the lanes of warp-level ones); vectorAdd: every warp full (full = warp_blocks, lanes =
#     32 x warp_blocks), op_fp32 = op_store = 32G, and its counts at G = 8 twice those at G = 4;
#     oddEven: some warp executions partial.
#   cuda-samples vectorAdd (50000 elements, 196 blocks of 256): kcount and launches 1 / 196 /
#     50176; memcount 100000 loads, 50000 stores (the threads in range); memtrace -k vectorAdd
#     150000 records; ktime 1 launch; bbcount/opcodes/divergence invariants as above.
#   cuda-samples matrixMul (MatrixMulCUDA<32>, grid 20 x 10 of 32 x 32, a warm-up + 300
#     launches): kcount, launches and ktime 301 launches, 60200 blocks, 61644800 threads.
# Each run's stdout and stderr are kept under $OUT/tools/. The samples are built with nvcc into
# $BUILD/gpu-tools-samples from CORPORA (default .carry/corpora, else /work/shared/corpora:
# tests/gpu/stage_corpora.sh); without them those checks say SKIP. TOOLS_BUILD_ONLY=1: build the
# samples and stop (on the build machine; carry BUILD).
# Needs BUILD (tests/gpu/prepare.sh: bin/gpuprobe, lib/gpuprobe-tools, examples/vec_add).
# usage: BUILD=$PWD/build-gpu tests/gpu/tools.sh   (exit 77 without a GPU)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then
	for b in "$root/build" "$root"/build-*; do
		[ -x "$b/bin/gpuprobe" ] && [ -d "$b/lib/gpuprobe-tools" ] && { BUILD=$b; break; }
	done
fi
BUILD=${BUILD:-$root/build}
OUT=${OUT:-$(mktemp -d)}
L=$OUT/tools
mkdir -p "$L"
GP=$BUILD/bin/gpuprobe
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
S=$BUILD/gpu-tools-samples
CORPORA=${CORPORA:-$root/.carry/corpora}
[ -d "$CORPORA/cuda-samples" ] || CORPORA=/work/shared/corpora

# the two samples, built once (a build machine may do it: TOOLS_BUILD_ONLY=1)
build_samples() {
	local c=$CORPORA/cuda-samples
	[ -d "$c/samples" ] && [ -x "$NVCC" ] || return 0
	mkdir -p "$S"
	for n in vectorAdd matrixMul; do
		[ -x "$S/$n" ] && continue
		"$NVCC" -O2 -std=c++17 -arch=sm_90 -I"$c/Common" "$c/samples/$n/$n.cu" -o "$S/$n" \
			>"$S/$n.build.log" 2>&1 || echo "tools.sh: nvcc $n failed (see $S/$n.build.log)"
	done
}
build_samples
if [ "${TOOLS_BUILD_ONLY:-0}" = 1 ]; then
	ls -l "$S" 2>/dev/null
	exit 0
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
if [ ! -x "$GP" ] || [ ! -d "$BUILD/lib/gpuprobe-tools" ]; then
	echo "FAIL: no $GP or $BUILD/lib/gpuprobe-tools (tests/gpu/prepare.sh BUILD)"
	exit 1
fi
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GPUPROBE_CACHE_DIR=$L/cache GPUPROBE_TOP=1000
unset GPUPROBE_CONFIG GPUPROBE_PROBES GPUPROBE_JSON
fail=0
check() {   # name expected actual
	if [ "$2" = "$3" ]; then echo "PASS $1 = $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi
}
truth() {   # name condition-as-text: a test expression already evaluated ($?)
	if [ "$2" = 0 ]; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi
}
# value of "@map[KEY...]: N" (the first key containing KEY) in a report, empty when absent
val() { grep -F "@$2[" "$1" | grep -F "$3" | head -1 | sed 's/.*\]: //'; }
# sum of a histogram's counts, or of a map's values
hsum() { awk -v m="@$2:" '$0 == m {on = 1; next} /^@/ {on = 0} on && /\|/ {split($0, a, "|"); k = split(a[1], w, " "); n += w[k]} END {print n + 0}' "$1"; }
# a report's histogram: its count column, "[lo, hi) N" lines only
hrows() { awk -v m="@$2:" '$0 == m {on = 1; next} /^@/ {on = 0} on && /\|/ {sub(/ *\|.*/, ""); print}' "$1"; }
msum() { grep -F "@$2[" "$1" | sed 's/.*\]: //' | awk '{n += $1} END {print n + 0}'; }
# run NAME APP... with tools: run TAG "TOOL OPTIONS" APP ARGS
run() {
	local tag=$1 opts=$2; shift 2
	# shellcheck disable=SC2086
	"$GP" run $opts -- "$@" >"$L/$tag.out" 2>"$L/$tag.err"
	local rc=$?
	check "$tag: exit status" 0 $rc
	if grep -q '^gpuprobe' "$L/$tag.err"; then
		echo "--- $tag: what gpuprobe said"; grep '^gpuprobe' "$L/$tag.err" | head -20
	fi
}

"$GP" tools >"$L/tools.txt" 2>&1
for t in $(awk '{print $1}' "$L/tools.txt"); do
	grep -q "(not built)" <<<"$(grep "^$t " "$L/tools.txt")" && { echo "FAIL: tool $t not built"; fail=1; }
done

# ---- examples/apps/vec_add ------------------------------------------------------------------
VA=$BUILD/examples/vec_add
VK=vectorAdd OE=oddEven
declare -A insns
if [ ! -x "$VA" ]; then
	echo "FAIL: no $VA (tests/gpu/prepare.sh builds it)"; fail=1
else
	for G in 4 8; do
		n=$((32 * G))
		"$VA" $G >"$L/vec_add$G.native" 2>&1
		for t in kcount launches; do
			run "vec_add$G.$t" "-t $t" "$VA" $G
			f=$L/vec_add$G.$t.err
			check "vec_add G=$G stdout with $t" "$(cat "$L/vec_add$G.native")" "$(cat "$L/vec_add$G.$t.out")"
			for k in $VK $OE; do
				check "vec_add G=$G $t launches[$k]" 1 "$(val "$f" launches "$k(")"
				check "vec_add G=$G $t blocks[$k]" $G "$(val "$f" blocks "$k(")"
				check "vec_add G=$G $t threads[$k]" $n "$(val "$f" threads "$k(")"
			done
		done
		f=$L/vec_add$G.launches.err
		check "vec_add G=$G launches: calls" 2 "$(msum "$f" calls)"
		check "vec_add G=$G launches: block_threads" "[32, 64) 2" "$(hrows "$f" block_threads | tr -s ' ')"
		check "vec_add G=$G launches: grid_blocks" 2 "$(hsum "$f" grid_blocks)"

		run "vec_add$G.memcount" "-t memcount" "$VA" $G
		f=$L/vec_add$G.memcount.err
		check "vec_add G=$G loads[$VK]" $((2 * n)) "$(val "$f" loads "$VK(")"
		check "vec_add G=$G stores[$VK]" $n "$(val "$f" stores "$VK(")"
		check "vec_add G=$G loads[$OE]" $n "$(val "$f" loads "$OE(")"
		check "vec_add G=$G stores[$OE]" $n "$(val "$f" stores "$OE(")"
		check "vec_add G=$G atomics" "" "$(grep -F '@atomics[' "$f")"

		run "vec_add$G.memtrace" "-t memtrace -k $VK" "$VA" $G
		f=$L/vec_add$G.memtrace.err
		check "vec_add G=$G memtrace records" $((3 * n)) "$(grep -c '^@accesses\[ring ' "$f")"
		check "vec_add G=$G memtrace lost" "" "$(grep -F '@accesses: ' "$f")"

		# warptrace: one lossless record per warp access (two loads and a store per warp)
		run "vec_add$G.warptrace" "-t warptrace -k $VK" "$VA" $G
		f=$L/vec_add$G.warptrace.err
		check "vec_add G=$G warptrace records" $((3 * G)) "$(grep -c '^@warps\[ring ' "$f")"
		check "vec_add G=$G warptrace lost" "" "$(grep -F '@warps: ' "$f")"

		run "vec_add$G.ktime" "-t ktime" "$VA" $G
		f=$L/vec_add$G.ktime.err
		for k in $VK $OE; do
			check "vec_add G=$G ktime launches[$k]" 1 "$(val "$f" launches "$k(")"
			t=$(val "$f" time_ns "$k(")
			[ -n "$t" ] && [ "$t" -gt 0 ]; truth "vec_add G=$G ktime time_ns[$k] = $t > 0" $?
		done
		check "vec_add G=$G ktime launch_ns" 2 "$(hsum "$f" launch_ns)"

		run "vec_add$G.insns" "-t bbcount -t opcodes -t divergence" "$VA" $G
		f=$L/vec_add$G.insns.err
		for k in $VK $OE; do
			ins=$(val "$f" instructions "$k(")
			ops=$(grep -F "@op_" "$f" | grep -F "[$k(" | sed 's/.*\]: //' | awk '{n += $1} END {print n + 0}')
			check "vec_add G=$G $k: classes add up to instructions" "$ins" "$ops"
			check "vec_add G=$G $k: active lanes = thread-level basic blocks" \
				"$(val "$f" basic_blocks "$k(")" "$(val "$f" active_lanes "$k(")"
			insns[$G.$k]=$ins
		done
		wb=$(val "$f" warp_blocks "$VK(")
		check "vec_add G=$G $VK: every warp execution full" "$wb" "$(val "$f" full_warps "$VK(")"
		check "vec_add G=$G $VK: 32 lanes each" $((32 * wb)) "$(val "$f" active_lanes "$VK(")"
		check "vec_add G=$G op_fp32[$VK]" $n "$(val "$f" op_fp32 "$VK(")"
		check "vec_add G=$G op_store[$VK]" $n "$(val "$f" op_store "$VK(")"
		wb=$(val "$f" warp_blocks "$OE(") fw=$(val "$f" full_warps "$OE(")
		[ -n "$wb" ] && [ "${fw:-0}" -lt "$wb" ]; truth "vec_add G=$G $OE diverges: full $fw < $wb warp executions" $?
	done
	check "vec_add $VK instructions at G=8 = 2 x at G=4" $((2 * ${insns[4.$VK]:-0})) "${insns[8.$VK]:-}"
fi

# ---- cuda-samples ---------------------------------------------------------------------------
if [ ! -x "$S/vectorAdd" ] || [ ! -x "$S/matrixMul" ]; then
	echo "SKIP cuda-samples: no $S/vectorAdd or $S/matrixMul (CORPORA=$CORPORA, nvcc $NVCC)"
else
	V=$S/vectorAdd
	for t in kcount launches; do
		run "vectorAdd.$t" "-t $t" "$V"
		f=$L/vectorAdd.$t.err
		grep -q "Test PASSED" "$L/vectorAdd.$t.out"; truth "vectorAdd with $t: Test PASSED" $?
		check "vectorAdd $t launches" 1 "$(val "$f" launches vectorAdd)"
		check "vectorAdd $t blocks" 196 "$(val "$f" blocks vectorAdd)"
		check "vectorAdd $t threads" 50176 "$(val "$f" threads vectorAdd)"
	done
	run vectorAdd.memcount "-t memcount" "$V"
	f=$L/vectorAdd.memcount.err
	check "vectorAdd loads" 100000 "$(val "$f" loads vectorAdd)"
	check "vectorAdd stores" 50000 "$(val "$f" stores vectorAdd)"
	run vectorAdd.memtrace "-t memtrace -k vectorAdd" "$V"
	f=$L/vectorAdd.memtrace.err
	# The ring is lossy (it never stalls the kernel) with an exact drop count: 150000 accesses
	# in a few microseconds overflow it (H100: 16896 delivered, 133104 lost). Every access is
	# either delivered or counted as lost.
	got=$(grep -c '^@accesses\[ring ' "$f")
	lost=$(grep -F '@accesses: ' "$f" | grep -o '[0-9]* lost' | grep -o '^[0-9]*')
	check "vectorAdd memtrace records delivered + lost" 150000 "$((got + ${lost:-0}))"
	run vectorAdd.ktime "-t ktime" "$V"
	check "vectorAdd ktime launches" 1 "$(val "$L/vectorAdd.ktime.err" launches vectorAdd)"
	run vectorAdd.insns "-t bbcount -t opcodes -t divergence" "$V"
	f=$L/vectorAdd.insns.err
	grep -q "Test PASSED" "$L/vectorAdd.insns.out"; truth "vectorAdd with bbcount+opcodes+divergence: Test PASSED" $?
	check "vectorAdd: classes add up to instructions" "$(val "$f" instructions vectorAdd)" \
		"$(grep -F '@op_' "$f" | grep -F '[vectorAdd(' | sed 's/.*\]: //' | awk '{n += $1} END {print n + 0}')"
	check "vectorAdd: active lanes = thread-level basic blocks" "$(val "$f" basic_blocks vectorAdd)" \
		"$(val "$f" active_lanes vectorAdd)"
	check "vectorAdd op_store (threads in range)" 50000 "$(val "$f" op_store vectorAdd)"

	M=$S/matrixMul
	for t in kcount launches ktime; do
		run "matrixMul.$t" "-t $t" "$M"
		f=$L/matrixMul.$t.err
		grep -q "Result = PASS" "$L/matrixMul.$t.out"; truth "matrixMul with $t: Result = PASS" $?
		check "matrixMul $t launches" 301 "$(val "$f" launches 'MatrixMulCUDA<32>')"
		[ $t = ktime ] && continue
		check "matrixMul $t blocks" 60200 "$(val "$f" blocks 'MatrixMulCUDA<32>')"
		check "matrixMul $t threads" 61644800 "$(val "$f" threads 'MatrixMulCUDA<32>')"
	done
	check "matrixMul ktime launch_ns" 301 "$(hsum "$L/matrixMul.ktime.err" launch_ns)"
fi

echo "logs: $L"
[ $fail = 0 ] && echo "PASS: every built-in tool on the GPU"
exit $fail
