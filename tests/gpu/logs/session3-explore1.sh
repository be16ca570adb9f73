#!/bin/bash
# exploratory run 1: app-regressions evidence
set -u
R=$PWD; B=$R/build-gpu; L=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/dev.txt
rm -rf /tmp/ar; cp -r .carry/ar /tmp/ar; cd /tmp/ar
for p in fft-cuda groupnorm-cuda graphExecution-cuda; do (make -C $p ARCH=sm_90 >$L/build-$p.log 2>&1) & done; wait
GP="$B/bin/gpuprobe run"
P=/tmp/ar/probes
t() { local s=$(date +%s.%N); timeout 120 "$@"; local rc=$?; echo "[rc=$rc $(echo "$(date +%s.%N) - $s" | bc) s]"; }
{
echo "== fft native"; (cd fft-cuda; t ./main 3 100)
echo "== fft hash"; (cd fft-cuda; GPUPROBE_LOG=1 GPUPROBE_DUMP_DIR=$L/fftdump t $GP -p $P/entry_exit_hash.bpf.o -- ./main 3 100)
echo "== fft hash entry only, INLINE=0"; (cd fft-cuda; GPUPROBE_INLINE=0 t $GP -p $P/entry_exit_hash.bpf.o -- ./main 3 100)
echo "== fft array"; (cd fft-cuda; t $GP -p $P/entry_array.bpf.o -- ./main 3 100)
echo "== fft hash under memcheck"; (cd fft-cuda; t $GP -p $P/entry_exit_hash.bpf.o -- compute-sanitizer --tool memcheck --print-limit 20 ./main 1 2)
echo "== graphExecution hash"; (cd graphExecution-cuda; GPUPROBE_LOG=1 t $GP -p $P/entry_exit_hash.bpf.o -- ./main 2>&1 | head -40)
for i in 1 2 3 4 5; do echo "== groupnorm native $i"; (cd groupnorm-cuda; t ./main 32 32 16 16 32 100 | grep -c -i "fail\|mismatch"); done
echo "== groupnorm racecheck"; (cd groupnorm-cuda; t compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 10 ./main 32 32 16 16 32 1 2>&1 | head -60)
} 2>&1 | tee $L/explore.log
tar czf $L/fftdump.tgz -C $L fftdump 2>/dev/null; rm -rf $L/fftdump
