#!/bin/bash
# torch.compile under gpuprobe (issue 16), on the GPU machine: a small MLP trained for 50 steps by
# torch.compile (jit/compile_mlp.py: Inductor's Triton kernels for the forward and backward graphs,
# deterministic algorithms, pointwise autotuning off: one configuration per kernel).
#   1. plain, fresh caches (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR of its own), with
#      torch.profiler (CUPTI) over the training steps after the first: per Triton kernel the sum of
#      grid x block over its launches, as the driver ran them. The first step compiles, and its
#      compile-time launches (benchmarks: another geometry, and counts a probed run need not
#      share) are not training launches; every later step launches the same kernels the same way,
#      so a run of STEPS steps without compile-time launches makes STEPS / (STEPS - 1) times the
#      profiled launches and threads (a kernel whose profiled count is not a multiple of
#      STEPS - 1 is a FAIL: the steps are not alike)
#   2. under `gpuprobe run -p jit_counters.bpf.o -t launches` (jit/jit_counters.bpf.c: an entry
#      and an exit counter per kernel; as a one-liner when prepare.sh has not built it), fresh
#      caches of its own (so Triton
#      runs ptxas, which is gpuprobe-ptxas, and every kernel gets probes): exit 0; the 50 losses
#      bit-identical to run 1; for every triton_* kernel entries = exits = run 1's grid x block for
#      50 steps exactly, and = the threads the launches tool saw asked of the driver in the same run
#      (cuLaunchKernel*'s grid x block), launches equal (a difference names both runs' grid x block
#      per launch); no Triton kernel the profiler did not see
#   3. overhead: the cached second runs, plain on run 1's caches and probed (entry+exit counters
#      only, no launches tool) on run 2's caches and gpuprobe cache, WARM_RUNS (5) each, alternately
#      (two were too few: the same plain run took 14.2 and 16.8 s on one H100, 2026-11-27):
#      the losses and counts again, and per round the training loop (steps 2..50) and whole run
#      (wall clock, python start to exit): the median over rounds of probed / plain within 1.10
# Prints PASS/FAIL/INFO lines; every run's stdout and stderr under $OUT. About 2-3 minutes (the
# two cold runs compile: 30-60 s each). usage: tests/gpu/jit_ml.sh (BUILD as in jit.sh: a
# tests/gpu/prepare.sh build, default ./build, then build-jit). Exit 77 without a GPU, the build,
# or PyTorch with Triton.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then
	for b in "$root/build" "$root/build-jit"; do
		[ -x "$b/bin/gpuprobe" ] && [ -x "$b/bin/gpuprobe-ptxas" ] && { BUILD=$b; break; }
	done
	BUILD=${BUILD:-$root/build}
fi
BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$BUILD")
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
GP=$BUILD/bin/gpuprobe
J=$root/tests/gpu/jit
for f in "$GP" "$BUILD/bin/gpuprobe-ptxas"; do
	if [ ! -e "$f" ]; then
		echo "SKIP: $f missing (tests/gpu/prepare.sh $BUILD)"
		exit 77
	fi
done
if ! python3 -c 'import torch, triton; assert torch.cuda.is_available()' 2>/dev/null; then
	echo "SKIP: no python3 with PyTorch, Triton and CUDA"
	exit 77
fi
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset GPUPROBE_PROBES GPUPROBE_CONFIG GPUPROBE_JSON GPUPROBE_LOG GPUPROBE_INTERVAL \
	GPUPROBE_LAUNCH_SKIP GPUPROBE_LAUNCH_COUNT LD_AUDIT TORCHINDUCTOR_FORCE_DISABLE_CACHES
export GPUPROBE_TOP=1000000 CUBLAS_WORKSPACE_CONFIG=:4096:8 PYTHONHASHSEED=0 STEPS=50
# the entry+exit counter (tests/gpu/prepare.sh builds it); without it, the same as a one-liner
COUNTERS=$BUILD/gpu-jit/jit_counters.bpf.o
if [ -e "$COUNTERS" ]; then
	probe=(-p "$COUNTERS")
else
	probe=(-e 'gpu/entry/* { @entries[kernel] = count(); } gpu/exit/* { @exits[kernel] = count(); }')
	echo "INFO $COUNTERS missing (run tests/gpu/prepare.sh again): the same counters as a one-liner"
