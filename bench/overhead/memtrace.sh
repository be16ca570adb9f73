#!/bin/bash
# Memory traces on the GPU (issue 18): every global load and store of the vector add (16M) and
# the SGEMM (2048) traced into a binary capture (gpuprobe run --output), each way the rings can
# run, timed against the native kernels in the same run (median per-launch time, ovh.cu):
#   memtrace            one 16-byte record per lane, lossy (bench/overhead's baseline probe)
#   memtrace_lossless   the same records, lossless ring (vector add only: 1.1 GB per launch)
#   memtrace_warp       one warp record per warp access (bpf_gpu_warp_output), lossless
#   memtrace_warp_lossy the same, lossy: its drop fraction
#   memtrace_warp_s16   the same, lossless, sampled 1 in 16 warp accesses per SM ring
# Prints a table: time ratio to native for vecadd 16M and sgemm 2048, the records captured and
# lost (gpuprobe decode --stats), the drop fraction, the capture's size. Every log into $OUT.
# Captures are deleted once counted (CAP_DIR: /dev/shm when it exists, else $OUT; an SGEMM 2048
# lossless warp trace is about 0.7 GB per launch, the per-lane lossless vector add 1.2 GB).
# OVH_REPS (default 3) and OVH_WARM (1) per size; MT_PROBES: the probes to run (default all);
# MT_WORKLOADS: ovh's workloads (default "vecadd sgemm"; the table shows each one's largest size).
# usage: bench/overhead/memtrace.sh [BUILD]   (BUILD from bench/overhead/build.sh or
#        tests/gpu/prepare.sh; default $BENCH_BUILD, then ./build). Exit 77 without a GPU.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
B=$(realpath -m "${1:-${BENCH_BUILD:-$root/build}}")
OUT=${OUT:-$(mktemp -d)}
if [ -z "${CAP_DIR:-}" ]; then
	CAP_DIR=$OUT
	[ -d /dev/shm ] && [ -w /dev/shm ] && CAP_DIR=/dev/shm/gp-memtrace.$$
fi
mkdir -p "$OUT" "$CAP_DIR"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
[ -x "$B/overhead/ovh" ] || { echo "SKIP: $B/overhead/ovh missing (bench/overhead/build.sh $B)"; exit 77; }
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_CACHE_PATH=$OUT/jitcache GPUPROBE_CACHE_DIR=$OUT/jitcache/gpuprobe
export OVH_REPS=${OVH_REPS:-3} OVH_WARM=${OVH_WARM:-1}
MT_PROBES=${MT_PROBES:-memtrace memtrace_lossless memtrace_warp memtrace_warp_lossy memtrace_warp_s16}
MT_WORKLOADS=${MT_WORKLOADS:-vecadd sgemm}
GP=$B/bin/gpuprobe O=$B/overhead P=$B/overhead/probes
LIMIT=${MT_LIMIT:-280}
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u +%FT%TZ; } |
	tee "$OUT/memtrace-device.txt"

# run NAME WORKLOADS [PROBE]: timed ovh lines into NAME.out; with a probe, the capture counted
run() {
	local name=$1 w=$2 probe=${3:-}
	local s=$(date +%s.%N) rc
	if [ -z "$probe" ]; then
		timeout "$LIMIT" "$O/ovh" $w >"$OUT/$name.out" 2>"$OUT/$name.err"
		rc=$?
	else
		rm -f "$CAP_DIR/$name.gpt"
		timeout "$LIMIT" "$GP" run --output "$CAP_DIR/$name.gpt" -p "$P/$probe.bpf.o" -- "$O/ovh" $w \
			>"$OUT/$name.out" 2>"$OUT/$name.err"
		rc=$?
		ls -l "$CAP_DIR/$name.gpt" 2>/dev/null | awk '{print "CAPTURE_BYTES", $5}' >>"$OUT/$name.out"
		"$GP" decode --stats "$CAP_DIR/$name.gpt" >>"$OUT/$name.err" 2>&1
		grep -o "[0-9]* records, [0-9]* lost" "$OUT/$name.err" | tail -1 |
			awk '{print "CAPTURED", $1, $3}' >>"$OUT/$name.out"
		rm -f "$CAP_DIR/$name.gpt"
	fi
	echo "$name rc=$rc wall_s=$(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $s}")" | tee -a "$OUT/memtrace-runs.txt"
}

run native "$MT_WORKLOADS"
for p in $MT_PROBES; do
	case $p in
	memtrace_lossless) run "$p" "vecadd" "$p" ;;   # per-lane lossless SGEMM: 13 GB a launch
	*) run "$p" "$MT_WORKLOADS" "$p" ;;
	esac
done
run native2 "$MT_WORKLOADS"
[ "$CAP_DIR" = "$OUT" ] || rmdir "$CAP_DIR" 2>/dev/null

python3 - "$OUT" $MT_WORKLOADS <<'PY' | tee "$OUT/memtrace-table.txt"
import re, sys, os
out, workloads = sys.argv[1], sys.argv[2:]
def med(name, w, size):
    try:
        for line in open(os.path.join(out, name + ".out")):
            f = line.split()
            if f[:4] == ["R", w, str(size), "base"]:
                return float(f[4])
    except OSError:
        pass
    return None
def extra(name, key):
    try:
        for line in open(os.path.join(out, name + ".out")):
            if line.startswith(key):
                return line.split()[1:]
    except OSError:
        pass
    return None
def largest(w):
    sizes = []
    try:
        for line in open(os.path.join(out, "native.out")):
            f = line.split()
            if f[:2] == ["R", w] and f[3] == "base":
                sizes.append(int(f[2]))
    except OSError:
        pass
    return max(sizes) if sizes else None
cols = [(w, largest(w)) for w in workloads if largest(w)]
nat = {c: med("native", *c) for c in cols}
for w, n in cols:
    n2 = med("native2", w, n)
    print(f"native {w} {n}: {nat[(w, n)]} us median per launch"
          + (f"; a second native run {n2 / nat[(w, n)]:.3f}x" if n2 else ""))
hdr = "".join(f" {w + str(n):>15}" for w, n in cols)
print(f"{'probe':22} {'mode':9}{hdr} {'records':>12} {'lost':>12} {'drop%':>7} {'capture_MB':>11}")
modes = {"memtrace": "lossy", "memtrace_lossless": "lossless", "memtrace_warp": "lossless",
         "memtrace_warp_lossy": "lossy", "memtrace_warp_s16": "1/16"}
for p, mode in modes.items():
    ratios = ""
    for c in cols:
        t = med(p, *c)
        ratios += f" {(f'{t / nat[c]:.2f}x' if t and nat[c] else '-'):>15}"
    cap = extra(p, "CAPTURED") or ["-", "-"]
    size = extra(p, "CAPTURE_BYTES")
    drop = "-"
    if cap[0] != "-" and int(cap[0]) + int(cap[1]) > 0:
        drop = f"{100.0 * int(cap[1]) / (int(cap[0]) + int(cap[1])):.2f}"
    mb = f"{int(size[0]) / 1e6:.1f}" if size else "-"
    print(f"{p:22} {mode:9}{ratios} {cap[0]:>12} {cap[1]:>12} {drop:>7} {mb:>11}")
print("(time ratios: the probe's median launch over native's; records and lost: the whole run,"
      " every size and launch, warm-ups included; NVBit mem_trace publishes 7x, bpftime 1.8-4.2x)")
PY
