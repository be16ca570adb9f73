#!/bin/bash
# GPU test of the eBPF lowering: the 313 bpf_conformance programs, lowered into one PTX module
# (tests/lower/lower_corpus), run on the GPU in one launch, each r0 checked against "-- result".
# usage: tests/gpu/lower.sh [BUILD_DIR]   (default build-lower, else build). Logs to $OUT if set.
# Without the corpus (the GPU machine has none) it runs BUILD_DIR/lower-gpu/ made beforehand by
#   lower_corpus CORPUS BUILD/lower-gpu/lower-conformance.ptx BUILD/lower-gpu/lower-conformance.manifest
# Exit 77 when there is no GPU or driver.
set -u -o pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-}
if [ -z "$build" ]; then
	for b in "$here/build-lower" "$here/build"; do [ -x "$b/bin/lower_gpu_run" ] && { build=$b; break; }; done
fi
if [ -z "$build" ] || [ ! -x "$build/bin/lower_gpu_run" ]; then
	echo "lower.sh: build lower_corpus and lower_gpu_run first (cmake --build BUILD --target lower_corpus lower_gpu_run)"
	exit 2
fi
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
work=${OUT:-$(mktemp -d)}
mkdir -p "$work"
ptx=$work/lower-conformance.ptx man=$work/lower-conformance.manifest
corpus=${GP_CONFORMANCE_DIR:-$here/../shared/corpora/bpf-conformance/tests}
if [ -d "$corpus" ] && [ -x "$build/bin/lower_corpus" ]; then
	"$build/bin/lower_corpus" "$corpus" "$ptx" "$man" --target sm_75 || exit 1
elif [ -f "$build/lower-gpu/lower-conformance.ptx" ]; then
	echo "lower.sh: no corpus here; running the module lowered beforehand in $build/lower-gpu"
	cp "$build/lower-gpu/lower-conformance.ptx" "$ptx"
	cp "$build/lower-gpu/lower-conformance.manifest" "$man"
else
	echo "lower.sh: no bpf_conformance corpus (set GP_CONFORMANCE_DIR) and no $build/lower-gpu"
	exit 2
fi
"$build/bin/lower_gpu_run" "$ptx" "$man" 2>&1 | tee "$work/lower.log"
exit "${PIPESTATUS[0]}"
