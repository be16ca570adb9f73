#!/usr/bin/env bash
# gpuprobe run --trace on a real CUDA program without a GPU: examples/apps/vec_add (nvcc, the
# static CUDA runtime) on gpuprobe's own driver over PoCL (GPUPROBE_BACKEND=opencl). The program's
# output is as without the trace; the trace (check_trace.py generic) has the runtime's driver
# calls on the main thread, one launch each of vectorAdd and oddEven with their kernels' spans
# (from their completions) joined by flows, each kernel after its launch; --trace-api 'cuMem*'
# keeps the three cuMemAllocManaged calls and the launches only.
# Skips (77) without nvcc or an OpenCL device.
# usage: pocl_test.sh GPUPROBE SRC_DIR NVCC
set -u
gp=$1 src=$2 nvcc=$3
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP: no OpenCL device"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_RUNTIME_DIR=$tmp/run GPUPROBE_BACKEND=opencl GPUPROBE_CACHE_DIR=$tmp/cache
mkdir -m 700 "$tmp/run"
"$nvcc" -O2 -o "$tmp/vec_add" "$src/../../examples/apps/vec_add.cu" >"$tmp/nvcc.log" 2>&1 ||
	{ echo "SKIP: nvcc cannot build vec_add here"; cat "$tmp/nvcc.log"; exit 77; }
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
want="vec_add: G=4 n=128 sum=11747.0"
out=$(timeout 300 "$gp" run --trace "$tmp/v.pftrace" -- "$tmp/vec_add" 2>"$tmp/err")
[ "$out" = "$want" ] && ok "vec_add under --trace: '$out'" || { bad "vec_add: '$out'"; cat "$tmp/err"; }
python3 "$src/check_trace.py" generic "$tmp/v.pftrace" --min-launches 2 \
	--kernels 'vectorAdd(float const*, float const*, float*)=1;oddEven(float*)=1' || fails=$((fails + 1))
timeout 300 "$gp" run --trace "$tmp/m.json" --trace-api 'cuMem*' -- "$tmp/vec_add" >/dev/null 2>"$tmp/err"
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(e["name"] for e in d["traceEvents"] if e.get("cat") in ("api", "launch"))))' "$tmp/m.json")
[ "$got" = "cuLaunchKernel cuLaunchKernel cuMemAllocManaged cuMemAllocManaged cuMemAllocManaged" ] &&
	ok "--trace-api 'cuMem*': $got" || { bad "--trace-api 'cuMem*': $got"; cat "$tmp/err"; }
[ $fails = 0 ] && echo "PASS" || echo "$fails FAILED"
exit $((fails > 0))
