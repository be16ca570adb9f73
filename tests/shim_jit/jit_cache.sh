#!/usr/bin/env bash
# The shim compiles instrumented modules itself and caches the cubins (shim/jit_compile.c,
# shim/cubin_cache.c), over fake_jit_driver.c: what the driver is handed on every load path
# (jit_cache_test prints it), the log lines, the cache's files, in runs that hit, miss, meet
# corrupt entries, fail to compile, and run without a context or without the cache.
# usage: jit_cache.sh JIT_CACHE_TEST SHIM FAKE_DRIVER PTX PROBE.bpf.o
set -u
bin=$1 shim=$2 fake=$3 ptx=$4 probe=$5
tmp=$(mktemp -d); trap 'chmod -R u+rwx "$tmp"; rm -rf "$tmp"' EXIT
export GPUPROBE_AGGREGATE=0   # the logs below name a probe site per access (merging: e2e.aggregate)
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }

# run NAME [ENV=VALUE...] [-- ARGS]: one process; stdout to NAME.out, the shim's lines to NAME.err
run() {
	local name=$1
	shift
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	env GPUPROBE_LOG=1 GPUPROBE_PROBES="$probe" GPUPROBE_REAL_LIBCUDA="$fake" GPUPROBE_PRECOMPILE=link \
		GPUPROBE_LAZY=0 \
		GPUPROBE_CACHE_DIR="$tmp/cache" "${envs[@]}" \
		"$bin" "$shim" "$fake" "$ptx" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	[ $rc = 0 ] || { bad "$name: exit status $rc"; cat "$tmp/$name.out" "$tmp/$name.err"; }
}
# what the loads handed the driver, hashes replaced by the names of what they hash
loads() { sed -E "s/hash=$2/hash=CUBIN/; s/hash=$3/hash=INSTRUMENTED/; s/hash=$4/hash=ORIGINAL/" "$tmp/$1.out"; }
# the shim's lines about modules, times and the cache directory made constant
lines() { grep -E '^gpuprobe: (module [0-9]+: |cubin cache)' "$tmp/$1.err" | sed -E "s/ in [0-9.]+ ms/ in T ms/; s/, [0-9.]+ ms\)/, T ms)/; s#$tmp/cache#CACHE#g; s#/[0-9a-f]{64}\.cubin#/KEY.cubin#g"; }
hash_of() { sed -nE "s/^$2: .* hash=([0-9a-f]{16}) .*/\1/p" "$tmp/$1.out"; }
entries() { find "$tmp/cache" -name '*.cubin' 2>/dev/null | wc -l; }

# Whole modules instrumented at load (GPUPROBE_LAZY=0: what a module whose kernels cannot be split
# out gets; per-kernel instrumentation is tests/shim_lazy).
# Sections 1-7 use GPUPROBE_PRECOMPILE=link (the JIT linker and the cubin cache); section 8 the
# default, check (the driver's own JIT compiles once at load; the load then takes its cached code).

