#!/bin/bash
# Session 13: why cdpAdvancedQuicksort fails (717) once its kernels are instrumented and linked
# with libcudadevrt. Variants of probes and paths; dumps of the instrumented PTX and SASS.
export PATH=$PATH:/usr/local/cuda/bin
D=$(cd "$(dirname "$0")" && pwd); R=$D/../..; B=$R/build-gpu
mkdir -p /tmp/d "$OUT/d" && tar -C /tmp/d -xJf "$R/.carry/corpora.tar.xz"
cd /tmp/d && { nvidia-smi -L; date -u; } | tee "$OUT/d/dev.txt"
/usr/local/cuda/bin/nvcc -O2 -std=c++17 -arch=sm_90 -I/tmp/d/corpora/cuda-samples/Common -rdc=true -maxrregcount=64 \
	"$D/cdpAdvancedQuicksort.cu" "$D/cdpBitonicSort.cu" -o /tmp/d/adv -lcudadevrt 2>&1 | tail -3
P=/tmp/d/corpora/probes
v() {   # NAME ENV... -- probe
	local n=$1; shift
	env GPUPROBE_CACHE_DIR=/tmp/d/cache-$n "$@" > "$OUT/d/$n.out" 2>&1
	echo "== $n rc=$? $(grep -c PASSED "$OUT/d/$n.out") passed; $(grep -m1 'CUDA error' "$OUT/d/$n.out")"
	grep 'gpuprobe: kernel\|did not' "$OUT/d/$n.out" | cut -c1-300 | head -6
}
v native timeout 30 /tmp/d/adv
v nodevrt GPUPROBE_CUDADEVRT=/nonexistent timeout 30 $B/bin/gpuprobe run -p $P/entry_exit_hash.bpf.o -- /tmp/d/adv
v hash timeout 30 $B/bin/gpuprobe run -p $P/entry_exit_hash.bpf.o -- /tmp/d/adv
v noop_entry GPUPROBE_DUMP_DIR=$OUT/d/dump timeout 30 $B/bin/gpuprobe run -p $D/noop_entry.bpf.o -- /tmp/d/adv
v noop_exit timeout 30 $B/bin/gpuprobe run -p $D/noop_exit.bpf.o -- /tmp/d/adv
v entry_array timeout 30 $B/bin/gpuprobe run -p $D/entry_array.bpf.o -- /tmp/d/adv
v hash_whole GPUPROBE_LAZY=0 timeout 60 $B/bin/gpuprobe run -p $P/entry_exit_hash.bpf.o -- /tmp/d/adv
v noop_whole GPUPROBE_LAZY=0 timeout 60 $B/bin/gpuprobe run -p $D/noop_entry.bpf.o -- /tmp/d/adv
v sanitizer timeout 120 compute-sanitizer --tool memcheck --print-limit 4 --show-backtrace device $B/bin/gpuprobe run -p $D/noop_entry.bpf.o -- /tmp/d/adv
tail -40 "$OUT/d/sanitizer.out"
for c in /tmp/d/cache-noop_entry/gpuprobe/*.cubin; do cuobjdump -sass "$c" > "$OUT/d/$(basename "$c" .cubin | cut -c1-12).sass" 2>&1; done
cuobjdump -sass /tmp/d/adv > "$OUT/d/native.sass" 2>&1
ls "$OUT/d" | head -30
tar -C "$OUT" -czf "$OUT/diag.tgz" d && rm -rf "$OUT/d"
