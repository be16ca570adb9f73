#!/bin/bash
# One-liners on the GPU (issue 13): `gpuprobe run -e` against examples/apps, with exact counts
# from the launch geometry (docs/oneliners.md shows the same one-liners):
#   1. vec_add 8 (vectorAdd, oddEven: 8 blocks of 32 threads each)
#        gpu/entry/* { @[kernel] = count(); }                       256 per kernel
#   2. vec_add 8: gpu/block_begin/* { @blocks[kernel] = count() }  8 per kernel
#        gpu/exit/vectorAdd /thread_x % 2 == 0/ { @even_exits = count() }    128
#   3. vec_add 8: gpu/entry/* { @tid = lhist(thread_x, 0, 32, 8); @blk = hist(block_x) }
#        @tid: 128 in each of [0, 8) .. [24, 32); @blk: [0] 64, [1] 64, [2, 4) 128, [4, 8) 256
#   4. coalescing (4096 threads per kernel, 128 per block)
#        gpu/mem/global,load/* { @loads[kernel] = count(); @bytes = sum(size) }
#        load_coalesced 4096, load_strided 4096, load_random 8192 (idx[i], then in[idx[i]]);
#        bytes 4 * 16384 = 65536
#   5. bank_conflicts (4 kernels, 4 blocks of 64 threads, 2048 floats of shared memory)
#        gpu/mem/shared,load/* { @shared_loads[kernel] = count() }   256 per kernel
#        gpu/mem/shared,store/* { @shared_stores = count() }   4 kernels x 4 blocks x 2048 = 32768
#   6. vec_add 8, on the host: host/entry/cuLaunchKernel* { @launches[api] = count();
#        @threads = sum(arg1 * arg2 * arg3 * arg4 * arg5 * arg6) }   2 launches, 512 threads
#   7. cuda-samples vectorAdd (50000 elements, 196 blocks of 256): gpu/entry/* { @[kernel] =
#        count() } gpu/entry/vectorAdd /block_x * 256 + thread_x >= 50000/ { @idle = count() }
#        gpu/mem/global,store/* { @stores[kernel] = count() }   50176 threads, 176 idle, 50000 stores
#   8. cuda-samples matrixMul (MatrixMulCUDA<32>, grid 20 x 10, a warm-up + 300 launches):
#        gpu/block_begin/* { @blocks[kernel] = count() } host/entry/cuLaunchKernel* { @launches =
#        count() }   60200 blocks, 301 launches
#      The two samples are built with nvcc into $BUILD/gpu-oneliner-samples from CORPORA (default
#      .carry/corpora, else /work/shared/corpora: tests/gpu/stage_corpora.sh); without them those
#      checks say SKIP. ONELINERS_BUILD_ONLY=1: build the samples and stop (on the build machine;
#      then carry BUILD).
# Without a GPU the same script runs on gpuprobe's own driver over PoCL (GPUPROBE_BACKEND=opencl,
# an nvidia-smi that succeeds first on PATH, BUILD with bin/, lib/ and examples/): that is how it
# was checked before its first GPU run.
# Each run's app output must be the app's own (its first line as without probes). Logs: $OUT/NAME.err
# (gpuprobe's report), NAME.out (the app's), NAME.dry (what the one-liner compiled to).
# usage: tests/gpu/oneliners.sh   (BUILD: a tests/gpu/prepare.sh build, default ./build; it needs
# bin/gpuprobe, lib/ and examples/ from examples/build.sh). Exit 77 without a GPU or the build.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$root/build}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)   # absolute: matrixMul runs in its own folder
BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$BUILD")
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
S=$BUILD/gpu-oneliner-samples
CORPORA=${CORPORA:-$root/.carry/corpora}
[ -d "$CORPORA/cuda-samples" ] || CORPORA=/work/shared/corpora
# the two samples, built once (a build machine may do it: ONELINERS_BUILD_ONLY=1)
c=$CORPORA/cuda-samples
if [ -d "$c/samples" ] && [ -x "$NVCC" ]; then
	mkdir -p "$S"
	for n in vectorAdd matrixMul; do
		[ -x "$S/$n" ] && continue
		"$NVCC" -O2 -std=c++17 -arch=sm_90 -I"$c/Common" "$c/samples/$n/$n.cu" -o "$S/$n" \
			>"$S/$n.build.log" 2>&1 || echo "oneliners.sh: nvcc $n failed (see $S/$n.build.log)"
	done
