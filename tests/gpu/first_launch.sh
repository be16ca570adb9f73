#!/bin/bash
# Where a first launch with probes spends its time on the host (issue 6: a cached instrumented
# module's first launch within 10% of the plain one). Runs bench/overhead's `ovh first` (context
# init + first kernel, OVH_MAXN=4096) natively, through the shim, and with the empty and memory
# counter probes, each three times in one fresh cache (fresh, cached, cached), with GPUPROBE_LOG=1,
# and prints per run: the F line (init_ms, first_launch_ms), the shim's set-up line ("probes: ...
# in X ms (map memory, configuration, objects, output, host probes)") and the module lines
# ("instrumented ... in X ms", "compiled ...") or, for kernels instrumented at their first launch,
# the per-kernel line ("first launch with probes in X ms: parse, instrument, compile, load"). Uses the build of tests/gpu/bench.sh (BENCH_BUILD,
# else ./build, else ./build-bench: bench/overhead/build.sh). Exit 77 without a GPU or the build;
# fails when a probe run lacks its timed set-up line or its F line.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BENCH_BUILD:-}
if [ -z "$BUILD" ]; then
	BUILD=$root/build
	[ -x "$BUILD/overhead/ovh" ] || BUILD=$root/build-bench
fi
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
O=$BUILD/overhead P=$BUILD/overhead/probes GP=$BUILD/bin/gpuprobe
if [ ! -x "$O/ovh" ] || [ ! -x "$GP" ] || [ ! -f "$P/memcount.bpf.o" ]; then
	echo "SKIP: $O/ovh, $GP or the probes missing (run bench/overhead/build.sh $BUILD first)"
	exit 77
fi
fails=0
for cfg in native shim empty memcount; do
	cache=$OUT/cache-$cfg
	rm -rf "$cache"
	for pass in fresh cached1 cached2; do
		case $cfg in
		native) cmd=("$O/ovh" first) ;;
		shim) cmd=("$GP" run -- "$O/ovh" first) ;;
		*) cmd=("$GP" run -p "$P/$cfg.bpf.o" -- "$O/ovh" first) ;;
		esac
		CUDA_CACHE_PATH=$cache GPUPROBE_CACHE_DIR=$cache/gpuprobe GPUPROBE_LOG=1 OVH_MAXN=4096 \
			timeout 60 "${cmd[@]}" >"$OUT/$cfg-$pass.out" 2>"$OUT/$cfg-$pass.err"
		echo "== $cfg $pass (exit $?)"
		grep -h '^F ' "$OUT/$cfg-$pass.out"
		grep -hE '^gpuprobe: (probes: [0-9]+ objects|module [0-9]+: (instrumented|compiled)|kernel .*: first launch with probes)' \
			"$OUT/$cfg-$pass.err"
		grep -q '^F ' "$OUT/$cfg-$pass.out" || { echo "FAIL: no F line"; fails=$((fails + 1)); }
		case $cfg in empty | memcount)
			grep -qE '^gpuprobe: probes: .* in [0-9.]+ ms \(map memory' "$OUT/$cfg-$pass.err" ||
				{ echo "FAIL: no timed 'probes:' line"; fails=$((fails + 1)); }
		esac
	done
done
if [ $fails = 0 ]; then
	echo "PASS: first-launch breakdown above (logs in $OUT)"
else
	echo "FAIL: $fails checks"
	exit 1
fi
