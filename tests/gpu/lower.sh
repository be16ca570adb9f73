#!/bin/bash
# GPU test of the eBPF lowering, two modules each run in one launch by lower_gpu_run:
#  1. conformance: the 313 bpf_conformance programs (tests/lower/lower_corpus), thread i runs
#     program i, each r0 checked against the test's "-- result";
#  2. helpers: self-checking programs (tests/lower/lower_gpu_helpers) for the inline GPU
#     helpers, exit, puts, callx, and atomics/misaligned accesses on global memory, 32 threads each;
#  3. stack: tests/lower/stack_cases (frames in registers: every width, sign-extending, a loop,
#     two frames, one frame left in .local), like the conformance programs.
# usage: tests/gpu/lower.sh [BUILD_DIR]  (default $BUILD, then build-lower, build-lower-gpu, build). Logs to $OUT.
# Where the generators or the corpus are missing (the GPU machine has no corpus and no libbpf),
# it runs BUILD_DIR/lower-gpu/{conformance,helpers,stack}.{ptx,manifest}, which the build makes
# (target lower_gpu_inputs: lower_corpus and lower_gpu_helpers, --target sm_75). So: build here,
# carry BUILD_DIR (bin/lower_gpu_run and lower-gpu/ are all it needs) and run this script there.
# Exit 77 when there is no GPU or driver.
set -u -o pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${BUILD:-}}
if [ -z "$build" ] || [ ! -x "$build/bin/lower_gpu_run" ]; then
	for b in "$here/build-lower" "$here/build-lower-gpu" "$here/build"; do
		[ -x "$b/bin/lower_gpu_run" ] && { build=$b; break; }
	done
fi
if [ -z "$build" ] || [ ! -x "$build/bin/lower_gpu_run" ]; then
	echo "lower.sh: build lower_corpus, lower_gpu_helpers and lower_gpu_run first"
	exit 2
fi
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NVIDIA's driver or nothing: where it is absent the shim would be a driver of its own over
# OpenCL (PoCL in CI) and run these sm_75 modules there (tests/own_driver covers that path).
export GPUPROBE_BACKEND=nvidia
work=${OUT:-$(mktemp -d)}
mkdir -p "$work"
corpus=${GP_CONFORMANCE_DIR:-$here/../shared/corpora/bpf-conformance}/tests   # corpus root, as in tests/ebpf

# make MODULE: fresh from the generator when it can run here, else the prepared copy
make_module() {
	local name=$1; shift
	if "$@" "$work/$name.ptx" "$work/$name.manifest" --target sm_75 2>/dev/null; then return 0; fi
	if [ -f "$build/lower-gpu/$name.ptx" ]; then
		echo "lower.sh: $name: using the module lowered beforehand in $build/lower-gpu"
		cp "$build/lower-gpu/$name.ptx" "$build/lower-gpu/$name.manifest" "$work/"
		return 0
	fi
	echo "lower.sh: $name: cannot lower it here and no $build/lower-gpu/$name.ptx"
	return 1
}

rc=0
for name in conformance helpers stack; do
	echo "=== lower: $name"
	if [ $name = conformance ]; then
		[ -d "$corpus" ] && gen=("$build/bin/lower_corpus" "$corpus") || gen=(false)
	elif [ $name = stack ]; then
		gen=("$build/bin/lower_corpus" "$here/tests/lower/stack_cases")
	else
		gen=("$build/bin/lower_gpu_helpers")
	fi
	make_module $name "${gen[@]}" || { rc=1; continue; }
	"$build/bin/lower_gpu_run" "$work/$name.ptx" "$work/$name.manifest" 2>&1 | tee "$work/lower-$name.log"
	r=${PIPESTATUS[0]}
	[ $r -eq 77 ] && exit 77
	[ $r -ne 0 ] && rc=1
done
exit $rc