fi
# gpuprobe-ptxas runs the ptxas on PATH, else /usr/local/cuda/bin/ptxas; without either, Triton's
if ! command -v ptxas >/dev/null && [ ! -x /usr/local/cuda/bin/ptxas ] && [ -z "${GPUPROBE_REAL_PTXAS:-}" ]; then
	GPUPROBE_REAL_PTXAS=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas"))')
	export GPUPROBE_REAL_PTXAS
	echo "INFO no ptxas on PATH or in /usr/local/cuda: GPUPROBE_REAL_PTXAS=$GPUPROBE_REAL_PTXAS"
fi
fail=0
pass() { echo "PASS $*"; }
failed() { echo "FAIL $*"; fail=1; }
info() { echo "INFO $*"; }
check() { if [ "$2" = "$3" ]; then pass "$1 = $3"; else failed "$1: expected $2, got '$3'"; fi; }
# "@map[KERNEL]: N" of a report
val() { grep -F "@$2[$3]: " "$1" | tail -1 | sed 's/.*\]: //'; }
now() { date +%s.%N; }

P=$OUT/ind-plain Q=$OUT/ind-probed G=$OUT/gpcache
rm -rf "$P" "$Q" "$G" "$OUT/runs.txt"
plain_env=(env TORCHINDUCTOR_CACHE_DIR="$P" TRITON_CACHE_DIR="$P/triton")
probed_env=(env TORCHINDUCTOR_CACHE_DIR="$Q" TRITON_CACHE_DIR="$Q/triton" GPUPROBE_CACHE_DIR="$G")
# mlp NAME plain|probed [ARGS]: one run; NAME.out (stdout), NAME.err; its wall time in NAME.wall
mlp() {
	local name=$1 side=$2 rc t
	shift 2
	t=$(now)
	if [ "$side" = plain ]; then
		"${plain_env[@]}" timeout 600 python3 "$J/compile_mlp.py" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	else
		"${probed_env[@]}" timeout 600 "$GP" run "${probe[@]}" "$@" -- python3 "$J/compile_mlp.py" \
			>"$OUT/$name.out" 2>"$OUT/$name.err"
	fi
	rc=$?
	awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }' >"$OUT/$name.wall"
	echo "rc=$rc $name" >>"$OUT/runs.txt"
	echo "--- $name: exit $rc, $(cat "$OUT/$name.wall") s; $(grep '^time' "$OUT/$name.out" | tr '\n' ' ')"
	[ $rc = 0 ] || tail -5 "$OUT/$name.err"
	return $rc
}
losses() { grep '^loss ' "$1" | awk '{print $2, $3}'; }

# 1 and 2: the cold runs
mlp plain-cold plain --profile
check "torch.compile plain run: exit status" 0 "$(sed -n 's/^rc=\([0-9]*\) plain-cold$/\1/p' "$OUT/runs.txt")"
GPUPROBE_LOG=1 mlp probed-cold probed -t launches
check "torch.compile under gpuprobe: exit status" 0 "$(sed -n 's/^rc=\([0-9]*\) probed-cold$/\1/p' "$OUT/runs.txt")"
grep -E "did not|not instrumented|probes skipped|cubin with no PTX" "$OUT/probed-cold.err" | sort | uniq -c | sort -rn | head -5
nl=$(losses "$OUT/plain-cold.out" | wc -l)
check "torch.compile: losses printed" "$STEPS" "$nl"
if [ "$nl" = "$STEPS" ] && [ "$(losses "$OUT/plain-cold.out")" = "$(losses "$OUT/probed-cold.out")" ]; then
	pass "torch.compile: $STEPS losses bit-identical with and without probes (last $(losses "$OUT/plain-cold.out" | tail -1))"
else
	failed "torch.compile: losses differ with probes (first difference: $(diff <(losses "$OUT/plain-cold.out") <(losses "$OUT/probed-cold.out") | head -4 | tr '\n' ' '))"
