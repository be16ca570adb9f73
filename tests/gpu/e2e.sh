#!/bin/bash
# End-to-end on the GPU (issue 5): `gpuprobe run` with probes on real apps, checked exactly.
#   pattern (tests/e2e/apps/pattern.cu), G blocks of 128 threads: entry = exit = G*128,
#     block begin = block end = G, barrier before = after = G*128 (block_sum); memory: global
#     loads 2.5*G*128, global stores G*128+G, shared loads = shared stores = G*128; the app's
#     stdout byte-identical with and without probes.
#   CUB radix sort, reduce, scan: stdout identical; for every kernel entries == exits > 0;
#     memory probes count on the reduce and scan kernels.
#   PyTorch + CuPy: torch's SASS-only modules reported (no PTX) and run unmodified; a CuPy
#     RawKernel compiled by NVRTC to PTX is probed: entries == exits == 25600.
# Needs BUILD (default ./build from tests/gpu/prepare.sh, else build-e2e) made by cmake + tests/e2e/build.sh (probe objects, apps,
# libbpf/json-c/yaml copies in BUILD/lib). Exit 77 without a GPU.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then
	# tests/gpu/prepare.sh build makes ./build; build-e2e is this area's own directory
	for b in "$root/build" "$root/build-e2e"; do
		[ -x "$b/bin/gpuprobe" ] && [ -d "$b/e2e" ] && { BUILD=$b; break; }
	done
	BUILD=${BUILD:-$root/build-e2e}
fi
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
GP=$BUILD/bin/gpuprobe
E=$BUILD/e2e
fail=0
check() {   # name expected actual
	if [ "$2" = "$3" ]; then echo "PASS $1 = $3"; else echo "FAIL $1: expected $2, got $3"; fail=1; fi
}
# value of "@map[key]: N" in a text report
val() { grep -F "@$2[$3]: " "$1" | tail -1 | sed 's/.*\]: //'; }

for G in 64 37; do
	n=$((G * 128))
	"$E/pattern" $G >"$OUT/pattern$G.plain" 2>&1
	GPUPROBE_LOG=1 "$GP" run -p "$E/count.bpf.o" -p "$E/mem.bpf.o" -- "$E/pattern" $G \
		>"$OUT/pattern$G.out" 2>"$OUT/pattern$G.err"
	echo "--- pattern G=$G stderr"; cat "$OUT/pattern$G.err"
	check "pattern G=$G stdout identical" "$(cat "$OUT/pattern$G.plain")" "$(cat "$OUT/pattern$G.out")"
	check "G=$G entry" $n "$(val "$OUT/pattern$G.err" counts 0)"
	check "G=$G exit" $n "$(val "$OUT/pattern$G.err" counts 1)"
	check "G=$G block_begin" $G "$(val "$OUT/pattern$G.err" counts 2)"
	check "G=$G block_end" $G "$(val "$OUT/pattern$G.err" counts 3)"
	check "G=$G barrier" $n "$(val "$OUT/pattern$G.err" counts 4)"
	check "G=$G barrier_after" $n "$(val "$OUT/pattern$G.err" counts 5)"
	check "G=$G global loads" $((n + n / 2 + n)) "$(val "$OUT/pattern$G.err" mem 5)"
	check "G=$G global stores" $((n + G)) "$(val "$OUT/pattern$G.err" mem 6)"
	check "G=$G shared loads" $n "$(val "$OUT/pattern$G.err" mem 9)"
	check "G=$G shared stores" $n "$(val "$OUT/pattern$G.err" mem 10)"
done

# JSON output
"$GP" run --json "$OUT/pattern.json" -p "$E/count.bpf.o" -- "$E/pattern" 64 >/dev/null 2>&1
check "json map line" 1 "$(grep -c '"type":"map","name":"counts"' "$OUT/pattern.json")"

