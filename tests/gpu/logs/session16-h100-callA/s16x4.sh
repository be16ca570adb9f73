#!/bin/bash
# session 16, x4 calls. MODE=llvm: the cuda-samples corpus through the LLVM path (issue 15),
# amdgpu.sh's parts 1-2 first; MODE=bc: (b) and (c) fresh and cached over the whole corpus.
set -u
root=$PWD
MODE=${MODE:-bc}
xz -dc .carry/bg.tar.xz | tar xf - && xz -dc .carry/corpora.tar.xz | tar xf - -C .carry || { echo unpack failed; exit 3; }
export BUILD=$root/build-gpu
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; nproc; /usr/local/cuda/bin/nvcc --version | tail -2; } > $OUT/dev.txt 2>&1
cat $OUT/dev.txt
R=/tmp/x4-$MODE; rm -rf $R; mkdir -p $R
T="$(ls $root/.carry/times/*/apps.tsv | tr '\n' ' ')"
if [ $MODE = llvm ]; then
	mkdir -p /tmp/llvm && xz -dc .carry/llvmlibs.tar.xz | tar xf - -C /tmp/llvm || { echo llvm unpack failed; exit 3; }
	printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/llvm/usr/lib/llvm-19/lib:/tmp/llvm/lib/x86_64-linux-gnu exec %s "$@"\n' "$BUILD/bin/gpuprobe" >/tmp/gpl.sh
	chmod +x /tmp/gpl.sh
	printf '.version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n' >/tmp/k.ptx
	/tmp/gpl.sh ptx llvm --target nvptx /tmp/k.ptx | head -3 || echo "LLVM child does not run"
	LD_LIBRARY_PATH=/tmp/llvm/usr/lib/llvm-19/lib:/tmp/llvm/lib/x86_64-linux-gnu ldd $BUILD/lib/libgpuprobe-amdgpu.so | grep "not found"
	rm -rf /tmp/llvmcache; cp -r $BUILD/llvm-cache /tmp/llvmcache
	export GPUPROBE_BACKEND=nvidia GPUPROBE_LLVM_CACHE=/tmp/llvmcache GPUPROBE_LLVM_LOWER=/tmp/gpl.sh
	CUDA_VISIBLE_DEVICES=0 OUT=$R/amdgpu bash tests/gpu/amdgpu.sh /tmp/llvmcache 2>&1 | tee $R/amdgpu.out
	CONFIGS="native shim a-fresh a-cached"
else
	CONFIGS="native b-fresh b-cached c-fresh c-cached"
fi
APPS_TIMES="$T" APPS_CONFIGS="$CONFIGS" MAX_SECONDS=${MAX_SECONDS:-500} OUT=$R/apps bash tests/gpu/apps_multi.sh 2>&1 | tee $R/multi.log | tail -40
cp $R/apps/apps.md $OUT/apps.md 2>/dev/null
(cd /tmp && find x4-$MODE -type f -size -4M | tar czf $OUT/all.tgz -T -)
ls -la $OUT
