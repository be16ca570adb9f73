#!/usr/bin/env bash
# Device one-liners end to end without a GPU: examples/apps/vec_add.cu built by nvcc, run by
# `gpuprobe run -e` on gpuprobe's own driver over PoCL (GPUPROBE_BACKEND=opencl, tests/own_driver),
# the counts exact from the geometry: vectorAdd and oddEven, 8 blocks of 32 threads each.
#   @threads: 512 entries; @by_kernel: 256 each; @blocks: 16 block begins; @even_exits:
#   vectorAdd's 128 even threads, @esum: their thread_x summed (0 + 2 + ... + 30 = 240 a block)
#   = 1920 (a varying sum in lanes a filter split); @tsum: vectorAdd's thread_x summed at exit
#   (0 + ... + 31 = 496 a block) = 3968; @loads: vectorAdd 2 a
#   thread, oddEven 1 = 768, @bytes 3072; @blk = hist(block_x): [0] 64, [1] 64, [2, 4) 128,
#   [4, 8) 256. The app's own line is the same as without probes.
# usage: pocl.sh GPUPROBE REPO WORK_DIR   (NVCC: default /usr/local/cuda/bin/nvcc). Exit 77 without
# nvcc or an OpenCL device.
set -uo pipefail
g=$1 repo=$2 work=$3
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP: no OpenCL device"; exit 77; }
rm -rf "$work" && mkdir -p "$work/rt" && chmod 700 "$work/rt" || exit 1
export XDG_RUNTIME_DIR=$work/rt
"$nvcc" -arch=sm_90 -o "$work/vec_add" "$repo/examples/apps/vec_add.cu" || { echo "FAIL: nvcc"; exit 1; }
fails=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fails=$((fails + 1)); fi; }

GPUPROBE_BACKEND=opencl timeout 600 "$g" run -- "$work/vec_add" 8 >"$work/plain.out" 2>"$work/plain.err"
[ $? = 0 ] && grep -q '^vec_add: ' "$work/plain.out" || { echo "SKIP: vec_add does not run on the own driver here: $(tail -2 "$work/plain.err")"; exit 77; }
ol='gpu/entry/* { @threads = count(); @blk = hist(block_x); @by_kernel[kernel] = count() }
    gpu/block_begin/* { @blocks = count() }
    gpu/exit/vectorAdd /thread_x % 2 == 0/ { @even_exits = count(); @esum = sum(thread_x) }
    gpu/exit/vectorAdd { @tsum = sum(thread_x) }
    gpu/mem/global,load/* { @loads = count(); @bytes = sum(size) }'
GPUPROBE_BACKEND=opencl timeout 600 "$g" run -e "$ol" -- "$work/vec_add" 8 >"$work/run.out" 2>"$work/run.err"
check "run -e on PoCL: exit 0" 0 $?
check "the app's output as without probes" "$(cat "$work/plain.out")" "$(cat "$work/run.out")"
check "scalar maps" "@threads: 512
@blocks: 16
@even_exits: 128
@esum: 1920
@tsum: 3968
@loads: 768
@bytes: 3072" "$(grep -E '^@(threads|blocks|even_exits|esum|tsum|loads|bytes): ' "$work/run.err")"
check "hist(block_x)" "[0] 64
[1] 64
[2, 4) 128
[4, 8) 256" "$(awk '$0 == "@blk:" {on = 1; next} /^@/ {on = 0} on {sub(/ *\|.*/, ""); gsub(/  +/, " "); print}' "$work/run.err")"
check "keyed by kernel" "@by_kernel[oddEven(float*)]: 256
@by_kernel[vectorAdd(float const*, float const*, float*)]: 256" "$(grep '^@by_kernel\[' "$work/run.err" | LC_ALL=C sort)"
[ $fails = 0 ] && echo "all passed" || echo "$fails failed (logs in $work)"
[ $fails = 0 ]
