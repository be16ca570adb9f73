#!/usr/bin/env bash
# A CUDA program of this folder on gpuprobe's own driver (PoCL): tests/own_driver/NAME.cu, built
# with nvcc (static CUDA runtime) and FLAGS, runs through the shim with GPUPROBE_BACKEND=opencl;
# its exit status must be 0, its stdout exactly NAME.out and its stderr exactly NAME.err (the
# shim's lines, the device's name as DEVICE; absent: nothing). Each .cu says what its lines mean.
# Where NAME.inputs.sh exists it makes the program's input files in the work directory first
# (arguments: nvcc, work directory) and prints "ARGS ..." (the program's command-line arguments);
# NAME.env, where it exists, holds VAR=VALUE lines of environment for the program.
# usage: cu_program.sh BUILD_DIR WORK_DIR NAME [NVCC_FLAGS...]
set -uo pipefail
build=$(cd "$1" && pwd) work=$2 name=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/asan_preload.sh"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP: no OpenCL device"; exit 77; }
mkdir -p "$work"
"$nvcc" -O2 "${@:--arch=sm_90}" "$here/$name.cu" -o "$work/$name" >"$work/build.log" 2>&1 ||
	{ echo "FAIL: nvcc"; cat "$work/build.log"; exit 1; }
args=()
if [ -f "$here/$name.inputs.sh" ]; then
	line=$(bash "$here/$name.inputs.sh" "$nvcc" "$work" 2>"$work/inputs.log" | sed -n 's/^ARGS //p') ||
		{ echo "FAIL: $name.inputs.sh"; cat "$work/inputs.log"; exit 1; }
	read -r -a args <<<"$line"
fi
# NAME.env: VAR=VALUE lines the program runs with (e.g. GPUPROBE_SHARED_CHECK=1)
extra=()
[ -f "$here/$name.env" ] && while IFS= read -r l; do [ -n "$l" ] && extra+=("$l"); done <"$here/$name.env"
(cd "$work" && env $(own_driver_asan_env "$build/lib") "${extra[@]}" GPUPROBE_BACKEND=opencl LD_LIBRARY_PATH="$build/lib" \
	timeout 300 "./$name" "${args[@]}" >out 2>err)
rc=$?
fail=0
[ "$rc" = 0 ] || { echo "FAIL: exit $rc"; fail=1; }
diff "$here/$name.out" "$work/out" >/dev/null || { echo "FAIL: stdout differs:"; diff "$here/$name.out" "$work/out"; fail=1; }
want_err=$here/$name.err
[ -f "$want_err" ] || want_err=/dev/null
# the device's name (the machine's CPU under PoCL) reads DEVICE
sed -E 's/cannot run on [^:]*:/cannot run on DEVICE:/' "$work/err" >"$work/err.norm"
diff "$want_err" "$work/err.norm" >/dev/null || { echo "FAIL: stderr differs:"; diff "$want_err" "$work/err.norm"; fail=1; }
[ $fail = 0 ] && echo "PASS: $name: $(wc -l <"$work/out") lines as expected"
exit $fail