# CUB
t0=$(date +%s.%N)
"$E/cub_algos" >"$OUT/cub.plain" 2>&1
t1=$(date +%s.%N)
GPUPROBE_LOG=1 "$GP" run -p "$E/kernels.bpf.o" -- "$E/cub_algos" >"$OUT/cub.out" 2>"$OUT/cub.err"
t2=$(date +%s.%N)
echo "cub wall time (whole process, JIT included): plain $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s, probed $(awk "BEGIN{printf \"%.2f\", $t2 - $t1}") s"
echo "--- cub stderr"; cat "$OUT/cub.err"
check "cub stdout identical" "$(cat "$OUT/cub.plain")" "$(cat "$OUT/cub.out")"
pairs() {   # file: "kernels-with-entry==exit>0 kernels-with-mem>0"
	python3 - "$1" <<'PY'
import sys, re
ent, ex, mem = {}, {}, {}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"@(entry|exit|mem)_by_kernel\[(.*)\]: (\d+)$", line.strip())
    if m:
        {"entry": ent, "exit": ex, "mem": mem}[m.group(1)][m.group(2)] = int(m.group(3))
ok = [k for k in ent if ent[k] > 0 and ex.get(k) == ent[k]]
bad = [k for k in ent if ex.get(k) != ent[k]]
print(len(ok), len(bad), len([k for k in mem if mem[k] > 0]))
PY
}
read -r ok bad memk < <(pairs "$OUT/cub.err")
echo "cub: $ok kernels with entries == exits, $bad mismatched, $memk kernels with memory counts"
check "cub mismatched kernels" 0 "$bad"
[ "${ok:-0}" -ge 4 ] && echo "PASS cub kernels probed >= 4" || { echo "FAIL cub kernels probed: $ok"; fail=1; }
[ "${memk:-0}" -ge 2 ] && echo "PASS cub kernels with memory counts >= 2" || { echo "FAIL cub memory kernels: $memk"; fail=1; }

# Never break the app (shim/probes.c: with a context current, the shim has the instrumented PTX
# compiled at load by the driver's JIT (default, GPUPROBE_PRECOMPILE=check) or by its JIT linker
# into a cached cubin (GPUPROBE_PRECOMPILE=link); a compile error gives one line and the original
# loads). Each run here has a fresh cache directory. These runs instrument whole modules at load
# (GPUPROBE_LAZY=0), the path of modules whose kernels cannot be split out; kernels instrumented
# at their first launch are tests/gpu/first_kernel.sh's.
# (a) CUB with memory probes on every kernel, out of line: whole-program ptxas fails on the
# onesweep kernel (C7600, e2e.instrument), the JIT linker compiles relocatable code, where it
# compiled offline (ptxas -c). Either way the app's output must be identical: instrumented with
# counts, or the original with exactly one fallback line and no counts.
GPUPROBE_LAZY=0 GPUPROBE_CACHE_DIR=$OUT/cubin-cubfb GPUPROBE_INLINE=0 GPUPROBE_LOG=1 "$GP" run -p "$E/all_mem.bpf.o" -- "$E/cub_algos" >"$OUT/cubfb.out" 2>"$OUT/cubfb.err"
echo "--- cub all_mem out of line stderr"; grep -v "first launch" "$OUT/cubfb.err"
check "all_mem out of line: cub stdout identical" "$(cat "$OUT/cub.plain")" "$(cat "$OUT/cubfb.out")"
nfb=$(grep -c '^gpuprobe: module [0-9]*: the instrumented [A-Za-z]* did not' "$OUT/cubfb.err")
v=$(val "$OUT/cubfb.err" accesses 0)
if grep -q '^gpuprobe: module 1: compiled in [0-9.]* ms by the driver.s JIT' "$OUT/cubfb.err"; then
	check "all_mem out of line: compiled by the shim, no fallback line" 0 "$nfb"
	[ "${v:-0}" -gt 0 ] && echo "PASS all_mem out of line: memory accesses counted: $v" || { echo "FAIL all_mem out of line: compiled but no counts"; fail=1; }
else
	check "all_mem out of line: one fallback line" 1 "$nfb"
	check "all_mem out of line: no counts (absent or 0)" 0 "${v:-0}"
