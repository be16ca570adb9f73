#!/bin/bash
# CI (no GPU): HASH-map lookups with 4-byte keys, emitted in place with the map's constants
# (maps/map_device.c emit_hash_lookup_var), run for real on gpuprobe's own driver over PoCL
# (GPUPROBE_BACKEND=opencl) in examples/apps/vec_add.cu, 8 blocks of 32 threads, kernels
# vectorAdd and oddEven (probes/hash_keys.bpf.c):
#   - the instrumented PTX has no generic lookup helper and one in-place probe loop per lookup;
#   - @enter, a counter per kernel (lookup, NOEXIST insert on a miss, lookup again): 256 each;
#   - @by_thread, one key per thread (256 keys sharing the table's probe sequences): 256 entries,
#     256 inserts succeeded (@checks[0]), 256 lookups found their own key holding 1 (@checks[1]);
#   - the application's output is the same as without probes.
# usage: hash_pocl_test.sh GPUPROBE SRC_DIR WORK_DIR   (exit 77 without nvcc or an OpenCL device)
set -u
GP=$1 SRC=$2 W=$3
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || { echo "SKIP: no nvcc at $NVCC"; exit 77; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP: no OpenCL device"; exit 77; }
. "$SRC/tests/own_driver/asan_preload.sh"
asan_env=$(own_driver_asan_env "$(dirname "$(dirname "$GP")")/lib")
rm -rf "$W" && mkdir -p "$W/rt" && chmod 700 "$W/rt" || exit 1
export XDG_RUNTIME_DIR=$W/rt GPUPROBE_BACKEND=opencl
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fail=1; fi; }
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
	-c "$SRC/tests/e2e/probes/hash_keys.bpf.c" -o "$W/hash_keys.bpf.o" || exit 2
"$NVCC" -arch=sm_90 -o "$W/vec_add" "$SRC/examples/apps/vec_add.cu" || exit 2
"$NVCC" -arch=sm_90 -ptx -o "$W/vec_add.ptx" "$SRC/examples/apps/vec_add.cu" || exit 2
# out of line, so that each probe body is there once
GPUPROBE_INLINE=0 "$GP" ptx instrument -p "$W/hash_keys.bpf.o" "$W/vec_add.ptx" -o "$W/vec_add.i.ptx" 2>/dev/null
check "instrument" 0 $?
check "no call of the generic lookup helper" 0 "$(grep -cE 'call.*(__gp_m_map_lookup_elem|__gp_m_hash_find),' "$W/vec_add.i.ptx")"
check "an in-place probe loop per lookup (entry: 2, exit: 1)" 3 "$(grep -cE '^\$Lgph_probe_[0-9]+:' "$W/vec_add.i.ptx")"
env $asan_env timeout 300 "$GP" run -- "$W/vec_add" 8 >"$W/plain.out" 2>"$W/plain.err"
[ $? = 0 ] && grep -q '^vec_add: ' "$W/plain.out" ||
	{ echo "SKIP: vec_add does not run on the own driver here: $(tail -2 "$W/plain.err")"; exit 77; }
env $asan_env timeout 300 "$GP" run -p "$W/hash_keys.bpf.o" -- "$W/vec_add" 8 >"$W/run.out" 2>"$W/run.err"
check "run with the probes: exit 0" 0 $?
check "the app's output as without probes" "$(cat "$W/plain.out")" "$(cat "$W/run.out")"
check "@enter: 256 threads in each kernel" "256
256" "$(grep -E '^@enter\[' "$W/run.err" | sed 's/.*: //')"
check "@by_thread: 256 keys" "@by_thread: top 10 of 256" "$(grep '^@by_thread:' "$W/run.err")"
check "@checks: 256 inserts, 256 lookups found their key" "@checks[0]: 256
@checks[1]: 256" "$(grep '^@checks\[' "$W/run.err")"
[ $fail = 0 ] && echo "PASS hash_pocl" || { echo "FAIL hash_pocl (logs in $W)"; tail -5 "$W/run.err"; }
exit $fail