fi
grep -q "^expect-error" "$OUT/plain-cold.out" && failed "torch.compile: $(grep -m1 '^expect-error' "$OUT/plain-cold.out")"
info "torch.compile plain run: $(grep '^profiler' "$OUT/plain-cold.out")"
nrec=$(grep -c "a cubin whose PTX ptxas recorded" "$OUT/probed-cold.err")
info "torch.compile under gpuprobe: $nrec cubins instrumented from gpuprobe-ptxas's records, $(ls "$G" 2>/dev/null | grep -c '\.jitptx$') records made"
# the profiled training steps (2..STEPS) scaled to the whole run: "expect NAME THREADS LAUNCHES
# PER_LAUNCH" for STEPS steps
S=$(sed -n 's/^profiler .* steps \([0-9][0-9]*\)$/\1/p' "$OUT/plain-cold.out" | head -1)
: >"$OUT/profiled-expect.txt"
while read -r _ k t l per; do
	if [ -n "$S" ] && [ "$S" -gt 0 ] && [ $((l % S)) = 0 ] && [ $((t % S)) = 0 ]; then
		echo "expect $k $((t / S * STEPS)) $((l / S * STEPS)) $per" >>"$OUT/profiled-expect.txt"
	else
		failed "torch.compile: $k: the profiler saw $l launches ($t threads, $per per launch) in ${S:-?} training steps: not the same in every step"
	fi
done < <(grep '^profiled ' "$OUT/plain-cold.out")
nk=$(grep -c '^expect ' "$OUT/profiled-expect.txt")
if [ "$nk" -gt 0 ]; then
	pass "torch.compile: the profiler saw $nk Inductor Triton kernels in training steps 2..$STEPS"
else
	failed "torch.compile: the profiler (CUPTI) saw no triton_* kernel: the launches tool's counts are the expected ones below"
fi
# every kernel the profiler saw: entries = exits = its grid x block, = the launches tool's threads
# per() THREADS LAUNCHES: threads per launch ("?" when not whole)
per() { [ -n "$1" ] && [ -n "$2" ] && [ "$2" -gt 0 ] 2>/dev/null && [ $(($1 % $2)) = 0 ] && echo $(($1 / $2)) || echo "?"; }
ok=0 bad=0
while read -r _ k want nlaunch geo; do
	e=$(val "$OUT/probed-cold.err" entries "$k") x=$(val "$OUT/probed-cold.err" exits "$k")
	ht=$(val "$OUT/probed-cold.err" threads "$k") hl=$(val "$OUT/probed-cold.err" launches "$k")
	if [ "$e" = "$want" ] && [ "$x" = "$want" ] && [ "$ht" = "$want" ] && [ "$hl" = "$nlaunch" ]; then
		ok=$((ok + 1))
		echo "  $k: $nlaunch launches, entries = exits = $want"
	else
		bad=$((bad + 1))
		failed "torch.compile: $k: profiler $nlaunch launches / $want threads in $STEPS steps ($geo per launch); gpuprobe: entries '${e}', exits '${x}', launches tool '${hl}' launches / '${ht}' threads ($(per "$ht" "$hl") per launch)"
	fi
done < <(grep '^expect ' "$OUT/profiled-expect.txt")
[ "$nk" -gt 0 ] && [ $bad = 0 ] &&
	pass "torch.compile: all $ok Triton kernels: entries = exits = grid x block of every launch (profiler and launches tool agree)"
# every triton_* kernel the driver was asked to launch under gpuprobe (the launches tool): counted
# exactly, and one the plain run launched too. Their list is the expected one for the cached runs.
: >"$OUT/expect.txt"
nh=0 bad=0 extra=0
while read -r k; do
	nh=$((nh + 1))
	t=$(val "$OUT/probed-cold.err" threads "$k") e=$(val "$OUT/probed-cold.err" entries "$k") x=$(val "$OUT/probed-cold.err" exits "$k")
	echo "expect $k $t $(val "$OUT/probed-cold.err" launches "$k")" >>"$OUT/expect.txt"
	[ "$e" = "$t" ] && [ "$x" = "$t" ] ||
		{ bad=$((bad + 1)); failed "torch.compile: $k: the launches tool's $t threads, entries '$e', exits '$x'"; }
	if [ "$nk" -gt 0 ] && ! grep -q "^expect $k " "$OUT/profiled-expect.txt"; then
		extra=$((extra + 1))
		failed "torch.compile: $k launched under gpuprobe ($t threads) but not in the plain run's training steps"
	fi
done < <(grep -o '^@threads\[triton_[^]]*\]' "$OUT/probed-cold.err" | sed 's/^@threads\[//; s/\]$//' | sort -u)
if [ $nh -gt 0 ] && [ $bad = 0 ]; then
	pass "torch.compile: all $nh triton_* kernels launched under gpuprobe: entries = exits = the launches tool's grid x block"
elif [ $nh = 0 ]; then
	failed "torch.compile: the launches tool saw no triton_* kernel launched under gpuprobe"
