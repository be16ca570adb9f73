#!/usr/bin/env bash
# The instrumented PTX repeats from process to process when map memory is at fixed addresses
# (shim/probes_alloc.c), and differs when it is at driver-chosen ones (GPUPROBE_MAP_VA=0): the
# second half shows the comparison can see a moved map. The map addresses in the PTX lie in the
# fixed device range.
# usage: ptx_repeat.sh SHIM_PTX_REPEAT IN.ptx PROBE.bpf.o...
set -u
bin=$1 ptx=$2
shift 2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for r in 1 2; do
	"$bin" "$tmp/fixed$r.ptx" "$ptx" "$@" 2>"$tmp/fixed$r.err" || { cat "$tmp/fixed$r.err"; fail "fixed run $r"; }
	GPUPROBE_MAP_VA=0 "$bin" "$tmp/driver$r.ptx" "$ptx" "$@" 2>"$tmp/driver$r.err" ||
		{ cat "$tmp/driver$r.err"; fail "driver-chosen run $r"; }
done
cat "$tmp/fixed1.err"
line=$(grep -o 'probes: map memory at fixed addresses (device 0x[0-9a-f]*' "$tmp/fixed1.err") ||
	fail "no fixed-address line"
base=$((${line##* }))
grep -q 'probes: map memory at driver-chosen addresses (GPUPROBE_MAP_VA=0); instrumented modules will not hit the JIT cache' \
	"$tmp/driver1.err" || fail "no fallback line with GPUPROBE_MAP_VA=0"
cmp "$tmp/fixed1.ptx" "$tmp/fixed2.ptx" || { diff "$tmp/fixed1.ptx" "$tmp/fixed2.ptx" | head -20; fail "fixed: the PTX differs between runs"; }
echo "ok: the instrumented PTX ($(wc -c <"$tmp/fixed1.ptx") bytes) is byte-identical in two processes"
cmp -s "$tmp/driver1.ptx" "$tmp/driver2.ptx" && fail "driver-chosen: the PTX did not change (the check cannot see moved maps)"
echo "ok: at driver-chosen addresses it differs ($(diff "$tmp/driver1.ptx" "$tmp/driver2.ptx" | grep -c '^<') lines)"
# Every 64-bit immediate of a map address (mov.u64 %r, N with N >= 2^40) in the fixed range.
in=0 out=0
for v in $(grep -oE 'mov\.u64 [^,]+, [0-9]{13,}' "$tmp/fixed1.ptx" | awk '{print $3}'); do
	if [ "$v" -ge "$base" ] && [ "$v" -lt $((base + (64 << 30))) ]; then in=$((in + 1)); else out=$((out + 1)); echo "outside: $v"; fi
done
[ "$in" -gt 0 ] || fail "no map address in the PTX"
[ "$out" = 0 ] || fail "$out map addresses outside the fixed range"
echo "ok: $in map address immediates, all in the fixed range at $(printf %#x "$base")"
# bpf_get_current_pid_tgid (on_entry) reads a device word in the fixed range: the pid as an
# immediate made every process's PTX differ (mov.b64 ..., 0x6d8600006d86 vs 0x6d8800006d88).
pid=$(grep -A1 -E 'mov\.u64[[:space:]]+%[A-Za-z0-9_]+_t0, 0x[0-9a-f]+;' "$tmp/fixed1.ptx" |
	grep -B1 -E 'ld\.global\.nc\.u64[[:space:]]+%[A-Za-z0-9_]+_r0, \[%[A-Za-z0-9_]+_t0\];' |
	grep -oE '0x[0-9a-f]+;' | tr -d ';' | sort -u)
[ -n "$pid" ] || fail "no load of the pid_tgid word in the PTX"
[ "$(echo "$pid" | wc -l)" = 1 ] || fail "the pid_tgid word at several addresses: $pid"
[ "$((pid))" -ge "$base" ] && [ "$((pid))" -lt $((base + (64 << 30))) ] || fail "pid_tgid word $pid outside the fixed range"
echo "ok: bpf_get_current_pid_tgid loads the word at $pid (fixed range), no pid immediate"