fi
# (b) A compile error, forced (GPUPROBE_TEST_FAULT=compile appends a line no compiler takes):
# exactly one line naming the JIT linker's error, the original runs, no counts. The error is
# remembered in the cache: a second run prints the same line without running the JIT.
for r in 1 2; do
	GPUPROBE_LAZY=0 GPUPROBE_CACHE_DIR=$OUT/cubin-fault GPUPROBE_TEST_FAULT=compile GPUPROBE_LOG=1 "$GP" run -p "$E/kernels.bpf.o" -- "$E/cub_algos" >"$OUT/cubfault$r.out" 2>"$OUT/cubfault$r.err"
	echo "--- cub forced compile error, run $r, stderr"; grep -v "first launch" "$OUT/cubfault$r.err"
	check "fallback $r: cub stdout identical" "$(cat "$OUT/cub.plain")" "$(cat "$OUT/cubfault$r.out")"
	check "fallback $r: one line" 1 "$(grep -c '^gpuprobe: module [0-9]*: the instrumented [A-Za-z]* did not' "$OUT/cubfault$r.err")"
	check "fallback $r: the line names the compiler's error" 1 "$(grep -c "^gpuprobe: module 1: the instrumented PTX did not compile (CUDA_ERROR_[A-Z_]*: .*gpuprobe_test_fault.*); loaded the original without probes\$" "$OUT/cubfault$r.err")"
	read -r ok bad memk < <(pairs "$OUT/cubfault$r.err")
	check "fallback $r: no counts (kernels with entries)" 0 "${ok:-0}"
done
check "fallback: the same line in both runs" "$(grep 'did not compile' "$OUT/cubfault1.err")" "$(grep 'did not compile' "$OUT/cubfault2.err")"
check "fallback: run 2 took the error from the cache" 1 "$(grep -c '^gpuprobe: module 1: compile error from the cache (' "$OUT/cubfault2.err")"
# (c) The cubin cache (GPUPROBE_PRECOMPILE=link): the same probed app twice with one fresh cache directory. The second run
# takes every instrumented module from the cache (no JIT: map addresses repeat from run to run,
# shim/probes_alloc.c) and prints the same output and counts.
for r in 1 2; do
	t0=$(date +%s.%N)
	GPUPROBE_LAZY=0 GPUPROBE_PRECOMPILE=link GPUPROBE_CACHE_DIR=$OUT/cubin-cached GPUPROBE_LOG=1 "$GP" run -p "$E/count.bpf.o" -- "$E/pattern" 64 \
		>"$OUT/cached$r.out" 2>"$OUT/cached$r.err"
	t1=$(date +%s.%N)
	echo "--- cached run $r stderr ($(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s)"; grep -v "first launch" "$OUT/cached$r.err"
done
check "cache: run 1 compiled and cached" 1 "$(grep -c '^gpuprobe: module [0-9]*: compiled in [0-9.]* ms by the driver.s JIT linker (sm_[0-9]*, cubin [0-9]* bytes); cached as ' "$OUT/cached1.err")"
check "cache: run 2 from the cache" 1 "$(grep -c '^gpuprobe: module [0-9]*: cubin from the cache (' "$OUT/cached2.err")"
check "cache: run 2 compiled nothing" 0 "$(grep -c ' compiled in .* by the driver.s JIT linker' "$OUT/cached2.err")"
check "cache: stdout identical (run 1)" "$(cat "$OUT/pattern64.plain")" "$(cat "$OUT/cached1.out")"
check "cache: stdout identical (run 2)" "$(cat "$OUT/pattern64.plain")" "$(cat "$OUT/cached2.out")"
check "cache: run 2 counts = run 1 counts" "$(grep '^@' "$OUT/cached1.err")" "$(grep '^@' "$OUT/cached2.err")"
check "cache: entry count" $((64 * 128)) "$(val "$OUT/cached2.err" counts 0)"

# Configuration file (gpuprobe run -c): the object attached to block_sum only, by its glob.
printf 'probes:\n  - path: %s\n    kernels: ["block_sum*"]\n' "$E/count.bpf.o" >"$OUT/probes.yaml"
chmod 600 "$OUT/probes.yaml"
"$GP" run -c "$OUT/probes.yaml" -- "$E/pattern" 64 >"$OUT/cfg.out" 2>"$OUT/cfg.err"
echo "--- config stderr"; cat "$OUT/cfg.err"
check "config: stdout identical" "$(cat "$OUT/pattern64.plain")" "$(cat "$OUT/cfg.out")"
check "config: barrier on block_sum" 8192 "$(val "$OUT/cfg.err" counts 4)"
v=$(val "$OUT/cfg.err" counts 0); check "config: pattern filtered out (entry count absent or 0)" 0 "${v:-0}"

