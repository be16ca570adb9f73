#!/usr/bin/env bash
# Memory sites of tensor-core and asynchronous traffic (ptx-frontend/instrument_mem.c mem_sides):
# `gpuprobe ptx instrument` on mem_sites.ptx (one sm_90 kernel with ld/st, cp.async,
# cp.async.bulk both ways and its reduction, TMA tensor copies both ways, ldmatrix, stmatrix,
# wmma.load/store, and the async instructions that move nothing) with one program per filter:
# exact site counts per filter, each on_all site's address, size and space|dir|kind word in
# order, and ptxas compiling the result for sm_90.
# usage: mem_sites.sh GPUPROBE PTXAS CLANG SRC_DIR
set -u
gp=$1 ptxas=$2 clang=$3 src=$4
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }
d=$src/tests/jit_capture
# a site per memory instruction: this test counts sites (merging them is e2e.aggregate's)
export GPUPROBE_AGGREGATE=0
"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
	-c "$d/mem_probe.bpf.c" -o "$tmp/p.bpf.o" || { bad "clang"; exit 1; }
"$ptxas" -arch=sm_90 "$d/mem_sites.ptx" -o "$tmp/orig.cubin" && ok "ptxas takes the original" ||
	bad "ptxas rejects the original"
# probes stay out of line: each site is one call
GPUPROBE_INLINE=0 "$gp" ptx instrument -p "$tmp/p.bpf.o" "$d/mem_sites.ptx" -o "$tmp/i.ptx" 2>"$tmp/i.err"
check "instrument: exit 0" 0 $?
check "instrument: the sites line" "gpuprobe: $d/mem_sites.ptx: 57 probe sites in 1 functions" "$(cat "$tmp/i.err")"
calls() { grep -cE "call[[:space:]]+\(__gp_ret\), __gp_p0_[0-9]+_$1," "$tmp/i.ptx"; }
# all: ld, st (2 plain); cp.async x2, bulk in, bulk out, reduce, tensor in, tensor out (7
# copies, 2 sites each: 14 async); ldmatrix, stmatrix, wmma.load, wmma.store (4 matrix)
check "all: 20 sites" 20 "$(calls on_all)"
check "plain: ld, st" 2 "$(calls on_plain)"
check "async: 7 copies, a load and a store site each" 14 "$(calls on_async)"
check "matrix: ldmatrix, stmatrix, wmma.load, wmma.store" 4 "$(calls on_matrix)"
check "async,load: the source of each copy" 7 "$(calls on_async_load)"
check "async,matrix,shared: the shared side of each copy, ldmatrix, stmatrix" 9 "$(calls on_shared)"
check "atomic: the bulk reduction's global side" 1 "$(calls on_atomic)"
# Each on_all site: address operand, size, space | dir << 8 | kind << 16 (space 1 global, 2
# shared; dir 1 load, 2 store, 3 atomic; kind 0 plain, 1 async, 2 matrix)
got=$(awk '
/(cvt.u64.u32|mov.b64|mov.u64)[ \t]+%__gp_d1, / {a=$3; sub(/;/,"",a); off=""}
/add.s64[ \t]+%__gp_d1, %__gp_d1, / {off="+" $4; sub(/;/,"",off)}
/mov.u32[ \t]+%__gp_s0, / {v=$3; sub(/;/,"",v)}
/st.local.u32[ \t]+\[__gp_ctx\+8\], %__gp_s0/ {size=v}
/st.local.u32[ \t]+\[__gp_ctx\+12\], %__gp_s0/ {word=v}
/call[ \t]+\(__gp_ret\), __gp_p0_[0-9]+_on_all,/ {print a off, size, sprintf("%x", word)}' "$tmp/i.ptx")
check "all: each site's address, size and space/dir/kind" "%rd3 4 101
%rd4 4 201
%rd3 16 10101
%r4 16 10202
%rd3+16 16 10101
%r4+4096 16 10202
%rd3 4096 10101
%r3 4096 10202
%r3 256 10102
%rd4 256 10201
%r3 256 10102
%rd4 256 10301
%rd5 0 10101
%r3 0 10202
%r3 0 10102
%rd5 0 10201
%r4 16 20102
%r4 8 20202
%rd3 32 20101
%rd4 32 20201" "$got"
"$ptxas" -arch=sm_90 "$tmp/i.ptx" -o "$tmp/i.cubin" 2>"$tmp/ptxas.err" && ok "ptxas compiles the instrumented kernel for sm_90" ||
	{ bad "ptxas rejects the instrumented kernel"; head -5 "$tmp/ptxas.err"; }
# inlined (the default): the same kernel compiles too
"$gp" ptx instrument -p "$tmp/p.bpf.o" "$d/mem_sites.ptx" -o "$tmp/inl.ptx" 2>/dev/null &&
	"$ptxas" -arch=sm_90 "$tmp/inl.ptx" -o "$tmp/inl.cubin" 2>"$tmp/ptxas2.err" &&
	ok "inlined probes: ptxas compiles it too" || { bad "inlined probes"; head -5 "$tmp/ptxas2.err"; }
# a filter name that does not exist: one line naming the kinds
printf '#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n#include <gpuprobe/gpuprobe.h>\nGPU_MEM("tensor", "*") int m(struct gp_mem_ctx *c) { return 0; }\nchar LICENSE[] SEC("license") = "GPL";\n' >"$tmp/bad.bpf.c"
"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" -c "$tmp/bad.bpf.c" -o "$tmp/bad.bpf.o"
"$gp" ptx instrument -p "$tmp/bad.bpf.o" "$d/mem_sites.ptx" >/dev/null 2>"$tmp/bad.err"
grep -q "unknown memory filter 'tensor' (use global, shared, local, generic, load, store, atomic, plain, async, matrix or all" "$tmp/bad.err" &&
	ok "unknown filter: the line names plain, async, matrix" || { bad "unknown filter line"; cat "$tmp/bad.err"; }
echo "$fails failures"
[ $fails = 0 ]