fi
if [ "${ONELINERS_BUILD_ONLY:-0}" = 1 ]; then
	ls -l "$S" 2>/dev/null
	exit 0
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
GP=$BUILD/bin/gpuprobe
EX=$BUILD/examples
for f in "$GP" "$EX/vec_add" "$EX/coalescing" "$EX/bank_conflicts"; do
	if [ ! -x "$f" ]; then
		echo "SKIP: $f missing (tests/gpu/prepare.sh $BUILD builds it)"
		exit 77
	fi
done
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GPUPROBE_TOP=100 LC_ALL=C
fail=0
check() {   # name expected actual
	if [ "$2" = "$3" ]; then echo "PASS $1 = $(echo "$3" | paste -sd'|')"; else
		echo "FAIL $1"; echo "  expected: $(echo "$2" | paste -sd'|')"; echo "  got:      $(echo "$3" | paste -sd'|')"; fail=1; fi
}
# run NAME ONELINER APP [ARGS]: the app under the one-liner; the plain app's first line must match
run() {
	local name=$1 ol=$2
	shift 2
	"$GP" run --dry-run -e "$ol" >"$OUT/$name.dry" 2>&1 || { echo "FAIL $name: --dry-run: $(tail -1 "$OUT/$name.dry")"; fail=1; }
	"$@" >"$OUT/$name.plain" 2>&1
	timeout 300 "$GP" run -e "$ol" -- "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	local rc=$?
	echo "--- $name: exit $rc; $(head -1 "$OUT/$name.out")"
	[ $rc = 0 ] || { echo "FAIL $name: exit $rc: $(grep -v '^@' "$OUT/$name.err" | tail -3)"; fail=1; }
	check "$name: the app's output" "$(head -1 "$OUT/$name.plain")" "$(head -1 "$OUT/$name.out")"
	grep -E "not instrumented|did not load|skipped|rejected" "$OUT/$name.err" && { echo "FAIL $name: probes skipped (above)"; fail=1; }
}
# "@map[...]: N" lines of a report, sorted; "@map: N" of a map without keys
rows() { grep "^@$2\[" "$OUT/$1.err" | sort; }
scalar() { grep "^@$2: " "$OUT/$1.err"; }
# a histogram's rows "LABEL COUNT" (bars dropped)
hist() { awk -v h="@$2:" '$0 == h {on = 1; next} /^@/ {on = 0} on && /\|/ {sub(/ *\|.*/, ""); gsub(/  +/, " "); print}' "$OUT/$1.err"; }

# 1. kernel entries
run kcount 'gpu/entry/* { @[kernel] = count(); }' "$EX/vec_add" 8
check "kcount: @count" "$(printf '%s\n' '@count[oddEven(float*)]: 256' '@count[vectorAdd(float const*, float const*, float*)]: 256')" "$(rows kcount count)"

# 2. blocks and a filtered exit
run blocks 'gpu/block_begin/* { @blocks[kernel] = count() } gpu/exit/vectorAdd /thread_x % 2 == 0/ { @even_exits = count() }' "$EX/vec_add" 8
check "blocks: @blocks" "$(printf '%s\n' '@blocks[oddEven(float*)]: 8' '@blocks[vectorAdd(float const*, float const*, float*)]: 8')" "$(rows blocks blocks)"
check "blocks: @even_exits" '@even_exits: 128' "$(scalar blocks even_exits)"

