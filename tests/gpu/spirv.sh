#!/bin/bash
# GPU test of the SPIR-V backend's expectations: the conformance suite tests/spirv/cases runs
# through the real NVIDIA driver (cuModuleLoadData of each case's PTX, unchanged), with the same
# expected outputs that the SPIR-V path must give on PoCL; and the end-to-end CUDA program runs
# natively and must print what tests/spirv/e2e.c checks on PoCL.
# usage: tests/gpu/spirv.sh [BUILD_DIR]  (default: $BUILD, then build-spirv-gpu, build-spirv, build)
# Needs BUILD_DIR/bin/spirv_conformance (and lib/libOpenCL.so.1 where the machine has no OpenCL
# loader) and BUILD_DIR/tests/spirv/spirv_e2e_app. Logs to $OUT. Exit 77 without a GPU/driver.
set -u -o pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${BUILD:-}}
if [ -z "$build" ] || [ ! -x "$build/bin/spirv_conformance" ]; then
	for b in "$here/build-spirv-gpu" "$here/build-spirv" "$here/build"; do
		[ -x "$b/bin/spirv_conformance" ] && { build=$b; break; }
	done
fi
if [ -z "$build" ] || [ ! -x "$build/bin/spirv_conformance" ]; then
	echo "spirv.sh: build spirv_conformance first (cmake --build BUILD --target spirv_conformance spirv_e2e)"
	exit 2
fi
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
"$build/bin/spirv_conformance" --backend cuda "$here/tests/spirv/cases" | tee "$out/conformance-cuda.log"
rc=$?
[ $rc -eq 77 ] && exit 77
app=$build/tests/spirv/spirv_e2e_app
if [ -x "$app" ]; then
	got=$("$app" 2>&1)
	want="c[999] = 749.25, partial sums 32640 98176 163712 204972, total 499500"
	echo "$got" >"$out/e2e-native.log"
	if [ "$got" = "$want" ]; then
		echo "PASS e2e program on the GPU: $got"
	else
		echo "FAIL e2e program on the GPU: got '$got', expected '$want'"
		rc=1
	fi
fi
exit $rc