# PyTorch + CuPy
if python3 -c "import torch, cupy" 2>/dev/null; then
	CUPY_COMPILE_WITH_PTX=1 CUPY_CACHE_DIR=$OUT/cupy-plain python3 "$E/cupy_kernel.py" >"$OUT/py.plain" 2>&1
	CUPY_COMPILE_WITH_PTX=1 CUPY_CACHE_DIR=$OUT/cupy-probed "$GP" run -p "$E/kernels.bpf.o" -- \
		python3 "$E/cupy_kernel.py" >"$OUT/py.out" 2>"$OUT/py.err"
	echo "--- python stderr (first 40 lines)"; head -40 "$OUT/py.err"
	check "python stdout identical" "$(cat "$OUT/py.plain")" "$(cat "$OUT/py.out")"
	nptx=$(grep -c "no PTX for this GPU" "$OUT/py.err")
	[ "$nptx" -ge 1 ] && echo "PASS torch modules without PTX reported: $nptx" || { echo "FAIL no module reported without PTX"; fail=1; }
	check "cupy scale entries" 25600 "$(val "$OUT/py.err" entry_by_kernel scale)"
	check "cupy scale exits" 25600 "$(val "$OUT/py.err" exit_by_kernel scale)"
else
	echo "SKIP python part: torch or cupy not importable"
fi
# bpf_gpu_read_param (helper 514): pattern(a, b, n) launched with G=64 blocks of 128 threads;
# the entry probe reads a (offset 0), b (8) and n (16) from the kernel's parameter buffer: n
# must be what the app passed, a and b two distinct device pointers, a read past the 20-byte
# buffer -ERANGE (-34) with its destination zeroed.
"$GP" run -p "$E/read_param.bpf.o" -- "$E/pattern" 64 >"$OUT/read_param.out" 2>"$OUT/read_param.err"
echo "--- read_param"; cat "$OUT/read_param.err"
check "read_param stdout identical" "$(cat "$OUT/pattern64.plain")" "$(cat "$OUT/read_param.out")"
check "read_param n (param 2)" 8192 "$(val "$OUT/read_param.err" param_values 2)"
pa=$(val "$OUT/read_param.err" param_values 0) pb=$(val "$OUT/read_param.err" param_values 1)
[ -n "$pa" ] && [ -n "$pb" ] && [ "$pa" != 0 ] && [ "$pb" != 0 ] && [ "$pa" != "$pb" ] \
	&& echo "PASS read_param a, b (params 0, 1) = $pa, $pb" || { echo "FAIL read_param a, b: '$pa' '$pb'"; fail=1; }
