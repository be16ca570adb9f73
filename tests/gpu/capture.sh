#!/bin/bash
# Issue 18 on the GPU: event streams at the speed of the bus. A memory trace (every global load
# and store, a typed 16-byte record, 24 bytes in the ring) of bench/overhead's copy and vector
# add at 1M and 16M elements, launched back to back for CAP_SECONDS (default 2), captured with
# `gpuprobe run --output FILE.gpt`, lossy and lossless. For each run:
#   exactness   lossy: delivered + lost == accesses the kernels made; lossless: delivered ==
#               accesses, 0 lost
#   rate        delivered events/s over the application's timed launch loop (its first launch,
#               which pays for instrumenting and compiling, is untimed: the loop's share of the
#               records is delivered x (accesses - the first's) / accesses, exact when lossless),
#               the bytes/s that makes
#               on the link (24 bytes a record) and its fraction of the measured bandwidth
#   target      lossless >= 1e8 events/s
#   typed       the first records decoded with their fields (gpuprobe decode --limit 3)
#   decode      gpuprobe decode --stats on the file (every record checked), events/s on one core
# lossless once more with the writer's pwritev throughout (GPUPROBE_CAPTURE_WRITE=pwritev;
# "lossless-pwritev": the same checks, no rate target) beside its default mapped windows,
# and, where bench/overhead's memtrace_warp.bpf.o was built, a third mode "warp": one lossless
# record per warp access (exact: records == accesses / 32; events/s counts the lanes covered,
# GB/s the file's bytes);
# plus the host link's bandwidth (cap_app bw: cudaMemcpy DtoH into pinned memory, and a kernel
# writing 16-byte stores into host-mapped memory, as ring records are written), native launch
# rates (no probes) for scale, and capture_bench (decode speed on one core of this machine).
# Captures go to CAPDIR (default a folder in /dev/shm; deleted after each run: they are GBs).
# usage: BUILD=$PWD/build-gpu tests/gpu/capture.sh   (after tests/gpu/prepare.sh build-gpu)
#   CAP_WORKLOADS="copy vecadd", CAP_SIZES="1048576 16777216", CAP_SECONDS=2: what runs
# Logs to $OUT/capture.log; exit 77 without a GPU or the build, 1 when a check fails.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$root/build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$BUILD")
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/capture.log") 2>&1
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
GP=$BUILD/bin/gpuprobe
C=$BUILD/capture
for f in "$GP" "$C/cap_app" "$C/memtrace_lossy.bpf.o" "$C/memtrace_lossless.bpf.o"; do
	[ -e "$f" ] || { echo "SKIP: $f missing (tests/gpu/prepare.sh $BUILD builds it)"; exit 77; }
done
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} LC_ALL=C
unset GPUPROBE_SEGMENT_DIR GPUPROBE_CAPTURE
S=${CAP_SECONDS:-2}
# the device side's warp records (bench/overhead/probes/memtrace_warp.bpf.c), when built: run too
WARP=$BUILD/overhead/probes/memtrace_warp.bpf.o
# captures are GBs: the folder with the most room of /dev/shm (memory) and the temporary folder
avail_kb() { df -Pk "$1" 2>/dev/null | awk 'NR==2 {print $4}'; }
if [ -z "${CAPDIR:-}" ]; then
	tmpd=${TMPDIR:-/tmp}
	shm=$(avail_kb /dev/shm); shm=${shm:-0}; tmp=$(avail_kb "$tmpd"); tmp=${tmp:-0}
	if [ -w /dev/shm ] && [ "$shm" -ge "$tmp" ]; then CAPDIR=$(mktemp -d /dev/shm/gpcap.XXXXXX); else CAPDIR=$(mktemp -d "$tmpd/gpcap.XXXXXX"); fi
fi
mkdir -p "$CAPDIR"
trap 'rm -rf "$CAPDIR"' EXIT
echo "capture folder: $CAPDIR, $(( $(avail_kb "$CAPDIR") / 1048576 )) GiB free"
[ "$(avail_kb "$CAPDIR")" -ge $((8 * 1048576)) ] || echo "WARNING: less than 8 GiB free for captures: a lossless run may fill it (CAPDIR=... to choose)"
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader | sed 's/^/gpu: /'
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)  seconds per run: $S  captures in: $CAPDIR"
fail=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; fail=1; }

bw=$("$C/cap_app" bw 256) || { bad "cap_app bw"; bw=""; }
echo "$bw"
dtoh=$(echo "$bw" | awk '{print $3}')
mapped=$(echo "$bw" | awk '{print $5}')
[ -n "$dtoh" ] || dtoh=0
[ -n "$mapped" ] || mapped=0
echo "host link: cudaMemcpy DtoH into pinned memory $dtoh GB/s; kernel stores into host-mapped memory $mapped GB/s"

declare -a rows
for w in ${CAP_WORKLOADS:-copy vecadd}; do
	for n in ${CAP_SIZES:-1048576 16777216}; do
		nat=$("$C/cap_app" "$w" "$n" 1 | grep '^CAP ')
		nacc=$(echo "$nat" | awk '{print $9}'); nms=$(echo "$nat" | awk '{print $11}')
		echo "native $w $n: $nat  ($(awk -v a="$nacc" -v t="$nms" 'BEGIN{printf "%.3g", a/(t/1000)}') accesses/s)"
		modes="lossy lossless lossless-pwritev"
		[ -e "$WARP" ] && modes="$modes warp"
		for mode in $modes; do
			f=$CAPDIR/$w-$n-$mode.gpt
			rm -f "$f"
			probe=$C/memtrace_${mode%-pwritev}.bpf.o
			[ "$mode" = warp ] && probe=$WARP
			# lossless-pwritev: the writer's pwritev throughout, beside its mapped windows
			how=mapped
			[ "$mode" = lossless-pwritev ] && how=pwritev
			t0=$(date +%s.%N)
			GPUPROBE_CAPTURE_WRITE=$how timeout 900 "$GP" run -p "$probe" --output "$f" -- "$C/cap_app" "$w" "$n" "$S" \
				>"$OUT/$w-$n-$mode.out" 2>"$OUT/$w-$n-$mode.err"
			rc=$?
			t1=$(date +%s.%N)
			cap=$(grep '^CAP ' "$OUT/$w-$n-$mode.out")
			if [ $rc != 0 ] || [ -z "$cap" ] || [ ! -s "$f" ]; then
				bad "$w $n $mode: gpuprobe run exit $rc, no capture ($(head -c 400 "$OUT/$w-$n-$mode.err"))"
				continue
			fi
			grep -q 'consumed and not written\|cannot write it' "$OUT/$w-$n-$mode.err" &&
				bad "$w $n $mode: the capture file could not be written whole ($(grep -m1 'capture' "$OUT/$w-$n-$mode.err"))"
			acc=$(echo "$cap" | awk '{print $9}'); launches=$(echo "$cap" | awk '{print $7}')
			loop_ms=$(echo "$cap" | awk '{print $11}'); warm=$(echo "$cap" | awk '{print $13}')
			d0=$(date +%s.%N)
			sum=$("$GP" decode --stats --json "$f" 2>"$OUT/$w-$n-$mode.decode.err" | grep '"type":"summary"')
			d1=$(date +%s.%N)
			rec=$(echo "$sum" | sed -E 's/.*"records":([0-9]+).*/\1/')
			lost=$(echo "$sum" | sed -E 's/.*"lost":([0-9]+).*/\1/')
			fmode=$(echo "$sum" | sed -E 's/.*"mode":"([a-z]+)".*/\1/')
			size=$(stat -c %s "$f")
			if [ "$mode" = warp ]; then
				# one record per warp access: every warp of these kernels is full (n % 256 == 0)
				[ "$rec" = $((acc / 32)) ] && [ "$lost" = 0 ] &&
					pass "$w $n warp exact: $rec warp records == $acc accesses / 32, 0 lost" ||
					bad "$w $n warp: $rec warp records, $lost lost, $acc accesses / 32 = $((acc / 32))"
			elif [ "$mode" = lossy ]; then
				[ $((rec + lost)) = "$acc" ] && pass "$w $n lossy exact: $rec delivered + $lost lost == $acc accesses" ||
					bad "$w $n lossy: $rec delivered + $lost lost != $acc accesses"
			else
				[ "$fmode" = lossless ] && pass "$w $n $mode: the file says lossless" || bad "$w $n: the file says '$fmode', not lossless"
				[ "$rec" = "$acc" ] && [ "$lost" = 0 ] && pass "$w $n $mode exact: $rec delivered == $acc accesses, 0 lost" ||
					bad "$w $n $mode: $rec delivered, $lost lost, $acc accesses"
			fi
			# the timed loop's share of the records (exact when lossless: all of its accesses)
			lrec=$(awk -v r="$rec" -v a="$acc" -v w="${warm:-0}" 'BEGIN{printf "%.0f", r*(a-w)/a}')
			rate=$(awk -v r="$lrec" -v t="$loop_ms" 'BEGIN{printf "%.4g", r/(t/1000)}')
			gbs=$(awk -v r="$lrec" -v t="$loop_ms" 'BEGIN{printf "%.3f", r*24/(t/1000)/1e9}')
			frac=$(awk -v g="$gbs" -v b="$dtoh" 'BEGIN{if (b > 0) printf "%.3f", g/b; else print "-"}')
			drate=$(awk -v r="$rec" -v a="$d0" -v b="$d1" 'BEGIN{printf "%.3g", r/(b-a)}')
			wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
			if [ "$mode" = warp ]; then   # lane events covered, and the records' own bytes
				rate=$(awk -v r="$lrec" -v t="$loop_ms" 'BEGIN{printf "%.4g", r*32/(t/1000)}')
				gbs=$(awk -v s="$size" -v t="$loop_ms" 'BEGIN{printf "%.3f", s/(t/1000)/1e9}')
				frac=$(awk -v g="$gbs" -v b="$dtoh" 'BEGIN{if (b > 0) printf "%.3f", g/b; else print "-"}')
			fi
			if [ "$mode" = lossless ]; then   # the default writer; -pwritev is for comparison
				awk -v r="$rate" 'BEGIN{exit !(r >= 1e8)}' && pass "$w $n lossless rate $rate events/s >= 1e8" ||
					bad "$w $n lossless rate $rate events/s < 1e8"
			fi
			echo "typed ($w $n $mode):"
			"$GP" decode --limit 3 "$f" 2>/dev/null | sed 's/^/    /'
			echo "decode --stats ($size bytes): $drate events/s on one core (open: every record checked)"
			rows+=("$(printf '%-7s %9s %-9s %8s %12s %12s %12s %10s %8s %6s %10s %7s' "$w" "$n" "$mode" "$launches" "$acc" "$rec" "$lost" "$rate" "$gbs" "$frac" "$drate" "$wall")")
			rm -f "$f" "$f".*
		done
	done
done
echo
echo "== issue 18: delivered events/s (over the app's launch loop), 24 bytes a record (warp: lane events covered, file bytes); frac: of cudaMemcpy DtoH $dtoh GB/s (kernel stores to mapped memory: $mapped GB/s)"
printf '%-7s %9s %-9s %8s %12s %12s %12s %10s %8s %6s %10s %7s\n' workload n mode launches accesses delivered lost events/s GB/s frac decode/s wall_s
for r in "${rows[@]}"; do echo "$r"; done
if [ -x "$BUILD/bin/capture_bench" ]; then
	echo
	echo "== capture_bench on this machine (one core)"
	"$BUILD/bin/capture_bench" -n 50000000 -r 3
fi
if [ -x "$BUILD/bin/consume_bench" ]; then
	echo
	echo "== consume_bench: the consumer threads alone (rings filled first), then with CPU producers"
	for c in 1 2 4; do "$BUILD/bin/consume_bench" -f -n 5000000 -c $c; done
	"$BUILD/bin/consume_bench" -n 50000000 -p 4 -c 4
fi
[ $fail = 0 ] && echo "PASS capture.sh" || echo "FAIL capture.sh"
exit $fail
