#!/bin/bash
set -u
R=$PWD; B=$R/build-gpu; L=$OUT
rm -rf /tmp/ar; cp -r .carry/ar /tmp/ar; cd /tmp/ar/fft-cuda
nvcc -std=c++17 -Xcompiler -Wall -arch=sm_90 -O3 dbg.cu -o dbg 2>&1 | tail -2
nvcc -std=c++17 -arch=sm_90 -O3 -DSINGLE_PRECISION dbg.cu -o dbgf 2>&1 | tail -2
GP="$B/bin/gpuprobe run"; P=/tmp/ar/probes
mkdir -p $L/dump
{
echo "== native"; ./dbg 1 1
for v in entry_exit_hash v_lookup v_update v_const v_empty entry_array; do echo "== $v"; timeout 60 $GP -p $P/$v.bpf.o -- ./dbg 1 1; done
echo "== float hash"; timeout 60 $GP -p $P/entry_exit_hash.bpf.o -- ./dbgf 1 1
echo "== hash dump"; GPUPROBE_DUMP_DIR=$L/dump timeout 60 $GP -p $P/entry_exit_hash.bpf.o -- ./dbg 1 1 >/dev/null
echo "== hash GPUPROBE_MAP_VA=0"; GPUPROBE_MAP_VA=0 timeout 60 $GP -p $P/entry_exit_hash.bpf.o -- ./dbg 1 1
} 2>&1 | tee $L/explore2.log
ls -la $L/dump; tar czf $L/dump.tgz -C $L dump; rm -rf $L/dump