check "read_param past the buffer (-ERANGE)" 18446744073709551582 "$(val "$OUT/read_param.err" param_values 3)"
pz=$(val "$OUT/read_param.err" param_values 4)
check "read_param destination zeroed on error" 0 "${pz:-0}"
# Examples (examples/*/, built by examples/build.sh into BUILD/examples): vec_add with G=4
# blocks of 32 threads (n=128). Each output is kept for the example's README.
X=$BUILD/examples
if [ -x "$X/vec_add" ]; then
	"$X/vec_add" >"$OUT/vec_add.plain" 2>&1
	runex() {   # name probe.o
		"$GP" run -p "$X/$2" -- "$X/vec_add" >"$OUT/ex_$1.out" 2>"$OUT/ex_$1.err"
		echo "--- example $1"; cat "$OUT/ex_$1.err"
		check "example $1 stdout identical" "$(cat "$OUT/vec_add.plain")" "$(cat "$OUT/ex_$1.out")"
	}
	runex cuda-counter cuda_counter.bpf.o
	check "cuda-counter entries" 128 "$(grep -F '@call_count[' "$OUT/ex_cuda-counter.err" | sed 's/.*\]: //')"
	check "cuda-counter exits" 128 "$(grep -F '@exit_count[' "$OUT/ex_cuda-counter.err" | sed 's/.*\]: //')"
	check "cuda-counter printk lines" 4 "$(grep -c '^vectorAdd block [0-3] entered at' "$OUT/ex_cuda-counter.err")"
	runex kernelretsnoop kernelretsnoop.bpf.o
	check "kernelretsnoop events" 128 "$(grep -c '^@rb\[ring ' "$OUT/ex_kernelretsnoop.err")"
	runex threadhist threadhist.bpf.o
	check "threadhist exits" 128 "$(val "$OUT/ex_threadhist.err" thread_exits 0)"
	runex mem_trace mem_trace.bpf.o
	check "mem_trace vectorAdd loads" 256 "$(grep -F '@loads_by_kernel[vectorAdd(' "$OUT/ex_mem_trace.err" | sed 's/.*\]: //')"
	check "mem_trace vectorAdd stores" 128 "$(grep -F '@stores_by_kernel[vectorAdd(' "$OUT/ex_mem_trace.err" | sed 's/.*\]: //')"
	check "mem_trace oddEven loads" 128 "$(grep -F '@loads_by_kernel[oddEven(' "$OUT/ex_mem_trace.err" | sed 's/.*\]: //')"
	check "mem_trace oddEven stores" 128 "$(grep -F '@stores_by_kernel[oddEven(' "$OUT/ex_mem_trace.err" | sed 's/.*\]: //')"
	runex insn-count insn_count.bpf.o
	vi=$(grep -F '@insns_by_kernel[vectorAdd(' "$OUT/ex_insn-count.err" | sed 's/.*\]: //')
	[ -n "$vi" ] && [ "$vi" -gt 0 ] && [ $((vi % 128)) = 0 ] && echo "PASS insn-count vectorAdd $vi = 128 x $((vi / 128))" || { echo "FAIL insn-count vectorAdd: '$vi'"; fail=1; }
	runex divergence divergence.bpf.o
	nd=$(grep -c '^@diverged\[[0-9]*\]: [1-9]' "$OUT/ex_divergence.err")
	[ "$nd" -ge 1 ] && echo "PASS divergence: $nd blocks entered by partial warps" || { echo "FAIL divergence: none"; fail=1; }
	runex launchlate launchlate.bpf.o
	check "launchlate blocks measured (device)" 4 "$(val "$OUT/ex_launchlate.err" samples 0)"
	# An absent map entry prints nothing: that is a count of 0.
	before=$(val "$OUT/ex_launchlate.err" before_launch 0)
	check "launchlate blocks before their launch" 0 "${before:-0}"
	nl=$(val "$OUT/ex_launchlate.err" launches 0)
	[ -n "$nl" ] && [ "$nl" -ge 2 ] && echo "PASS launchlate host probe saw $nl launches" || { echo "FAIL launchlate launches: '$nl'"; fail=1; }
	check "launchlate histogram printed" 1 "$(grep -c '^@latency_ns_hist' "$OUT/ex_launchlate.err")"
	# One clock: the host probe stamps CLOCK_REALTIME, the device probe %globaltimer plus the
	# offset the shim measured (on the H100 VM the two clocks differ: 4 blocks "before their
	# launch" without it). The report's clock line gives the offset and its uncertainty.
	echo "launchlate $(grep '^clock: ' "$OUT/ex_launchlate.err" || echo 'clock: (no clock line)')"
	check "launchlate device clock corrected" 1 "$(grep -c '^clock: probe times are on the host.s clocks' "$OUT/ex_launchlate.err")"
	# bpftime's section forms (uprobe/./vec_add:<cudaLaunchKernel<char>>, kprobe/<vectorAdd>):
	# the uprobe runs at each launch's driver call (vectorAdd and oddEven: 2), reads grid x|y<<32
	# and grid z as PARM2/PARM3 (oddEven<<<4, 32>>> last: 4294967300 and 1), and the device probe
	# adds one count per vectorAdd launch (1) to the histogram.
	GPUPROBE_LOG=1 "$GP" run -p "$X/launchlate_bpftime.bpf.o" -- "$X/vec_add" >"$OUT/ex_launchlate_bpftime.out" 2>"$OUT/ex_launchlate_bpftime.err"
	echo "--- example launchlate (bpftime's sections)"; grep -v '^gpuprobe: first launch\|^gpuprobe: module' "$OUT/ex_launchlate_bpftime.err"
	check "launchlate_bpftime stdout identical" "$(cat "$OUT/vec_add.plain")" "$(cat "$OUT/ex_launchlate_bpftime.out")"
	check "launchlate_bpftime uprobe note" 1 "$(grep -c "host probe uprobe_cuda_launch: .* runs at entry of the driver's cuLaunchKernel\* (binary path './vec_add' ignored" "$OUT/ex_launchlate_bpftime.err")"
	check "launchlate_bpftime uprobe runs" 2 "$(val "$OUT/ex_launchlate_bpftime.err" host_launches 0)"
	check "launchlate_bpftime gridDim (PARM2)" 4294967300 "$(val "$OUT/ex_launchlate_bpftime.err" last_launch 1)"
	check "launchlate_bpftime blockDim (PARM3)" 1 "$(val "$OUT/ex_launchlate_bpftime.err" last_launch 2)"
	check "launchlate_bpftime printk lines" 2 "$(grep -c 'cudaLaunchKernel from pid [0-9]*: grid.x 4$' "$OUT/ex_launchlate_bpftime.err")"
	nl=$(val "$OUT/ex_launchlate_bpftime.err" no_launch 0)
	check "launchlate_bpftime samples without a launch time" 0 "${nl:-0}"
	check "launchlate_bpftime device clock corrected" 1 "$(grep -c '^clock: probe times are on the host.s clocks' "$OUT/ex_launchlate_bpftime.err")"
	check "launchlate_bpftime histogram counts (one per vectorAdd launch)" 1 "$(awk '/^@launch_latency_hist/ {h = 1; next} /^@/ {h = 0} h && / \|/ {for (i = 1; i < NF; i++) if ($(i + 1) ~ /^\|/) s += $i} END {print s + 0}' "$OUT/ex_launchlate_bpftime.err")"
	runex block-timeline block_timeline.bpf.o
	check "block-timeline events" 8 "$(grep -c '^@timeline\[ring ' "$OUT/ex_block-timeline.err")"
