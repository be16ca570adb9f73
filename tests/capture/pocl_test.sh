#!/usr/bin/env bash
# gpuprobe run --output on a real CUDA program without a GPU: examples/apps/vec_add (nvcc) on
# gpuprobe's own driver over PoCL, under tests/gpu/capture's memory trace (a typed ring). The
# program's output is as without the capture; the file holds exactly the records the segment
# path prints without --output (640: vectorAdd 3 accesses and oddEven 2 per element, 128
# elements), 0 lost; decode types them (384 loads, 256 stores, all 4 bytes); no FILE.gpt.PID
# appears (one process), but a wrapper's CUDA child writes FILE.gpt.PID and run names it; an
# uncreatable capture falls back to printing; a stale file is not reported; a name without .gpt
# is refused.
# Skips (77) without nvcc, clang or an OpenCL device.
# usage: pocl_test.sh GPUPROBE SRC_DIR NVCC
set -u
gp=$(realpath "$1") src=$2 nvcc=$3
root=$(cd "$src/../.." && pwd)
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
clang=$(command -v clang || command -v clang-14) || { echo "SKIP: no clang"; exit 77; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP: no OpenCL device"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_RUNTIME_DIR=$tmp/run GPUPROBE_BACKEND=opencl GPUPROBE_CACHE_DIR=$tmp/cache
mkdir -m 700 "$tmp/run"
"$nvcc" -O2 -o "$tmp/vec_add" "$root/examples/apps/vec_add.cu" >"$tmp/nvcc.log" 2>&1 ||
	{ echo "SKIP: nvcc cannot build vec_add here"; cat "$tmp/nvcc.log"; exit 77; }
"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" \
	-c "$root/tests/gpu/capture/memtrace_lossy.bpf.c" -o "$tmp/mt.bpf.o" || exit 1
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
want="vec_add: G=4 n=128 sum=11747.0"
out=$(cd "$tmp" && timeout 300 "$gp" run -p "$tmp/mt.bpf.o" --output cap.gpt -- "$tmp/vec_add" 2>"$tmp/err")
[ "$out" = "$want" ] && ok "vec_add under --output: '$out'" || { bad "vec_add: '$out'"; cat "$tmp/err"; }
grep -q '^@trace\[ring' "$tmp/err" && bad "ring records printed although they went to the file"
said=$(grep '^gpuprobe: capture ' "$tmp/err")
echo "$said" | grep -Eq "^gpuprobe: capture $tmp/cap.gpt: 640 records, [0-9]+ bytes \('gpuprobe decode $tmp/cap.gpt'\)$" &&
	ok "run says: $said" || bad "run says: '$said'"
seg=$(timeout 300 "$gp" run -p "$tmp/mt.bpf.o" -- "$tmp/vec_add" 2>&1 >/dev/null | grep -c '^@trace\[ring')
[ "$seg" = 640 ] && ok "segment path: $seg records" || bad "segment path: $seg records, expected 640"
stats=$("$gp" decode --stats "$tmp/cap.gpt" 2>&1)
echo "$stats" | grep -Eq "^gpuprobe: $tmp/cap.gpt: map 'trace': 640 records, 0 lost \([0-9]+ rings, lossy\)$" &&
	ok "capture: $stats" || bad "capture: $stats"
kinds=$("$gp" decode "$tmp/cap.gpt" 2>/dev/null | sed -E 's/^trace ring [0-9]+: addr=[0-9]+ //' | sort | uniq -c | awk '{print $1 " " $2 " " $3}' | paste -sd,)
[ "$kinds" = "384 size=4 dir=1,256 size=4 dir=2" ] && ok "typed fields: $kinds" || bad "typed fields: $kinds"
ls "$tmp"/cap.gpt.* >/dev/null 2>&1 && bad "a FILE.gpt.PID appeared: $(ls "$tmp"/cap.gpt.*)"
msg=$("$gp" run -p "$tmp/mt.bpf.o" --output cap.txt -- "$tmp/vec_add" 2>&1); rc=$?
[ $rc = 2 ] && [ "$msg" = "gpuprobe: run: --output cap.txt: a capture's name ends in .gpt (see 'gpuprobe run --help')" ] &&
	ok "--output cap.txt refused (exit 2)" || bad "--output cap.txt: exit $rc, '$msg'"
# a capture that cannot be created: one line from the shim, the records go to the printer, the
# application's output is as without it
out=$(timeout 300 "$gp" run -p "$tmp/mt.bpf.o" --output "$tmp/no/such/dir/c.gpt" -- "$tmp/vec_add" 2>"$tmp/err2")
n=$(grep -c '^@trace\[ring' "$tmp/err2")
grep -q "^gpuprobe: probes: capture $tmp/no/such/dir/c.gpt: cannot create it (No such file or directory); ring records go to gpuprobe as without --output$" "$tmp/err2" &&
	[ "$out" = "$want" ] && [ "$n" = 640 ] && ok "unwritable capture: one line, 640 records printed instead" ||
	{ bad "unwritable capture: '$out', $n records printed"; cat "$tmp/err2"; }
# the CUDA process is a wrapper's child: it writes FILE.gpt.PID, and run reports that file
out=$(cd "$tmp" && timeout 300 "$gp" run -p "$tmp/mt.bpf.o" --output wrap.gpt -- sh -c "$tmp/vec_add" 2>"$tmp/err3")
said=$(grep '^gpuprobe: capture ' "$tmp/err3")
echo "$said" | grep -Eq "^gpuprobe: capture $tmp/wrap.gpt\.[0-9]+: 640 records, [0-9]+ bytes \('gpuprobe decode $tmp/wrap.gpt\.[0-9]+'\)$" &&
	[ ! -e "$tmp/wrap.gpt" ] && [ "$out" = "$want" ] && ok "wrapped: $said" || { bad "wrapped: '$said'"; cat "$tmp/err3"; }
# a file an earlier run left is not this run's: an app without CUDA leaves none, and run says so
touch "$tmp/old.gpt"
said=$("$gp" run -p "$tmp/mt.bpf.o" --output "$tmp/old.gpt" -- /bin/true 2>&1)
[ ! -e "$tmp/old.gpt" ] && [ "$said" = "gpuprobe: run: no process of the application set up probes: none loaded a GPU module through gpuprobe's libcuda.so.1 (it made no CUDA call, or reached a driver another way); nothing to report
gpuprobe: capture $tmp/old.gpt: not written (the application set no probes up, or could not create it: then a line above says why)" ] &&
	ok "stale capture removed: $said" || bad "stale capture: '$said'"
[ $fails = 0 ] && echo "PASS" || echo "$fails FAILED"
exit $((fails > 0))
