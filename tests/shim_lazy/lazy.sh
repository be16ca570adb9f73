#!/usr/bin/env bash
# Kernels instrumented one at a time at their first launch (shim/lazy*.c), over
# fake_lazy_driver.c: a module of four kernels sharing a variable g, a constant array c and a
# device function is loaded as the application gave it; the one kernel launched (k_use) is
# split out, instrumented, bound to the original's g and c (the application's writes through
# cuModuleGetGlobal are what it reads), loaded and launched instead; the others cost nothing.
# Then: the second run takes the instrumented PTX from the cache (no parse, no instrumenting);
# the limits (threads per block, dynamic shared memory) and a failing instrumented launch fall
# back to the original with one line; compile errors are remembered; libraries; GPUPROBE_LAZY=0.
# usage: lazy.sh LAZY_APP SHIM FAKE_DRIVER MODULE.ptx PROBE.bpf.o
set -u
# The per-site call shape (GPUPROBE_DEFER=0): deferred sites (ptx-frontend/instrument.h) have
# their own checks in tests/e2e/aggregate_test.sh and tests/own_driver/probes.sh.
export GPUPROBE_DEFER=0
app=$1 shim=$2 fake=$3 ptx=$4 probe=$5
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }
has() { if grep -qF -- "$3" "$tmp/$2"; then ok "$1"; else bad "$1"; echo "--- no line with: $3"; cat "$tmp/$2"; fi; }
hasnt() { if grep -qF -- "$3" "$tmp/$2"; then bad "$1"; echo "--- unexpected: $3"; grep -F -- "$3" "$tmp/$2"; else ok "$1"; fi; }

# run NAME [ENV=VALUE...] [-- APP ARGS]: one process; stdout (the app's and the fake's lines) to
# NAME.out, the shim's lines to NAME.err; the app exits 1 when any call failed.
run() {
	local name=$1
	shift
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	env GPUPROBE_LOG=1 GPUPROBE_PROBES="$probe" GPUPROBE_REAL_LIBCUDA="$fake" \
		GPUPROBE_CACHE_DIR="$tmp/cache" FAKE_DUMP="$tmp/$name.inst.ptx" "${envs[@]}" \
		"$app" "$shim" "$ptx" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	[ $rc = 0 ] && ok "$name: every call of the application succeeded" ||
		{ bad "$name: exit status $rc"; cat "$tmp/$name.out" "$tmp/$name.err"; }
}
loads() { grep -E '^fake: load' "$tmp/$1.out" | sed -E 's/; text [0-9a-f]+//'; }
launches() { grep -E '^fake: launch' "$tmp/$1.out"; }

# 1. First run: the module loads as given; k_use alone is instrumented at its first launch.
run fresh
check "fresh: the original module, then k_use alone instrumented (our load in relaxed capture mode)" \
"fake: load module original: k_use k_other k_plain k_dyn (4 variables; capture mode 0)
fake: load module instrumented: k_use (1 variables; capture mode 2)" "$(loads fresh)"
has "fresh: the module's kernels wait for their first launch" fresh.err \
	"gpuprobe: module 1: 4 kernels, each instrumented at its first launch"
hasnt "fresh: no whole-module instrumentation" fresh.err "module 1: instrumented ("
grep -E '^gpuprobe: kernel k_use \(module 1\): first launch with probes in [0-9.]+ ms: parse [0-9.]+, instrument [0-9.]+, compile [0-9.]+, load [0-9.]+ ms; 3 probe sites in 1 functions; 64 registers/thread \(original 32\), 512 bytes local \(original 0\); instrumented now, cached as .*/[0-9a-f]{64}\.cubin$' \
	"$tmp/fresh.err" >/dev/null && ok "fresh: one line with the first launch's cost split" ||
	{ bad "fresh: the first-launch line"; cat "$tmp/fresh.err"; }
check "fresh: only k_use is mentioned" 1 "$(grep -c 'gpuprobe: kernel' "$tmp/fresh.err")"
check "fresh: both launches ran the instrumented k_use, reading the application's g (42) and c (7)" \
"fake: launch k_use instrumented, block 128, 0 bytes dynamic shared; reads c = 7 reads g = 42 reads g = 42 reads c = 7 reads g = 42
fake: launch k_use instrumented, block 128, 0 bytes dynamic shared; reads c = 7 reads g = 42 reads g = 42 reads c = 7 reads g = 42" \
	"$(launches fresh)"