fi
# coalescing and bank-conflicts: their own apps print the counts expected (computed on the host
# from the same addresses); the probe's per-kernel sums must equal them.
kval() {   # FILE MAP KERNEL-NAME-PREFIX: the value printed for that kernel
	grep -F "@$2[" "$1" | grep -F "$3(" | sed 's/.*\]: //'
}
expect() {   # FILE KERNEL FIELD: from the app's "expected KERNEL: requests R sectors S" line
	grep -F "expected $2: " "$1" | sed "s/.* $3 \([0-9]*\).*/\1/"
}
for ex in coalescing:coalescing:sectors bank-conflicts:bank_conflicts:wavefronts; do
	name=${ex%%:*} rest=${ex#*:} app=${rest%%:*} field=${ex##*:}
	[ -x "$X/$app" ] || { echo "FAIL example $name: $X/$app not built"; fail=1; continue; }
	"$X/$app" >"$OUT/$app.plain" 2>&1
	"$GP" run -p "$X/$app.bpf.o" -- "$X/$app" >"$OUT/ex_$name.out" 2>"$OUT/ex_$name.err"
	echo "--- example $name"; cat "$OUT/$app.plain" "$OUT/ex_$name.err"
	check "example $name stdout identical" "$(cat "$OUT/$app.plain")" "$(cat "$OUT/ex_$name.out")"
	for k in $(grep -o '^expected [^:]*' "$OUT/$app.plain" | sed 's/^expected //'); do
		check "$name $k requests" "$(expect "$OUT/$app.plain" "$k" requests)" "$(kval "$OUT/ex_$name.err" requests_by_kernel "$k")"
		check "$name $k $field" "$(expect "$OUT/$app.plain" "$k" "$field")" "$(kval "$OUT/ex_$name.err" ${field}_by_kernel "$k")"
	done
done

# bpftime's published GPU probes, unchanged (not in this repository: BUILD/bpftime/*.bpf.o when
# present, built from a bpftime checkout with its vmlinux.h convention).
if [ -d "$BUILD/bpftime" ]; then
	for p in "$BUILD"/bpftime/*.bpf.o; do
		name=$(basename "$p" .bpf.o)
		"$GP" run -p "$p" -- "$X/vec_add" >"$OUT/bpftime_$name.out" 2>"$OUT/bpftime_$name.err"
		echo "--- bpftime $name"; head -30 "$OUT/bpftime_$name.err"
		check "bpftime $name stdout identical" "$(cat "$OUT/vec_add.plain")" "$(cat "$OUT/bpftime_$name.out")"
	done
fi

[ $fail = 0 ] && echo "e2e: ALL PASS" || echo "e2e: FAILURES"
exit $fail