# 3. histograms
run hists 'gpu/entry/* { @tid = lhist(thread_x, 0, 32, 8); @blk = hist(block_x) }' "$EX/vec_add" 8
check "hists: @tid (lhist)" "$(printf '%s\n' '[0, 8) 128' '[8, 16) 128' '[16, 24) 128' '[24, 32) 128')" "$(hist hists tid)"
check "hists: @blk (hist)" "$(printf '%s\n' '[0] 64' '[1] 64' '[2, 4) 128' '[4, 8) 256')" "$(hist hists blk)"

# 4. global loads
run loads 'gpu/mem/global,load/* { @loads[kernel] = count(); @bytes = sum(size) }' "$EX/coalescing"
check "loads: @loads" "$(printf '%s\n' '@loads[load_coalesced(float const*, float*)]: 4096' '@loads[load_random(float const*, int const*, float*)]: 8192' '@loads[load_strided(float const*, float*)]: 4096')" "$(rows loads loads)"
check "loads: @bytes" '@bytes: 65536' "$(scalar loads bytes)"

# 5. shared memory
run shared 'gpu/mem/shared,load/* { @shared_loads[kernel] = count() } gpu/mem/shared,store/* { @shared_stores = count() }' "$EX/bank_conflicts"
check "shared: @shared_loads" "$(printf '%s\n' '@shared_loads[read_same(float*)]: 256' '@shared_loads[void read_stride<1>(float*)]: 256' '@shared_loads[void read_stride<2>(float*)]: 256' '@shared_loads[void read_stride<32>(float*)]: 256')" "$(rows shared shared_loads)"
check "shared: @shared_stores" '@shared_stores: 32768' "$(scalar shared shared_stores)"

# 6. host: launches and their threads
run launches 'host/entry/cuLaunchKernel* { @launches[api] = count(); @threads = sum(arg1 * arg2 * arg3 * arg4 * arg5 * arg6) }' "$EX/vec_add" 8
check "launches: launches" 2 "$(rows launches launches | awk -F": " "{s += \$2} END {print s + 0}")"
check "launches: @threads" '@threads: 512' "$(scalar launches threads)"

# 7, 8. cuda-samples
if [ -x "$S/vectorAdd" ]; then
	run sample_vectorAdd 'gpu/entry/* { @[kernel] = count() } gpu/entry/vectorAdd /block_x * 256 + thread_x >= 50000/ { @idle = count() } gpu/mem/global,store/* { @stores[kernel] = count() }' "$S/vectorAdd"
	check "vectorAdd: @count" '@count[vectorAdd(float const*, float const*, float*, int)]: 50176' "$(rows sample_vectorAdd count)"
	check "vectorAdd: @idle" '@idle: 176' "$(scalar sample_vectorAdd idle)"
	check "vectorAdd: @stores" '@stores[vectorAdd(float const*, float const*, float*, int)]: 50000' "$(rows sample_vectorAdd stores)"
	grep -q 'Test PASSED' "$OUT/sample_vectorAdd.out" && echo "PASS vectorAdd: Test PASSED" || { echo "FAIL vectorAdd: no 'Test PASSED'"; fail=1; }
else
	echo "SKIP cuda-samples vectorAdd: $S/vectorAdd not built (no corpora or nvcc; ONELINERS_BUILD_ONLY=1 on the build machine)"
fi
if [ -x "$S/matrixMul" ]; then
	cd "$S" && run sample_matrixMul 'gpu/block_begin/* { @blocks[kernel] = count() } host/entry/cuLaunchKernel* { @launches = count() }' ./matrixMul
	cd "$root"
	check "matrixMul: @blocks" '@blocks[void MatrixMulCUDA<32>(float*, float*, float*, int, int)]: 60200' "$(rows sample_matrixMul blocks)"
	check "matrixMul: @launches" '@launches: 301' "$(scalar sample_matrixMul launches)"
	grep -q 'Result = PASS' "$OUT/sample_matrixMul.out" && echo "PASS matrixMul: Result = PASS" || { echo "FAIL matrixMul: no 'Result = PASS'"; fail=1; }
else
	echo "SKIP cuda-samples matrixMul: $S/matrixMul not built"
fi

echo
[ $fail = 0 ] && echo "PASS all one-liners" || echo "FAIL (logs in $OUT)"
exit $fail
