#!/bin/sh
# The verifier's warnings reach the user through the probe set-up the shim uses
# (nvidia/probes.c), once per program: `gpuprobe ptx instrument` goes through the same set-up.
# warn_racy_rmw's programs `racy` and `global` each have one racy read-modify-write; not_racy none.
# usage: warn_once.sh GPUPROBE CLANG SOURCE_ROOT WORKDIR
set -u
gpuprobe=$1 clang=$2 root=$3 work=$4
mkdir -p "$work"
fail() { echo "FAIL warn_once: $*"; exit 1; }
"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" -c \
	"$root/tests/verifier/progs/warn_racy_rmw.bpf.c" -o "$work/racy.bpf.o" || fail "clang"
cat > "$work/k.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64
.visible .entry racy()
{
	ret;
}
PTX
"$gpuprobe" ptx instrument -p "$work/racy.bpf.o" "$work/k.ptx" > "$work/out.ptx" 2> "$work/err" ||
	{ cat "$work/err"; fail "instrument failed"; }
cat "$work/err"
n=$(grep -c 'warning: ' "$work/err")
[ "$n" = 2 ] || fail "$n warning lines, expected 2"
grep -q "program racy: warning: 10: (7b) \*(u64 \*)(r0 +0) = r1: read-modify-write of map 'counts'" "$work/err" ||
	fail "no warning naming racy's instruction 10"
grep -q "program global: warning: 4: (7b) " "$work/err" || fail "no warning naming global's instruction 4"
grep -q "program not_racy" "$work/err" && fail "a warning for not_racy"
echo "PASS warn_once"
