#!/bin/bash
# session 16, call C (one GPU): the LLVM path again after the pass-through fixes
set -u
root=$PWD
xz -dc .carry/bg.tar.xz | tar xf - && xz -dc .carry/corpora.tar.xz | tar xf - -C .carry || { echo unpack failed; exit 3; }
export BUILD=$root/build-gpu BENCH_BUILD=$root/build-gpu
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; nproc; } > $OUT/dev.txt 2>&1
cat $OUT/dev.txt
R=/tmp/c; rm -rf $R; mkdir -p $R
mkdir -p /tmp/llvm && xz -dc .carry/llvmlibs.tar.xz | tar xf - -C /tmp/llvm
printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/llvm/usr/lib/llvm-19/lib:/tmp/llvm/lib/x86_64-linux-gnu exec %s "$@"\n' "$BUILD/bin/gpuprobe" >/tmp/gpl.sh
chmod +x /tmp/gpl.sh
OUT=$R/ra tests/gpu/run-all.sh amdgpu amdgpu_bench 2>&1 | tee $R/runall.log | tail -30
rm -rf /tmp/llvmcache; cp -r $BUILD/llvm-cache /tmp/llvmcache
export GPUPROBE_BACKEND=nvidia GPUPROBE_LLVM_CACHE=/tmp/llvmcache GPUPROBE_LLVM_LOWER=/tmp/gpl.sh
SUBSET="$NAMES" APPS_CONFIGS="native shim a-fresh" MAX_SECONDS=${MAX_SECONDS:-330} OUT=$R/apps bash tests/gpu/apps.sh 2>&1 | tee $R/apps.log | tail -40
cp $R/apps/apps.md $OUT/apps.md 2>/dev/null
(cd /tmp && find c -type f -size -4M | tar czf $OUT/all.tgz -T -)
ls -la $OUT
