#!/bin/bash
export PATH=$PATH:/usr/local/cuda/bin
D=$(cd "$(dirname "$0")" && pwd); R=$D/../..; B=$R/build-gpu
mkdir -p /tmp/d "$OUT/d" && tar -C /tmp/d -xJf "$R/.carry/corpora.tar.xz"
cd /tmp/d && { nvidia-smi -L; date -u; } | tee "$OUT/d/dev.txt"
nvcc -O2 -std=c++17 -arch=sm_90 -I/tmp/d/corpora/cuda-samples/Common -rdc=true -maxrregcount=64 \
	"$D/cdpAdvancedQuicksort.cu" "$D/cdpBitonicSort.cu" -o /tmp/d/adv -lcudadevrt 2>&1 | tail -3
P=/tmp/d/corpora/probes
GPUPROBE_CACHE_DIR=/tmp/d/cache GPUPROBE_DUMP_DIR=$OUT/d/dump timeout 150 compute-sanitizer --tool memcheck --print-limit 6 --show-backtrace device \
	$B/bin/gpuprobe run -p $P/entry_exit_hash.bpf.o -- /tmp/d/adv > "$OUT/d/san.out" 2>&1
echo "sanitizer rc=$?"; grep -v "^gpuprobe: first\|^$" "$OUT/d/san.out" | cut -c1-400 | head -60
for c in /tmp/d/cache/gpuprobe/*.cubin; do cuobjdump -sass "$c" > "$OUT/d/$(basename "$c" .cubin | cut -c1-12).sass" 2>&1; done
GPUPROBE_CACHE_DIR=/tmp/d/cache2 GPUPROBE_LIMITS_LOG=1 GPUPROBE_LOG=1 timeout 30 $B/bin/gpuprobe run -p $P/entry_exit_hash.bpf.o -- /tmp/d/adv > "$OUT/d/log.out" 2>&1
grep "registers\|stack\|local" "$OUT/d/log.out" | cut -c1-300 | head
tar -C "$OUT" -czf "$OUT/diag2.tgz" d && rm -rf "$OUT/d"