check "fresh: the split module goes with the application's" "fake: unload an instrumented module of k_use
fake: unload an original module of k_use" "$(grep '^fake: unload' "$tmp/fresh.out")"
if command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
	PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
	"$PTXAS" -arch=sm_90 "$tmp/fresh.inst.ptx" -o "$tmp/fresh.cubin" 2>"$tmp/ptxas.err" &&
		ok "ptxas compiles the instrumented, bound k_use" ||
		{ bad "ptxas rejects the instrumented, bound k_use"; cat "$tmp/ptxas.err"; }
else
	echo "skip ptxas (not installed)"
fi

# 2. Second run: the instrumented PTX comes from the cache; nothing is parsed or instrumented,
# and the driver gets the same text.
run cached
grep -E '^gpuprobe: kernel k_use \(module 1\): first launch with probes in [0-9.]+ ms: parse [0-9.]+, instrument 0\.0, compile [0-9.]+, load [0-9.]+ ms; 3 probe sites in 1 functions; .*; instrumented PTX from the cache as .*\.cubin$' \
	"$tmp/cached.err" >/dev/null && ok "cached: instrumented PTX from the cache, no instrument work" ||
	{ bad "cached: the first-launch line"; cat "$tmp/cached.err"; }
check "cached: the driver gets the same instrumented text" \
	"$(grep 'load module instrumented' "$tmp/fresh.out")" "$(grep 'load module instrumented' "$tmp/cached.out")"
check "cached: the same launches" "$(launches fresh)" "$(launches cached)"

# 3. A block larger than the instrumented function allows: the original runs, one line.
run threads FAKE_INST_MAX_THREADS=256 -- module 512
check "threads: one line naming the limit" \
	"gpuprobe: kernel k_use: probes skipped: needs 64 registers/thread, block of 512 threads allows 256 (the original: 32 registers/thread, 1024 threads); such launches run the original" \
	"$(grep 'probes skipped' "$tmp/threads.err")"
check "threads: both launches ran the original" \
"fake: launch k_use original, block 512, 0 bytes dynamic shared;
fake: launch k_use original, block 512, 0 bytes dynamic shared;" "$(launches threads)"
run threads_fit FAKE_INST_MAX_THREADS=256 -- module 256
check "threads: a block that fits runs instrumented" 2 "$(launches threads_fit | grep -c 'k_use instrumented, block 256')"

# 4. Dynamic shared memory: the application's setting on its function reaches the instrumented
# one (at its creation and later); more than the instrumented one allows runs the original.
run dyn -- module 128 90000 100000
has "dyn: the setting made before the first launch reaches the instrumented function" dyn.out \
	"fake: set attribute 8 of instrumented k_use to 100000"
has "dyn: a later setting too" dyn.out "fake: set attribute 8 of instrumented k_use to 101024"
check "dyn: launches with 90000 bytes run instrumented" 2 "$(launches dyn | grep -c 'k_use instrumented, block 128, 90000 bytes')"
run dyn_cap FAKE_INST_MAX_DYN=50000 -- module 128 90000 100000
check "dyn: more than the instrumented function allows: one line" \
	"gpuprobe: kernel k_use: probes skipped: needs 90000 bytes of dynamic shared memory, the instrumented kernel allows 50000 beside its 0 static bytes; such launches run the original" \
	"$(grep 'probes skipped' "$tmp/dyn_cap.err")"
check "dyn: ... and the original runs" 2 "$(launches dyn_cap | grep -c 'k_use original')"

# 5. The instrumented launch fails (out of resources): launched again as the original, one
# line, and the kernel runs without probes from then on; the application sees success.
run oor FAKE_INST_LAUNCH_FAIL=1
check "launch failure: one line" \
	"gpuprobe: kernel k_use: probes skipped: the instrumented kernel's launch failed (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; it needs 64 registers/thread and 512 bytes of local memory per thread, the original 32 and 0); launched the original, which runs without probes from now on" \
	"$(grep 'probes skipped' "$tmp/oor.err")"