# 1. First run, empty cache: two modules compiled and cached, one without a context left to the
# driver, one with symbol tables compiled but not cached.
run first
C=$(hash_of first cuModuleLoadDataEx) I=$(hash_of first "cuModuleLoadData without a context")
# The original PTX as the fake hashes it (FNV-1a 64 of the text and its NUL).
O=$(python3 -c '
import sys
h = 1469598103934665603
for b in open(sys.argv[1], "rb").read() + b"\0":
    h = ((h ^ b) * 1099511628211) % (1 << 64)
print("%016x" % h)' "$ptx")
check "first run: what the driver got" "cuModuleLoadDataEx: rc=0 image=cubin hash=CUBIN links=1 link_options=5:set,6:16383,3:set,4:16383,0:40,13:1 load_options=4 (the application's)
cuLibraryLoadData: rc=0 image=cubin hash=CUBIN links=2 link_options=5:set,6:16383,3:set,4:16383,7:3 load_options=1 (the application's)
cuModuleLoadData without a context: rc=0 image=ptx-instr hash=INSTRUMENTED links=2 link_options=- load_options=0
cuModuleLoadDataEx with symbol tables: rc=0 image=cubin hash=CUBIN links=3 link_options=5:set,6:16383,3:set,4:16383,17:set,18:set,19:1 load_options=3 (the application's)" \
	"$(loads first "$C" "$I" "$O")"
check "first run: log" "gpuprobe: module 1: instrumented (3 probe sites in 1 functions) in T ms
gpuprobe: module 1: compiled in T ms by the driver's JIT linker (sm_90, cubin 99 bytes); cached as CACHE/KEY.cubin
gpuprobe: module 2: instrumented (3 probe sites in 1 functions) in T ms
gpuprobe: module 2: compiled in T ms by the driver's JIT linker (sm_90, cubin 99 bytes); cached as CACHE/KEY.cubin
gpuprobe: module 3: instrumented (3 probe sites in 1 functions) in T ms
gpuprobe: module 3: no current context: the driver compiles the instrumented PTX
gpuprobe: module 4: instrumented (3 probe sites in 1 functions) in T ms
gpuprobe: module 4: compiled in T ms by the driver's JIT linker (sm_90, cubin 99 bytes); not cached (the JIT options pass symbol tables)" \
	"$(lines first)"
check "cache: 2 entries (the options differ, so do the keys)" 2 "$(entries)"
check "cache directory mode" 700 "$(stat -c %a "$tmp/cache")"
check "cache entry modes" "600 600" "$(stat -c %a "$tmp"/cache/*.cubin | xargs)"
[ -z "$(ls -A "$tmp/cache" | grep -v '\.cubin$')" ] && ok "no temporary files left" || bad "temporary files left: $(ls -A "$tmp/cache")"

# 2. Second run: both cached modules come from the cache, no JIT at all, the same bytes.
run second
check "cached run: what the driver got" "cuModuleLoadDataEx: rc=0 image=cubin hash=CUBIN links=0 link_options=- load_options=4 (the application's)
cuLibraryLoadData: rc=0 image=cubin hash=CUBIN links=0 link_options=- load_options=1 (the application's)
cuModuleLoadData without a context: rc=0 image=ptx-instr hash=INSTRUMENTED links=0 link_options=- load_options=0
cuModuleLoadDataEx with symbol tables: rc=0 image=cubin hash=CUBIN links=1 link_options=5:set,6:16383,3:set,4:16383,17:set,18:set,19:1 load_options=3 (the application's)" \
	"$(loads second "$C" "$I" "$O")"
check "cached run: log" "gpuprobe: module 1: instrumented (3 probe sites in 1 functions) in T ms
gpuprobe: module 1: cubin from the cache (CACHE/KEY.cubin, 99 bytes, T ms)
gpuprobe: module 2: instrumented (3 probe sites in 1 functions) in T ms
gpuprobe: module 2: cubin from the cache (CACHE/KEY.cubin, 99 bytes, T ms)
gpuprobe: module 3: instrumented (3 probe sites in 1 functions) in T ms
gpuprobe: module 3: no current context: the driver compiles the instrumented PTX
gpuprobe: module 4: instrumented (3 probe sites in 1 functions) in T ms
gpuprobe: module 4: compiled in T ms by the driver's JIT linker (sm_90, cubin 99 bytes); not cached (the JIT options pass symbol tables)" \
	"$(lines second)"

# 3. Corrupt entries (a flipped byte, a truncated file): ignored, compiled again, rewritten.
ent=("$tmp"/cache/*.cubin)
printf 'Z' | dd of="${ent[0]}" bs=1 seek=150 conv=notrunc status=none
truncate -s 50 "${ent[1]}"
run corrupt
check "corrupt entries: JIT runs" "links=1 links=2" "$(grep -oE '^cuModuleLoadDataEx: .*links=[0-9]+|^cuLibraryLoadData: .*links=[0-9]+' "$tmp/corrupt.out" | grep -oE 'links=[0-9]+' | xargs)"
check "corrupt entries: log" "gpuprobe: module 1: cache entry CACHE/KEY.cubin is corrupt: compiled again
gpuprobe: module 2: cache entry CACHE/KEY.cubin is corrupt: compiled again" \
	"$(lines corrupt | grep 'cache entry')"
check "corrupt entries: loads unchanged" "$(loads second "$C" "$I" "$O" | sed 's/ links=.*load_options/ load_options/')" \
	"$(loads corrupt "$C" "$I" "$O" | sed 's/ links=.*load_options/ load_options/')"
run rewritten
check "rewritten entries hit" 2 "$(lines rewritten | grep -c 'cubin from the cache')"

# 4. The key follows what changes the code: another register limit, device, driver version.
run maxreg -- 64
check "max registers 64: module 1 compiled, module 2 (no such option) from the cache" \
	"compiled cubin" "$(lines maxreg | sed -nE 's/^gpuprobe: module [12]: (compiled|cubin) .*/\1/p' | xargs)"
check "max registers 64 reached the linker" 1 "$(grep -c '^cuModuleLoadDataEx: .*link_options=5:set,6:16383,3:set,4:16383,0:64,13:1 ' "$tmp/maxreg.out")"
run sm80 FAKE_SM=80
check "another compute capability misses" "compiled compiled" "$(lines sm80 | sed -nE 's/^gpuprobe: module [12]: (compiled|cubin) .*sm_80.*/\1/p' | xargs)"
run drv FAKE_DRIVER_VERSION=13010
check "another driver version misses" "compiled compiled" "$(lines drv | sed -nE 's/^gpuprobe: module [12]: (compiled|cubin) .*/\1/p' | xargs)"
check "cache: one entry per key (2 + 1 + 2 + 2)" 7 "$(entries)"

# 5. A compile error: one line per module naming the compiler's first error, the original PTX
# loaded with the application's options; the error is remembered, so the next run gives the
# same lines without running the JIT.
rm -rf "$tmp/cache"
run fail FAKE_LINK_FAIL=1
check "compile error: what the driver got" "cuModuleLoadDataEx: rc=0 image=ptx hash=ORIGINAL links=1 link_options=5:set,6:16383,3:set,4:16383,0:40,13:1 load_options=4 (the application's)
cuLibraryLoadData: rc=0 image=ptx hash=ORIGINAL links=2 link_options=5:set,6:16383,3:set,4:16383,7:3 load_options=1 (the application's)
cuModuleLoadData without a context: rc=0 image=ptx-instr hash=INSTRUMENTED links=2 link_options=- load_options=0
cuModuleLoadDataEx with symbol tables: rc=0 image=ptx hash=ORIGINAL links=3 link_options=5:set,6:16383,3:set,4:16383,17:set,18:set,19:1 load_options=3 (the application's)" \
	"$(loads fail "$C" "$I" "$O")"
msg="the instrumented PTX did not compile (CUDA_ERROR_INVALID_PTX: ptxas fatal : (C7600) Register allocation failed with register count of '7'. Compile the program with a higher register target); loaded the original without probes"
want="gpuprobe: module 1: $msg
gpuprobe: module 2: $msg
gpuprobe: module 4: $msg"
check "compile error: one line per module" "$want" "$(grep 'did not compile' "$tmp/fail.err")"
check "compile error: remembered (2 cacheable modules)" 2 "$(entries)"
run fail_quiet FAKE_LINK_FAIL=1 GPUPROBE_LOG=0
check "compile error again, without GPUPROBE_LOG: the same lines, nothing else" "$want" "$(cat "$tmp/fail_quiet.err")"
check "compile error again: the JIT ran for the uncacheable module only" "links=0 links=0 links=0 links=1" \
	"$(grep -oE 'links=[0-9]+' "$tmp/fail_quiet.out" | xargs)"
run fail_log FAKE_LINK_FAIL=1
check "compile error again: log" "gpuprobe: module 1: compile error from the cache (CACHE/KEY.cubin)
gpuprobe: module 2: compile error from the cache (CACHE/KEY.cubin)" "$(lines fail_log | grep 'from the cache')"
check "compile error again: the original loaded" "$(loads fail "$C" "$I" "$O" | sed 's/ links=.*load_options/ load_options/')" \
	"$(loads fail_log "$C" "$I" "$O" | sed 's/ links=.*load_options/ load_options/')"
run fault GPUPROBE_TEST_FAULT=compile
check "GPUPROBE_TEST_FAULT=compile: the compiler's parse error" \
	"gpuprobe: module 1: the instrumented PTX did not compile (CUDA_ERROR_INVALID_PTX: ptxas application ptx input, line 9; fatal : Parsing error near '.gpuprobe_test_fault': syntax error); loaded the original without probes" \
	"$(grep 'module 1: the instrumented' "$tmp/fault.err")"
check "GPUPROBE_TEST_FAULT=compile: the original loaded" "image=ptx hash=ORIGINAL" "$(loads fault "$C" "$I" "$O" | head -1 | grep -oE 'image=[a-z-]+ hash=[A-Z]+')"

# 6. Without the cache, and with a cache directory others can write to: compiled every time.
rm -rf "$tmp/cache"
run nocache GPUPROBE_CACHE=0
check "GPUPROBE_CACHE=0: compiled, not cached" "gpuprobe: module 1: compiled in T ms by the driver's JIT linker (sm_90, cubin 99 bytes); not cached (GPUPROBE_CACHE=0)" "$(lines nocache | grep 'module 1: compiled')"
[ -e "$tmp/cache" ] && bad "GPUPROBE_CACHE=0 created the directory" || ok "GPUPROBE_CACHE=0 creates no directory"
mkdir -m 777 "$tmp/cache"
chmod 777 "$tmp/cache"
run open
check "a directory others can write to: one line, compiled, nothing written" "gpuprobe: cubin cache CACHE: is writable by others (chmod 700 it); instrumented modules are compiled at every run
gpuprobe: module 1: compiled in T ms by the driver's JIT linker (sm_90, cubin 99 bytes); not cached (no usable cache directory)" \
	"$(lines open | grep -E 'cubin cache|module 1: compiled')"
check "nothing written there" 0 "$(entries)"
rm -rf "$tmp/cache"

# 7. GPUPROBE_PRECOMPILE=0: the instrumented PTX goes to the driver's JIT, as before.
run driverjit GPUPROBE_PRECOMPILE=0
check "GPUPROBE_PRECOMPILE=0: the driver gets instrumented PTX, no JIT linker" "image=ptx-instr links=0
image=ptx-instr links=0
image=ptx-instr links=0
image=ptx-instr links=0" "$(loads driverjit "$C" "$I" "$O" | grep -oE 'image=[a-z-]+|links=[0-9]+' | paste -d' ' - -)"

# 8. GPUPROBE_PRECOMPILE=check (the default): the driver's own JIT compiles the instrumented PTX
# once at load with the application's options (loaded, every function loaded, unloaded); the
# application's load then gets the instrumented PTX. No cubin is cached, but the check's outcome
# is: a success lets the next run skip the check, a compile error gives the same one line, the
# original is loaded, and the error is remembered.
rm -rf "$tmp/cache"
run check GPUPROBE_PRECOMPILE=check
check "check: the driver gets instrumented PTX, no JIT linker" "image=ptx-instr links=0
image=ptx-instr links=0
image=ptx-instr links=0
image=ptx-instr links=0" "$(loads check "$C" "$I" "$O" | grep -oE 'image=[a-z-]+|links=[0-9]+' | paste -d' ' - -)"
check "check: log" "gpuprobe: module 1: compiled in T ms by the driver's JIT (sm_90, checked; the load takes the code from the driver's JIT cache)
gpuprobe: module 2: compiled in T ms by the driver's JIT (sm_90, checked; the load takes the code from the driver's JIT cache)
gpuprobe: module 3: no current context: the driver compiles the instrumented PTX
gpuprobe: module 4: compiled in T ms by the driver's JIT (sm_90, checked; the load takes the code from the driver's JIT cache)" \
	"$(lines check | grep -v ": instrumented (")"
check "check: the successful checks remembered (2 cacheable modules)" 2 "$(entries)"
run check2 GPUPROBE_PRECOMPILE=check
check "check again: no second check, the driver gets instrumented PTX" "gpuprobe: module 1: compiled before (CACHE/KEY.cubin): the driver's JIT cache has the code
gpuprobe: module 2: compiled before (CACHE/KEY.cubin): the driver's JIT cache has the code
gpuprobe: module 3: no current context: the driver compiles the instrumented PTX
gpuprobe: module 4: compiled in T ms by the driver's JIT (sm_90, checked; the load takes the code from the driver's JIT cache)" \
	"$(lines check2 | grep -v ": instrumented (")"
check "check again: what the driver got" "$(loads check "$C" "$I" "$O")" "$(loads check2 "$C" "$I" "$O")"
rm -rf "$tmp/cache"
run checkfail GPUPROBE_PRECOMPILE=check FAKE_JIT_FAIL=1
check "check, compile error: one line per module with a context (module 3 has none: its load fails and falls back), the original loaded" "$want" "$(grep 'did not compile' "$tmp/checkfail.err")"
check "check, compile error: what the driver got" "image=ptx hash=ORIGINAL
image=ptx hash=ORIGINAL
image=ptx hash=ORIGINAL
image=ptx hash=ORIGINAL" "$(loads checkfail "$C" "$I" "$O" | grep -oE 'image=[a-z-]+ hash=[A-Z]+')"
check "check, compile error: remembered (2 cacheable modules)" 2 "$(entries)"
run checkfail2 GPUPROBE_PRECOMPILE=check FAKE_JIT_FAIL=1
check "check, compile error again: from the cache" 2 "$(lines checkfail2 | grep -c 'compile error from the cache')"
run checklink GPUPROBE_PRECOMPILE=link FAKE_JIT_FAIL=1
check "link mode keeps its own keys: the remembered check errors do not apply" 0 "$(lines checklink | grep -c 'compile error from the cache')"
run badmode GPUPROBE_PRECOMPILE=fast
check "an unknown GPUPROBE_PRECOMPILE: one line" "gpuprobe: GPUPROBE_PRECOMPILE=fast: expected check, link or 0; using 0" "$(grep PRECOMPILE "$tmp/badmode.err")"

# 9. A kernel that calls into the device runtime (dynamic parallelism: kernel_cdp.ptx) compiles only
# linked with libcudadevrt.a, which is off by default (shim/device_runtime.h says why): one line
# per module and the original runs, with no compile tried. GPUPROBE_CUDADEVRT=PATH or =auto (the
# toolkit under CUDA_HOME): compiled by the JIT linker with it, also where the default (check)
# would hand the driver PTX it cannot link alone. A path that cannot be read: one line naming it.
ptx=${ptx%/*}/kernel_cdp.ptx
rm -rf "$tmp/cache"
mkdir -p "$tmp/cudahome/lib64"
touch "$tmp/libcudadevrt.a" "$tmp/cudahome/lib64/libcudadevrt.a"
run cdpoff GPUPROBE_PRECOMPILE=check
check "device runtime off: one line per module with a context, nothing compiled, the original loaded" "gpuprobe: module 1: the instrumented PTX did not compile (CUDA_ERROR_UNKNOWN: it launches kernels (dynamic parallelism), which compile with probes only linked with CUDA's device runtime: off unless GPUPROBE_CUDADEVRT=auto or =PATH/libcudadevrt.a (experimental: docs/guide.md)); loaded the original without probes
3" "$(grep 'did not compile' "$tmp/cdpoff.err" | head -1)
$(grep -c 'did not compile' "$tmp/cdpoff.err")"
check "device runtime off: what the driver got (no link run)" "image=ptx links=0
image=ptx links=0
image=ptx-instr links=0
image=ptx links=0" "$(grep -oE 'image=[a-z-]+ hash=[0-9a-f]+ links=[0-9]+' "$tmp/cdpoff.out" | sed 's/ hash=[0-9a-f]*//')"
for how in path auto; do
	[ $how = path ] && devrt=$tmp/libcudadevrt.a || devrt=auto
	rm -rf "$tmp/cache"
	run cdp$how GPUPROBE_PRECOMPILE=check GPUPROBE_CUDADEVRT="$devrt" CUDA_HOME="$tmp/cudahome"
	check "device runtime ($how): linked with it, every module with a context gets a cubin" "image=cubin
image=cubin
image=ptx-instr
image=cubin" "$(grep -oE 'image=[a-z-]+' "$tmp/cdp$how.out")"
	check "device runtime ($how): compiled by the linker, not checked" 3 "$(lines cdp$how | grep -c "compiled in T ms by the driver's JIT linker")"
done
run cdpmissing GPUPROBE_PRECOMPILE=check GPUPROBE_CUDADEVRT="$tmp/missing.a"
check "device runtime path unreadable: one line per module, the original loaded" "gpuprobe: module 1: the instrumented PTX did not compile (CUDA_ERROR_UNKNOWN: it launches kernels (dynamic parallelism), and GPUPROBE_CUDADEVRT=$tmp/missing.a, the device runtime to link it with, cannot be read); loaded the original without probes" \
	"$(grep 'did not compile' "$tmp/cdpmissing.err" | head -1)"
run cdpautonone GPUPROBE_PRECOMPILE=check GPUPROBE_CUDADEVRT=auto CUDA_HOME="$tmp/nowhere" CUDA_PATH="$tmp/nowhere"
if [ -e /usr/local/cuda/lib64/libcudadevrt.a ] || [ -e /usr/local/cuda/targets/x86_64-linux/lib/libcudadevrt.a ]; then
	check "device runtime auto: the toolkit's under /usr/local/cuda found" 3 "$(lines cdpautonone | grep -c "compiled in T ms by the driver's JIT linker")"
else
	check "device runtime auto, none found: one line" "gpuprobe: module 1: the instrumented PTX did not compile (CUDA_ERROR_UNKNOWN: it launches kernels (dynamic parallelism), and GPUPROBE_CUDADEVRT=auto found CUDA's libcudadevrt.a in none of CUDA_HOME, CUDA_PATH, /usr/local/cuda); loaded the original without probes" \
		"$(grep 'did not compile' "$tmp/cdpautonone.err" | head -1)"
fi

[ $fails = 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }
