#!/usr/bin/env bash
# Probes on gpuprobe's own driver (PoCL): an entry+exit counter and a global memory-access
# counter on every kernel of unmodified nvcc-built samples, run by `gpuprobe run` with
# GPUPROBE_BACKEND=opencl. The samples print their own verdict as without probes, and the counts
# are exact: every thread of every launch enters and exits once (vectorAdd and vectorAddDrv: 196
# blocks of 256 threads, one launch), and each of the 50000 threads inside the bound loads A[i]
# and B[i] and stores C[i] (100000 loads, 50000 stores).
# usage: probes.sh BUILD_DIR CORPUS_DIR WORK_DIR
set -uo pipefail
build=$(cd "$1" && pwd) corpus=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/asan_preload.sh"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
clang=${CLANG:-$(command -v clang || true)}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
[ -f "$corpus/samples.tsv" ] || { echo "SKIP: no corpus at $corpus"; exit 77; }
[ -n "$clang" ] || { echo "SKIP: no clang for the probe"; exit 77; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP: no OpenCL device"; exit 77; }
mkdir -p "$work"
asan_env=$(own_driver_asan_env "$build/lib")
"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$here/../../include" \
	-c "$here/entry_exit.bpf.c" -o "$work/entry_exit.bpf.o" || { echo "FAIL: the probe does not build"; exit 1; }
fail=0
for s in vectorAdd:50176:100000:50000 vectorAddDrv:50176:100000:50000; do
	IFS=: read -r name want loads stores <<<"$s"
	python3 "$here/corpus.py" --shim-dir "$build/lib" --work "$work/samples" --corpus "$corpus" --nvcc "$nvcc" \
		--only "$name" >/dev/null 2>&1   # builds it (the run's verdict is checked below)
	d=$work/samples/$name
	[ -x "$d/$name" ] || { echo "FAIL $name: not built"; fail=1; continue; }
	verdict=$(awk -F'\t' -v n="$name" '$1 == n { print $5 }' "$corpus/samples.tsv")
	out=$(cd "$d" && env $asan_env GPUPROBE_BACKEND=opencl timeout 300 "$build/bin/gpuprobe" run -p "$work/entry_exit.bpf.o" -- "./$name" 2>&1)
	entries=$(grep -o '@counts\[0\]: [0-9]*' <<<"$out" | awk '{ print $2 }')
	exits=$(grep -o '@counts\[1\]: [0-9]*' <<<"$out" | awk '{ print $2 }')
	nl=$(grep -o '@counts\[2\]: [0-9]*' <<<"$out" | awk '{ print $2 }')
	ns=$(grep -o '@counts\[3\]: [0-9]*' <<<"$out" | awk '{ print $2 }')
	if ! grep -qF -- "$verdict" <<<"$out"; then
		echo "FAIL $name with probes: no verdict '$verdict'"; echo "$out" | tail -5; fail=1
	elif grep -q '^gpuprobe: ' <<<"$out"; then
		# gpuprobe's own set-up (its map allocator reserves 64 GiB of address space, which the
		# own driver cannot back, and falls back) is not the application's business
		echo "FAIL $name with probes: gpuprobe said something:"; grep '^gpuprobe: ' <<<"$out"; fail=1
	elif [ "$entries" != "$want" ] || [ "$exits" != "$want" ] || [ "$nl" != "$loads" ] || [ "$ns" != "$stores" ]; then
		echo "FAIL $name: entries ${entries:-none}, exits ${exits:-none} (expected $want each), global loads ${nl:-none} (expected $loads), stores ${ns:-none} (expected $stores)"
		echo "$out" | tail -5; fail=1
	else
		echo "PASS $name with entry, exit and memory counters: $entries entries, $exits exits, $nl global loads, $ns stores, verdict '$verdict'"
	fi
done
# Probe sites in loops and branches part of a block leaves (probed_loops.cu): exact counts, the
# program's own results unchanged.
if "$nvcc" -O2 -arch=sm_90 "$here/probed_loops.cu" -o "$work/probed_loops" >"$work/probed_loops.build" 2>&1; then
	out=$(cd "$work" && env $asan_env GPUPROBE_BACKEND=opencl timeout 300 "$build/bin/gpuprobe" run -p "$work/entry_exit.bpf.o" -- ./probed_loops 2>&1)
	read -r want_e want_x want_l want_s < <(sed -n 's/^expected: entries \([0-9]*\) exits \([0-9]*\) loads \([0-9]*\) stores \([0-9]*\)$/\1 \2 \3 \4/p' <<<"$out")
	got=$(for k in 0 1 2 3; do grep -o "@counts\[$k\]: [0-9]*" <<<"$out" | awk '{ print $2 }'; done | tr '\n' ' ')
	if ! grep -qx PASSED <<<"$out" || [ -z "${want_e:-}" ] || [ "$got" != "$want_e $want_x $want_l $want_s " ]; then
		echo "FAIL probed_loops: counters '$got', the program expects '${want_e:-?} ${want_x:-?} ${want_l:-?} ${want_s:-?}'"
		echo "$out" | tail -8; fail=1
	else
		echo "PASS probed_loops: $want_e entries, $want_x exits, $want_l global loads, $want_s stores, its results unchanged"
	fi
else
	echo "FAIL: probed_loops.cu does not build"; cat "$work/probed_loops.build"; fail=1
fi
# Deferred sites (GPUPROBE_DEFER, ptx-frontend/instrument.h): a basic-block instruction counter on
# probed_loops (loops of each thread's own trip count, early returns, a break on data) leaves the
# same counts in its maps as one call at every block (GPUPROBE_DEFER=0), and the memory counter's
# exact counts above ran deferred. The counts must be there (not zero) and the program's own
# results unchanged both ways.
if [ -x "$work/probed_loops" ] && "$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$here/../../include" \
	-c "$here/bb_count.bpf.c" -o "$work/bb_count.bpf.o"; then
	counts() {   # the maps' lines, sorted
		grep -E '^@(insns|blocks)' <<<"$1" | sort
	}
	on=$(cd "$work" && env $asan_env GPUPROBE_BACKEND=opencl timeout 300 "$build/bin/gpuprobe" run -p "$work/bb_count.bpf.o" -- ./probed_loops 2>&1)
	off=$(cd "$work" && env $asan_env GPUPROBE_BACKEND=opencl GPUPROBE_DEFER=0 timeout 300 "$build/bin/gpuprobe" run -p "$work/bb_count.bpf.o" -- ./probed_loops 2>&1)
	blocks=$(grep -o '^@blocks\[0\]: [0-9]*' <<<"$on" | awk '{ print $2 }')
	if ! grep -qx PASSED <<<"$on" || ! grep -qx PASSED <<<"$off" || [ -z "$blocks" ] || [ "$blocks" = 0 ] ||
		[ "$(counts "$on")" != "$(counts "$off")" ] || [ "$(counts "$on" | grep -c '^@insns')" -lt 2 ]; then
		echo "FAIL deferred basic-block counters on probed_loops: deferred and per-call maps differ (or are empty)"
		diff <(counts "$on") <(counts "$off") | head; echo "$on" | tail -4; fail=1
	else
		echo "PASS deferred basic-block counters on probed_loops: $blocks blocks, $(counts "$on" | grep -c '^@insns') kernels' instruction counts, the same with a call per block"
	fi
else
	echo "FAIL: bb_count.bpf.c or probed_loops does not build"; fail=1
fi
# Time on our own driver (the ktime tool): OpenCL kernels have no clock, so %globaltimer reads the
# driver's word of the host's clock (shim/own_clock.c); before it, every launch lasted 0 ns.
# timed_spin.cu's 3 timed launches (plus one untimed): 4 launches, and their GPU time more than
# 0 and of the order of what the host saw around the 3: at most twice that plus 10 ms (a busy
# CPU delays the thread that keeps the word, and a block that starts reads the word as the thread
# last wrote it: a launch's time is then too long by that delay).
if "$nvcc" -O2 -arch=sm_90 "$here/timed_spin.cu" -o "$work/timed_spin" >"$work/timed_spin.build" 2>&1; then
	out=$(cd "$work" && env $asan_env GPUPROBE_BACKEND=opencl timeout 300 "$build/bin/gpuprobe" run -t ktime -- ./timed_spin 2>&1)
	launches=$(grep -o '^@launches\[spin[^]]*\]: [0-9]*' <<<"$out" | awk '{ print $NF }')
	gpu=$(grep -o '^@time_ns\[spin[^]]*\]: [0-9]*' <<<"$out" | awk '{ print $NF }')
	host=$(sed -n 's/^timed_spin: .* host_ns \([0-9]*\)$/\1/p' <<<"$out")
	if [ "$launches" != 4 ] || [ -z "$gpu" ] || [ -z "$host" ] || [ "$gpu" -le 0 ] || [ "$gpu" -gt $((2 * host + 10000000)) ]; then
		echo "FAIL ktime on the own driver: launches '$launches' (4 expected), GPU time '$gpu' ns, host '$host' ns"
		echo "$out" | tail -6; fail=1
	else
		echo "PASS ktime on the own driver: 4 launches, $gpu ns of GPU time, the host saw $host ns around 3 of them"
	fi
else
	echo "FAIL: timed_spin.cu does not build"; cat "$work/timed_spin.build"; fail=1
fi
# A kernel that fails an assert (simpleAssert: 2 blocks of 32 threads, threads 60 to 63 fail):
# the context is unusable afterwards, as in CUDA, but the probes' maps are still read, and every
# thread entered and left once.
python3 "$here/corpus.py" --shim-dir "$build/lib" --work "$work/samples" --corpus "$corpus" --nvcc "$nvcc" \
	--only simpleAssert >/dev/null 2>&1
if [ -x "$work/samples/simpleAssert/simpleAssert" ]; then
	out=$(cd "$work/samples/simpleAssert" && env $asan_env GPUPROBE_BACKEND=opencl timeout 300 "$build/bin/gpuprobe" run -p "$work/entry_exit.bpf.o" -- ./simpleAssert 2>&1)
	got=$(for k in 0 1; do grep -o "@counts\[$k\]: [0-9]*" <<<"$out" | awk '{ print $2 }'; done | tr '\n' ' ')
	if ! grep -q "simpleAssert completed, returned OK" <<<"$out" || [ "$got" != "64 64 " ]; then
		echo "FAIL simpleAssert with probes: entries and exits '$got' (64 each expected)"; echo "$out" | tail -5; fail=1
	else
		echo "PASS simpleAssert with probes: 64 entries, 64 exits after the kernel's failed assert"
	fi
else
	echo "FAIL simpleAssert: not built"; fail=1
fi
# More samples under the same probe (corpus.py --probe): each keeps its verdict and every thread
# that entered a kernel left it (entries = exits), cuRAND's library kernels (PTX for a newer
# target only) included.
more=asyncAPI,simpleAtomicIntrinsics,matrixMulDrv,simpleTextureDrv,MersenneTwisterGP11213,MC_EstimatePiQ,mergeSort,MC_EstimatePiP
if out=$(python3 "$here/corpus.py" --shim-dir "$build/lib" --work "$work/samples" --corpus "$corpus" --nvcc "$nvcc" \
	--only "$more" --probe "$work/entry_exit.bpf.o" --gpuprobe "$build/bin/gpuprobe" --jobs 1 2>&1); then
	echo "$out" | sed 's/^PASS /PASS with entry, exit and memory counters: /'
else
	echo "$out"; fail=1
fi
exit $fail
