#!/bin/bash
# On the GPU: the warp helpers (515/516) count exactly in every way the shim can compile the
# instrumented PTX. At 7dace23 (JIT-linker compile, then the default) coalescing's load_random
# counted 384 warp requests for 256: a warp reached the second site of the kernel in two groups
# and each group's bpf_gpu_warp_unique(0) elected a lane. The sites now pass the site's mask to
# the probe (tests/e2e/warp_sites_test.sh pins the PTX); this runs the examples that use the
# helpers (coalescing, bank-conflicts) under GPUPROBE_PRECOMPILE=check (default), link (the
# JIT linker, relocatable code) and 0 (the driver loads the PTX), 3 rounds each with fresh
# caches, and checks every per-kernel count against what the app computes on the host.
# Needs BUILD (as tests/gpu/e2e.sh: ./build from tests/gpu/prepare.sh, else build-e2e) with
# examples/build.sh run on it. Exit 77 without a GPU.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then
	for b in "$root/build" "$root/build-e2e"; do
		[ -x "$b/bin/gpuprobe" ] && [ -d "$b/examples" ] && { BUILD=$b; break; }
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
GP=$BUILD/bin/gpuprobe X=$BUILD/examples
fail=0
check() { if [ "$2" = "$3" ]; then echo "PASS $1 = $3"; else echo "FAIL $1: expected $2, got $3"; fail=1; fi; }
kval() { grep -F "@$2[" "$1" | grep -F "$3(" | sed 's/.*\]: //'; }
expect() { grep -F "expected $2: " "$1" | sed "s/.* $3 \([0-9]*\).*/\1/"; }
for ex in coalescing:coalescing:sectors bank-conflicts:bank_conflicts:wavefronts; do
	name=${ex%%:*} rest=${ex#*:} app=${rest%%:*} field=${ex##*:}
	[ -x "$X/$app" ] || { echo "FAIL $name: $X/$app not built (examples/build.sh)"; fail=1; continue; }
	"$X/$app" >"$OUT/$app.plain" 2>&1
	for mode in check link 0; do
		for round in 1 2 3; do
			tag=${app}_${mode}_$round
			GPUPROBE_PRECOMPILE=$mode GPUPROBE_CACHE_DIR="$OUT/cache_$tag" CUDA_CACHE_PATH="$OUT/jit_$tag" \
				"$GP" run -p "$X/$app.bpf.o" -- "$X/$app" >"$OUT/$tag.out" 2>"$OUT/$tag.err"
			check "$name precompile=$mode round $round stdout identical" "$(cat "$OUT/$app.plain")" "$(cat "$OUT/$tag.out")"
			for k in $(grep -o '^expected [^:]*' "$OUT/$app.plain" | sed 's/^expected //'); do
				check "$name precompile=$mode round $round $k requests" "$(expect "$OUT/$app.plain" "$k" requests)" \
					"$(kval "$OUT/$tag.err" requests_by_kernel "$k")"
				check "$name precompile=$mode round $round $k $field" "$(expect "$OUT/$app.plain" "$k" "$field")" \
					"$(kval "$OUT/$tag.err" ${field}_by_kernel "$k")"
			done
		done
	done
done
[ $fail = 0 ] && echo "warp_sites: ALL PASS" || echo "warp_sites: FAILURES"
exit $fail
