#!/usr/bin/env bash
# One clock over the fake driver (docs/architecture.md "One clock"; fake_gpu.c's %globaltimer is
# CLOCK_REALTIME + FAKE_GLOBALTIMER_OFFSET_NS). capture_app loads its module inside a global-mode
# stream capture, so the probes start, and the shim measures the clock, inside it. With a probe
# that reads both clock helpers, for a GPU clock 5 ms behind and 2.5 s ahead of the host's:
# the application's output is byte-identical to native, its capture is not invalidated by our
# clock kernel, module, stream or pinned memory, the offset measured at start (GPUPROBE_LOG=1)
# is the fake's to within its stated uncertainty, and the final report's clock line says
# which clocks times are on, with that offset.
# usage: clock_fake.sh CAPTURE_APP SHIM FAKE_DRIVER FATBIN PROBE.bpf.o
set -u
app=$1 shim=$2 fake=$3 fatbin=$4 probe=$5
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
show() { local x; for x in "$@"; do echo "--- $x"; cat "$tmp/$x"; done; }

run() {   # NAME DIR [ENV=VALUE...]
	local name=$1 dir=$2
	shift 2
	env LD_LIBRARY_PATH="$dir" FAKE_GPU=1 FAKE_REPORT="$tmp/$name.rep" GPUPROBE_REAL_LIBCUDA="$fake" \
		GPUPROBE_CACHE_DIR="$tmp/cache" "$@" "$app" "$fatbin" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}

run native "$(dirname "$fake")"
[ "$(cat "$tmp/native.rc")" = 0 ] || { bad "native run"; show native.out native.err; exit 1; }

for off in -5000000 2500000000; do
	name=off$off
	run "$name" "$(dirname "$shim")" GPUPROBE_PROBES="$probe" GPUPROBE_LOG=1 FAKE_GLOBALTIMER_OFFSET_NS=$off
	if [ "$(cat "$tmp/$name.rc")" = 0 ] && cmp -s "$tmp/native.out" "$tmp/$name.out"; then
		ok "GPU clock $off ns from the host's: output byte-identical to native"
	else
		bad "GPU clock $off ns: output differs or exit $(cat "$tmp/$name.rc")"; show "$name.out" "$name.err"
	fi
	inv=$(grep '^captures invalidated' "$tmp/$name.rep")
	[ "$inv" = "captures invalidated: 0" ] && ok "GPU clock $off ns: the capture survived our clock kernel" \
		|| { bad "GPU clock $off ns: $inv"; show "$name.err"; }
	# gpuprobe: clock: CLOCK_REALTIME - %globaltimer = N ns +- U, ...
	line=$(grep '^gpuprobe: clock: CLOCK_REALTIME - %globaltimer = ' "$tmp/$name.err")
	n=$(sed -n 's/.* = \(-\{0,1\}[0-9]*\) ns +- \([0-9]*\),.*/\1/p' <<<"$line")
	u=$(sed -n 's/.* = \(-\{0,1\}[0-9]*\) ns +- \([0-9]*\),.*/\2/p' <<<"$line")
	if [ -n "$n" ] && [ -n "$u" ] && d=$((n + off)) && [ "${d#-}" -le $((u + 100000)) ]; then
		ok "GPU clock $off ns: measured $n ns +- $u (host minus GPU)"
	else
		bad "GPU clock $off ns: measured line '$line'"; show "$name.err"
	fi
	rl=$(grep -c "^clock: probe times are on the host's clocks .*CLOCK_REALTIME - %globaltimer = $n ns +- $u at start" "$tmp/$name.err")
	[ "$rl" = 1 ] && ok "GPU clock $off ns: the final report says which clocks and the offset" \
		|| { bad "GPU clock $off ns: report's clock lines: $rl"; show "$name.err"; }
done
[ $fails = 0 ] && echo "clock_fake: all checks passed" || echo "clock_fake: $fails checks failed"
exit $((fails > 0))
