#!/usr/bin/env bash
# The clock words (docs/architecture.md "One clock") keep the instrumented PTX the same from process to
# process: a probe reading bpf_ktime_get_ns and bpf_get_globaltimer is lowered to %globaltimer
# plus a load of a word in the fixed map range (nvidia/probes.c allocates it after the maps), not
# to an offset immediate that would differ per run and defeat the driver's JIT cache.
# usage: clock_repeat.sh SHIM_PTX_REPEAT IN.ptx CLOCK.bpf.o
set -u
bin=$1 ptx=$2 probe=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for r in 1 2; do
	"$bin" "$tmp/run$r.ptx" "$ptx" "$probe" 2>"$tmp/run$r.err" || { cat "$tmp/run$r.err"; fail "run $r"; }
done
cmp -s "$tmp/run1.ptx" "$tmp/run2.ptx" || { diff "$tmp/run1.ptx" "$tmp/run2.ptx" | head; fail "the PTX differs between runs"; }
line=$(grep -o 'probes: map memory at fixed addresses (device 0x[0-9a-f]*' "$tmp/run1.err") || fail "no fixed-address line"
base=$((${line##* }))
# mov %r0, %globaltimer; mov %t0, ADDR; ld.global.nc.u64 %t0, [%t0]; add.s64 %r0, %r0, %t0
words=$(awk '/mov\.u64[ \t]+%[A-Za-z0-9_]+_r0, %globaltimer;/ {g = NR; next}
	g && NR == g + 1 && /mov\.u64[ \t]+%[A-Za-z0-9_]+_t0, 0x[0-9a-f]+;/ {a = $3; sub(";", "", a); next}
	g && NR == g + 2 && a && /ld\.global\.nc\.u64/ {next}
	g && NR == g + 3 && a && /add\.s64/ {print a}
	NR > g + 3 {g = 0; a = ""}' "$tmp/run1.ptx" | sort -u)
[ "$(echo "$words" | wc -w)" = 2 ] || fail "expected the two clock words loaded after %globaltimer, got '$words'"
lo=$(echo "$words" | head -1) hi=$(echo "$words" | tail -1)
[ $((hi - lo)) = 8 ] || fail "clock words $lo and $hi are not 8 bytes apart"
[ $((lo)) -ge "$base" ] && [ $((lo)) -lt $((base + (64 << 30))) ] || fail "clock word $lo outside the fixed range at $base"
echo "ok: the instrumented PTX is byte-identical in two processes; ktime_get_ns and get_globaltimer add the words at $lo and $hi (fixed range $(printf %#x "$base"))"
