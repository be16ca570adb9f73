#!/bin/bash
# Session 4 GPU call 2, part 1: where fresh set-up goes, and why some "cached" runs compile again.
R=$PWD; B=$R/build-gpu; P=$R/.carry/diag/progs; D=$OUT/diag; mkdir -p $D
cd $R/.carry/diag
echo "== driver JIT cost (cache off)" | tee $D/jit.txt
CUDA_CACHE_DISABLE=1 ./jit_cost va.ptx va_i.ptx va_func.ptx kernel.ptx inst3.ptx 2>&1 | tee -a $D/jit.txt
echo "== with the JIT cache, fresh then cached" | tee -a $D/jit.txt
rm -rf /tmp/jc; CUDA_CACHE_PATH=/tmp/jc ./jit_cost va_i.ptx inst3.ptx 2>&1 | tee -a $D/jit.txt
CUDA_CACHE_PATH=/tmp/jc ./jit_cost va_i.ptx inst3.ptx 2>&1 | tee -a $D/jit.txt
for np in vectorAdd:entry_exit_hash simpleTexture:entry_exit_hash simpleAssert:entry_exit_hash MC_EstimatePiInlineP:entry_exit_hash simpleSurfaceWrite:entry_exit_hash MC_EstimatePiInlineQ:memcount matrixMul:memcount fp16ScalarProduct:entry_exit_hash; do
	n=${np%%:*} probe=${np#*:}
	rm -rf /tmp/c-$n; for r in 1 2; do
		mkdir -p $D/$n-$probe/dump$r
		(cd $P/$n && env LD_LIBRARY_PATH=$B/lib GPUPROBE_LOG=1 GPUPROBE_DUMP_DIR=$D/$n-$probe/dump$r CUDA_CACHE_PATH=/tmp/c-$n/cuda GPUPROBE_CACHE_DIR=/tmp/c-$n/gp \
		  timeout 60 $B/bin/gpuprobe run -p $R/.carry/diag/probes/$probe.bpf.o -- ./$n > $D/$n-$probe/run$r.log 2>&1)
	done
	grep -h "first launch\|not instrumented\|did not\|module [0-9]* via" $D/$n-$probe/run*.log | cut -c1-300 > $D/$n-$probe/summary.txt
	diff -r $D/$n-$probe/dump1 $D/$n-$probe/dump2 > $D/$n-$probe/dump.diff 2>&1; echo "$n: dump diff lines $(wc -l < $D/$n-$probe/dump.diff)" | tee -a $D/jit.txt
	ls -la /tmp/c-$n/cuda /tmp/c-$n/gp 2>&1 | head -20 > $D/$n-$probe/caches.txt
done
cd $OUT && tar czf diag.tgz diag && rm -rf diag