check "launch failure: the original ran, then runs" \
"fake: launch k_use instrumented refused (out of resources)
fake: launch k_use original, block 128, 0 bytes dynamic shared; reads c = 7 reads g = 42 reads g = 42 reads c = 7 reads g = 42
fake: launch k_use original, block 128, 0 bytes dynamic shared; reads c = 7 reads g = 42 reads g = 42 reads c = 7 reads g = 42" \
	"$(launches oor | sed 's/ reads.*//; s/shared;$/shared; reads c = 7 reads g = 42 reads g = 42 reads c = 7 reads g = 42/')"

# 6. A compile error: one line, the original runs; remembered, so the next run does not compile.
rm -rf "$tmp/cache"
msg="gpuprobe: kernel k_use (module 1): the instrumented kernel did not compile (CUDA_ERROR_INVALID_PTX: ptxas fatal : (C7600) Register allocation failed with register count of '7'. Compile the program with a higher register target); runs without probes"
run jitfail FAKE_JIT_FAIL=1
check "compile error: one line" "$msg" "$(grep 'did not compile' "$tmp/jitfail.err")"
check "compile error: the original runs" 2 "$(launches jitfail | grep -c 'k_use original')"
run jitfail2 FAKE_JIT_FAIL=1
check "compile error again: the same line" "$msg" "$(grep 'did not compile' "$tmp/jitfail2.err")"
hasnt "compile error again: no compile" jitfail2.out "refused (instrumented PTX)"

# 7. A library (the CUDA runtime's path): the kernel handle is a CUkernel, variables come from
# cuLibraryGetGlobal.
rm -rf "$tmp/cache"
run library -- library
check "library: the original library, then k_use alone instrumented" \
"fake: load library original: k_use k_other k_plain k_dyn (4 variables; capture mode 0)
fake: load module instrumented: k_use (1 variables; capture mode 2)" "$(loads library)"
check "library: launches run instrumented, reading the application's g and c" 2 \
	"$(launches library | grep -c 'k_use instrumented, block 128, 0 bytes dynamic shared; reads c = 7 reads g = 42')"

# 8. Two kernels first launched at once from two threads: compiled in parallel (the fake's JIT
# of an instrumented module takes 300 ms outside its lock; both ran at once), each instrumented.
rm -rf "$tmp/cache"
run parallel FAKE_JIT_MS=300 -- threads
check "parallel: the two compiles ran at once" 2 \
	"$(sed -nE 's/^fake: compiles of instrumented PTX so far: at most ([0-9]+) at once$/\1/p' "$tmp/parallel.out" | sort -n | tail -1)"
check "parallel: both kernels instrumented at their first launch" "k_plain
k_use" "$(sed -nE 's/^gpuprobe: kernel ([a-z_]+) \(module 1\): first launch with probes in .*/\1/p' "$tmp/parallel.err" | sort)"
check "parallel: both launches ran instrumented code" 2 "$(launches parallel | grep -c ' instrumented, block 128')"

# 9. GPUPROBE_DUMP_DIR: the instrumented, bound kernel written beside the module's PTX.
run dump GPUPROBE_DUMP_DIR="$tmp/dump"
h=$(python3 -c 'import sys
x = 2166136261
for b in b"k_use": x = ((x ^ b) * 16777619) & 0xffffffff
print("%08x" % x)')
if grep -q '^\.visible \.entry k_use' "$tmp/dump/module-0001-k$h.ptx" 2>/dev/null &&
   grep -q 'ld.const.u64.*%gp_bind0, \[__gp_bind' "$tmp/dump/module-0001-k$h.ptx" && cmp -s "$tmp/dump/module-0001-k$h.ptx" "$tmp/dump.inst.ptx"; then
	ok "GPUPROBE_DUMP_DIR: module-0001-k$h.ptx is what the driver got"
else
	bad "GPUPROBE_DUMP_DIR: no module-0001-k$h.ptx as loaded"; ls "$tmp/dump"
fi

# 10. GPUPROBE_LAZY=0: every module instrumented whole at load, as before.
run whole GPUPROBE_LAZY=0
has "GPUPROBE_LAZY=0: the whole module instrumented at load" whole.err "gpuprobe: module 1: instrumented ("
check "GPUPROBE_LAZY=0: the driver gets the whole instrumented module" \
	"fake: load module instrumented: k_use k_other k_plain k_dyn (4 variables; capture mode 0)" \
	"$(loads whole | tail -1)"

[ $fails = 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }
