#!/bin/bash
# session 16, call A: run-all part 1 on a one-GPU machine
set -u
root=$PWD
xz -dc .carry/bg.tar.xz | tar xf - && xz -dc .carry/corpora.tar.xz | tar xf - -C .carry || { echo unpack failed; exit 3; }
export BUILD=$root/build-gpu BENCH_BUILD=$root/build-gpu
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u; nproc; } > $OUT/dev.txt 2>&1
cat $OUT/dev.txt
names=${NAMES:-"shim jit fork bench trace jit_cache planes graphs amdgpu_bench first_kernel fatbin first_launch oneliners tools trace_replay bpftime_maps amdgpu spirv va lower maps reconverge ptx_roundtrip warp_sites"}
R=/tmp/ra-${TAG:-a}
rm -rf $R; mkdir -p $R
OUT=$R tests/gpu/run-all.sh $names 2>&1 | tee $OUT/runall.log
cp $R/summary.txt $OUT/summary.txt 2>/dev/null
(cd /tmp && find ra-${TAG:-a} -type f -size -3M | tar czf $OUT/ra.tgz -T -)
ls -la $OUT
