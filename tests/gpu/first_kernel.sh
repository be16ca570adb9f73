#!/bin/bash
# GPU test of kernels instrumented one at a time at their first launch (issue 11; shim/lazy.h).
# tests/gpu/first_kernel/first_kernel.cu: a module of 1,000 kernels from one template, sharing a
# __device__ scale and a __constant__ table the host writes with cudaMemcpyToSymbol (before the
# first launch and between two launches), of which one is launched twice; then a register-heavy
# __launch_bounds__(1024) kernel launched with 1024-thread blocks. The app checks every result.
#   native         the app alone (an untimed warm-up run, then timed): PASS
#   shim           through the shim without probes: output identical
#   fresh          gpuprobe run with an entry+exit probe (HASH per kernel), empty gpuprobe and
#                  driver JIT caches: output identical; only the two launched kernels instrumented
#                  (two "first launch with probes" lines, no whole-module line); entries == exits
#                  == the threads the app launched
#   cached, cached2  the same, caches kept: the instrumented PTX comes from the cache (no
#                  instrument work), same checks
#   heavy          the heavy kernel under a probe on every global access (HASH map per access):
#                  PASS, the app never sees a launch failure (the limit line, if the shim falls
#                  back, is printed)
#   whole          (WHOLE=1 only: ptxas takes minutes on the whole instrumented module)
#                  GPUPROBE_LAZY=0, fresh caches: what every module cost before
# Prints a table of whole-run times over native and the shim's per-kernel first-launch lines.
# usage: tests/gpu/first_kernel.sh   (BUILD=<build dir> with bin/gpuprobe and lib/libcuda.so.1;
# BUILD/gpu-first-kernel/ holds the app and probes when built there (cmake --build BUILD --target
# gpu_first_kernel), else nvcc and clang build them here). Logs to $OUT. Exit 77 without a GPU; 2
# when something it needs is missing; 1 when a check fails.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then
	for b in "$root/build" "$root"/build-*; do
		[ -x "$b/bin/gpuprobe" ] && [ -e "$b/lib/libcuda.so.1" ] && { BUILD=$b; break; }
	done