fi
[ "$nk" -gt 0 ] && [ $extra = 0 ] && pass "torch.compile: no Triton kernel under gpuprobe that the plain run did not launch"
[ "$nk" -gt 0 ] && cp "$OUT/profiled-expect.txt" "$OUT/expect.txt"
nk=$(grep -c '^expect ' "$OUT/expect.txt")

# 3: cached second runs, alternately (plain, probed), WARM_RUNS rounds
WARM_RUNS=${WARM_RUNS:-5}
for r in $(seq "$WARM_RUNS"); do
	mlp plain-warm$r plain
	mlp probed-warm$r probed
done
for r in $(seq "$WARM_RUNS"); do
	for s in plain probed; do
		check "torch.compile $s-warm$r: exit status" 0 "$(sed -n "s/^rc=\([0-9]*\) $s-warm$r\$/\1/p" "$OUT/runs.txt")"
		[ "$nl" = "$STEPS" ] && [ "$(losses "$OUT/$s-warm$r.out")" = "$(losses "$OUT/plain-cold.out")" ] &&
			pass "torch.compile $s-warm$r (cached): the $STEPS losses bit-identical to the plain cold run's" ||
			failed "torch.compile $s-warm$r (cached): losses differ from the plain cold run's"
	done
	bad=0
	while read -r _ k want _; do
		[ "$(val "$OUT/probed-warm$r.err" entries "$k")" = "$want" ] &&
			[ "$(val "$OUT/probed-warm$r.err" exits "$k")" = "$want" ] || bad=$((bad + 1))
	done < <(grep '^expect ' "$OUT/expect.txt")
	[ "$nk" -gt 0 ] && [ $bad = 0 ] &&
		pass "torch.compile probed-warm$r (cached): entries = exits = grid x block for all $nk Triton kernels" ||
		failed "torch.compile probed-warm$r (cached): $bad of $nk Triton kernels counted wrong"
done
loop() { sed -n 's/^time first_step_s [0-9.]* loop_s \([0-9.]*\) .*/\1/p' "$1"; }
best() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | head -1; }
each() { for r in $(seq "$WARM_RUNS"); do "$1" "$OUT/$2-warm$r.$3"; done; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", b / a; else print "none" }'; }
within() { awk -v r="$1" 'BEGIN { exit !(r != "none" && r + 0 <= 1.10) }'; }
# The judged ratio is the median over rounds of each round's probed / plain (the two runs of a
# round are back to back), as bench/ judges its workloads: the 49-step loop is 0.12 s of Python
# launching kernels, and one H100 gave the same plain loop 0.118, 0.154 and 0.209 s in three
# rounds (2026-11-27), so a best-of-each ratio pairs runs minutes apart and swings by 10%.
rounds() {   # $1: loop or cat, $2: out or wall -> the per-round ratios, one a line
	for r in $(seq "$WARM_RUNS"); do
		ratio "$("$1" "$OUT/plain-warm$r.$2")" "$("$1" "$OUT/probed-warm$r.$2")"; echo
	done
}
median() { grep -E '^[0-9.]+$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "none" }'; }
lp=$(best $(each loop plain out)) lq=$(best $(each loop probed out))
wp=$(best $(each cat plain wall)) wq=$(best $(each cat probed wall))
rl=$(rounds loop out | median) rw=$(rounds cat wall | median)
info "torch.compile cached runs: training loop ($((STEPS - 1)) steps) plain $lp s, probed $lq s; whole run plain $wp s, probed $wq s (best of $WARM_RUNS each); per-round loop ratios $(rounds loop out | tr '\n' ' ')whole-run ratios $(rounds cat wall | tr '\n' ' ')"
within "$rl" && pass "torch.compile overhead: training loop probed / plain = $rl, median of $WARM_RUNS rounds (<= 1.10)" ||
	failed "torch.compile overhead: training loop probed / plain = $rl, median of $WARM_RUNS rounds (> 1.10)"
within "$rw" && pass "torch.compile overhead: whole cached run probed / plain = $rw, median of $WARM_RUNS rounds (<= 1.10)" ||
	failed "torch.compile overhead: whole cached run probed / plain = $rw, median of $WARM_RUNS rounds (> 1.10)"

[ $fail = 0 ] && echo "jit_ml: all checks passed" || echo "jit_ml: FAILURES"
exit $fail
