#!/bin/bash
# Two planes on the GPU (issue 17; docs/architecture.md "Two planes"): the application's process
# only snapshots the maps of device and host probes into its segment, `gpuprobe run` prints them
# and serves them as metrics.
#   1. examples/apps/vec_add 8 under gpu/entry/* { @[kernel] = count(); }: 256 per kernel,
#      printed by gpuprobe (the shim's copier read device map memory on its own stream)
#   2. the same run with --json: the application's file, its process record, the counts
#   3. a PyTorch loop that launches kernels for 60 s, under host/entry/cuLaunchKernel* { @launches
#      = count() } and --metrics: /metrics shows gpuprobe_launches_total growing between two
#      scrapes 2 s apart; then the application is killed with SIGKILL and gpuprobe still prints
#      the last snapshot (the line that says so, and @launches: N with N at least the last scrape)
#   Without PyTorch, 3 says SKIP.
# usage: tests/gpu/planes.sh   (BUILD: a tests/gpu/prepare.sh build with examples/, default
# ./build). Exit 77 without a GPU or the build.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$root/build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$BUILD")
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
GP=$BUILD/bin/gpuprobe
EX=$BUILD/examples
for f in "$GP" "$EX/vec_add"; do
	[ -x "$f" ] || { echo "SKIP: $f missing (tests/gpu/prepare.sh $BUILD builds it)"; exit 77; }
done
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} LC_ALL=C
unset GPUPROBE_SEGMENT_DIR
fail=0
check() {
	if [ "$2" = "$3" ]; then echo "PASS $1 = $(echo "$3" | paste -sd'|')"; else
		echo "FAIL $1"; echo "  expected: $(echo "$2" | paste -sd'|')"; echo "  got:      $(echo "$3" | paste -sd'|')"; fail=1; fi
}

# 1. device probes, printed by gpuprobe
timeout 300 "$GP" run -e 'gpu/entry/* { @[kernel] = count(); }' -- "$EX/vec_add" 8 >"$OUT/kcount.out" 2>"$OUT/kcount.err"
check "kcount: exit status" 0 $?
check "kcount: @count" "$(printf '%s\n' '@count[oddEven(float*)]: 256' '@count[vectorAdd(float const*, float const*, float*)]: 256')" \
	"$(grep '^@count\[' "$OUT/kcount.err" | sort)"
check "kcount: no segment left" "" "$(ls "${XDG_RUNTIME_DIR:-/tmp/gpuprobe-$(id -u)}"/gpuprobe/run.* 2>/dev/null; ls /tmp/gpuprobe-$(id -u)/run.* 2>/dev/null)"

# 2. --json
timeout 300 "$GP" run --json "$OUT/kcount.json" -e 'gpu/entry/* { @[kernel] = count(); }' -- "$EX/vec_add" 8 >"$OUT/json.out" 2>"$OUT/json.err"
check "json: exit status" 0 $?
check "json: records" "process count=512" "$(python3 - "$OUT/kcount.json" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
print(recs[0]["type"], "count=%d" % sum(e["value"] for r in recs if r["type"] == "top" for e in r["data"]))
PY
)"

# 3. metrics while it runs, then SIGKILL
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	echo "SKIP (part): no PyTorch with CUDA: metrics and SIGKILL not checked"
else
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$OUT/loop.py" <<'PY'
import os, sys, time, torch
x = torch.ones(1 << 20, device="cuda")
open(sys.argv[1] + ".tmp", "w").write("%d\n" % os.getpid())
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
end = time.time() + 60
while time.time() < end:
    x = x * 1.0001 + 1
    torch.cuda.synchronize()
PY
	hold=$OUT/loop.pid
	rm -f "$hold"
	"$GP" run --metrics "$port" -e 'host/entry/cuLaunchKernel* { @launches = count(); }' -- \
		python3 "$OUT/loop.py" "$hold" >"$OUT/loop.out" 2>"$OUT/loop.err" &
	gpid=$!
	for i in $(seq 600); do [ -s "$hold" ] && break; sleep 0.1; done
	read -r apid <"$hold" 2>/dev/null || apid=
	scrape() { curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/^gpuprobe_launches_total{pid="[0-9]*"} \([0-9]*\)$/\1/p'; }
	sleep 2
	a=$(scrape)
	sleep 2
	b=$(scrape)
	if [ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] && [ "$a" -gt 0 ]; then
		echo "PASS metrics: gpuprobe_launches_total $a then $b"
	else
		echo "FAIL metrics: gpuprobe_launches_total '$a' then '$b'"; fail=1
		curl -s "http://127.0.0.1:$port/metrics" | head -20
	fi
	if [ -n "$apid" ]; then
		kill -KILL "$apid"
		wait $gpid
		check "SIGKILL: gpuprobe's exit status" 137 $?
		grep -q "^gpuprobe: run: process $apid ended without its final report" "$OUT/loop.err" ||
			{ echo "FAIL SIGKILL: no line about the last snapshot"; fail=1; }
		n=$(sed -n 's/^@launches: //p' "$OUT/loop.err")
		if [ -n "$n" ] && [ -n "$b" ] && [ "$n" -ge "$b" ]; then echo "PASS SIGKILL: @launches: $n (>= $b)"
		else echo "FAIL SIGKILL: @launches '$n' after a scrape of '$b'"; fail=1; tail -5 "$OUT/loop.err"; fi
	else
		echo "FAIL the PyTorch loop never started"; fail=1; kill $gpid; tail -5 "$OUT/loop.err"
	fi
fi
[ $fail = 0 ] && echo "PASS: two planes on the GPU"
exit $fail