fi
[ -n "${BUILD:-}" ] && [ -x "$BUILD/bin/gpuprobe" ] && [ -e "$BUILD/lib/libcuda.so.1" ] ||
	{ echo "first_kernel.sh: no BUILD with bin/gpuprobe and lib/libcuda.so.1 (set BUILD=<build dir>)"; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi

src=$root/tests/gpu/first_kernel
pre=$BUILD/gpu-first-kernel
probe() {   # NAME: the built probe's path (prebuilt, else clang here)
	if [ -e "$pre/$1.bpf.o" ]; then echo "$pre/$1.bpf.o"; return; fi
	local clang
	clang=$(command -v clang || command -v clang-14 || true)
	[ -n "$clang" ] || return 1
	"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" \
		-c "$src/$1.bpf.c" -o "$OUT/$1.bpf.o" >&2 || return 1
	echo "$OUT/$1.bpf.o"
}
ee=$(probe entry_exit) && heavy=$(probe heavy) ||
	{ echo "first_kernel.sh: no prebuilt probes in $pre and no clang to build them"; exit 2; }
app=$pre/first_kernel
if [ ! -x "$app" ]; then
	nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
	[ -x "$nvcc" ] || { echo "first_kernel.sh: no $app and no nvcc to build it"; exit 2; }
	echo "building the 1,000-kernel app with nvcc (about a minute)"
	"$nvcc" -O2 -arch=sm_90 -std=c++17 -o "$OUT/first_kernel" "$src/first_kernel.cu" \
		>"$OUT/nvcc.log" 2>&1 || { cat "$OUT/nvcc.log"; echo "first_kernel.sh: nvcc failed"; exit 2; }
	app=$OUT/first_kernel
fi

native_path=${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset GPUPROBE_PROBES GPUPROBE_CONFIG GPUPROBE_JSON GPUPROBE_LOG GPUPROBE_TEST_FAULT GPUPROBE_LAZY \
	GPUPROBE_PRECOMPILE GPUPROBE_DUMP_DIR GPUPROBE_CACHE_DIR CUDA_CACHE_PATH LD_AUDIT
GP=$BUILD/bin/gpuprobe
T=${FIRST_KERNEL_TIMEOUT:-600}   # per run (s)
nvidia-smi -L | tee "$OUT/gpus.txt"
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
declare -A ms
# run NAME CMD...: stdout to NAME.out, stderr to NAME.err, exit status to NAME.rc, wall ms
run() {
	local name=$1
	shift
	local t0 t1
	t0=$(date +%s%N)
	timeout "$T" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
	t1=$(date +%s%N)
	ms[$name]=$(( (t1 - t0) / 1000000 ))
}
same_as_native() {
	if [ "$(cat "$OUT/$1.rc")" = 0 ] && cmp -s "$OUT/native.out" "$OUT/$1.out"; then
		pass "$1: output identical to native (${ms[$1]} ms)"
	else
		fail "$1: exit $(cat "$OUT/$1.rc"), output differs from native:"
		diff "$OUT/native.out" "$OUT/$1.out" | head -10
		grep '^gpuprobe: ' "$OUT/$1.err" | head -5
	fi
}
# entries and exits (all kernels) in NAME.json == the threads the app says it launched
counts() {
	python3 - "$OUT/$1.json" "$OUT/native.out" <<'EOF'
import json, sys
want = sum(int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("threads "))
maps = {}
for l in open(sys.argv[1], errors="replace"):
    l = l.strip()
    if not l.startswith("{"):
        continue
    try:
        j = json.loads(l)
    except ValueError:
        continue
    if j.get("type") in ("map", "top") and j.get("name") in ("enter", "leave"):
        maps[j["name"]] = j.get("data")
def total(d):
    if isinstance(d, dict):
        return sum(v for v in d.values() if isinstance(v, int))
    return sum(e.get("value", 0) for e in d or [] if isinstance(e.get("value", 0), int))
got = {n: total(maps.get(n)) for n in ("enter", "leave")}
ok = got["enter"] == want and got["leave"] == want
print("entries %d, exits %d, threads launched %d" % (got["enter"], got["leave"], want))
sys.exit(0 if ok else 1)
EOF
}

run native-warm env LD_LIBRARY_PATH="$native_path" "$app"
for i in 1 2 3; do
	run "native$i" env LD_LIBRARY_PATH="$native_path" "$app"
done
cp "$OUT/native1.out" "$OUT/native.out"
ms[native]=$(printf '%s\n' "${ms[native1]}" "${ms[native2]}" "${ms[native3]}" | sort -n | sed -n 2p)
if [ "$(cat "$OUT/native1.rc")" = 0 ] && [ "$(tail -1 "$OUT/native.out")" = PASS ]; then
	pass "native: the app passes (median ${ms[native]} ms)"
else
	fail "native: exit $(cat "$OUT/native1.rc")"; cat "$OUT/native1.out"
	echo "first_kernel.sh: the app fails natively; nothing to compare with"
	exit 1
fi
run shim "$GP" run -- "$app"
same_as_native shim

rm -rf "$OUT/cache" "$OUT/cuda-cache"
for pass_ in fresh cached cached2; do
	run "$pass_" env GPUPROBE_LOG=1 GPUPROBE_CACHE_DIR="$OUT/cache" CUDA_CACHE_PATH="$OUT/cuda-cache" \
		"$GP" run --json "$OUT/$pass_.json" -p "$ee" -- "$app"
	same_as_native "$pass_"
	n=$(grep -c 'first launch with probes' "$OUT/$pass_.err")
	if [ "$n" = 2 ] && ! grep -q 'module [0-9]*: instrumented (' "$OUT/$pass_.err"; then
		pass "$pass_: the two launched kernels alone were instrumented, at their first launch"
	else
		fail "$pass_: $n kernels instrumented at a first launch:"; grep '^gpuprobe: ' "$OUT/$pass_.err" | head -8
	fi
	if grep -q 'probes disabled\|without probes\|loaded unchanged\|probes skipped' "$OUT/$pass_.err"; then
		fail "$pass_: probes were not all on:"; grep '^gpuprobe: ' "$OUT/$pass_.err" | grep -v 'first launch' | head -5
	fi
	if [ "$pass_" != fresh ]; then
		if [ "$(grep -c 'instrument 0\.0, .*instrumented PTX from the cache' "$OUT/$pass_.err")" = 2 ]; then
			pass "$pass_: both kernels' instrumented PTX from the cache, no instrument work"
		else
			fail "$pass_: not from the cache:"; grep 'first launch with probes' "$OUT/$pass_.err"
		fi
	fi
	if c=$(counts "$pass_"); then pass "$pass_: $c"; else fail "$pass_: $c"; fi
done

# The register-heavy kernel under a heavy probe: never a launch failure.
run heavy env GPUPROBE_LOG=1 GPUPROBE_CACHE_DIR="$OUT/cache" CUDA_CACHE_PATH="$OUT/cuda-cache" \
	"$GP" run -p "$heavy" -- "$app"
same_as_native heavy
grep -E 'kernel _Z5heavy.*(first launch with probes|probes skipped|not instrumented|did not)' "$OUT/heavy.err" |
	sed 's/^/    /'

if [ "${WHOLE:-0}" = 1 ]; then
	rm -rf "$OUT/cache-whole" "$OUT/cuda-cache-whole"
	run whole env GPUPROBE_LAZY=0 GPUPROBE_LOG=1 GPUPROBE_CACHE_DIR="$OUT/cache-whole" \
		CUDA_CACHE_PATH="$OUT/cuda-cache-whole" "$GP" run -p "$ee" -- "$app"
	same_as_native whole
fi

echo
echo "whole-run time over native (median native ${ms[native]} ms), $(head -1 "$OUT/gpus.txt")"
for r in shim fresh cached cached2 heavy whole; do
	[ -n "${ms[$r]:-}" ] || continue
	awk -v r="$r" -v a="${ms[$r]}" -v n="${ms[native]}" 'BEGIN { printf "  %-8s %8d ms  %6.2fx\n", r, a, a / n }'
done
echo "first launch (the app's own F line: first kernel's launch to sync)"
for r in native1 shim fresh cached cached2; do
	printf '  %-8s %s\n' "$r" "$(grep -h '^F ' "$OUT/$r.err" | head -1)"
done
echo "the shim's per-kernel first-launch lines"
for r in fresh cached; do
	grep -h 'first launch with probes' "$OUT/$r.err" | sed "s/^/  $r: /"
done
grep -h '^gpuprobe: probes: .* in [0-9.]* ms' "$OUT/fresh.err" | sed 's/^/  fresh: /'

echo
[ $fails = 0 ] && echo "first_kernel: all passed (logs in $OUT)" || echo "first_kernel: $fails failed (logs in $OUT)"
[ $fails = 0 ]
