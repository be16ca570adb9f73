#!/usr/bin/env bash
# Probes and CUDA graphs, and "probes disabled" meaning untouched (issue 11), over the fake
# driver (fake_gpu.c: stream capture with the driver's rules on prohibited calls, graphs, two
# kernels run on the CPU). capture_app captures a stream in global mode and loads its module
# inside the capture, as graphExecution does under CUDA's lazy loading.
#  1. with a probe: the capture survives (the shim's own driver calls never invalidate it), the
#     application's output is byte-identical to the run without the shim, and every launch (captured
#     graph replays, a graph built node by node, plain launches) runs the instrumented code;
#  2. GPUPROBE_TEST_FAULT=STEP for every set-up step: one line naming the step, the output
#     byte-identical, no capture invalidated, only original code launched, and after a failed
#     set-up nothing of ours left allocated (streams, memory, reservations, modules).
# usage: capture.sh CAPTURE_APP SHIM FAKE_DRIVER FATBIN PROBE.bpf.o
set -u
app=$1 shim=$2 fake=$3 fatbin=$4 probe=$5
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
show() { local x; for x in "$@"; do echo "--- $x"; cat "$tmp/$x"; done; }

# run NAME DIR [ENV=VALUE...]: the app with libcuda.so.1 from DIR; NAME.out, NAME.err, NAME.rep
run() {
	local name=$1 dir=$2
	shift 2
	env LD_LIBRARY_PATH="$dir" FAKE_GPU=1 FAKE_REPORT="$tmp/$name.rep" GPUPROBE_REAL_LIBCUDA="$fake" \
		GPUPROBE_CACHE_DIR="$tmp/cache" "$@" "$app" "$fatbin" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
rep() { grep -E "^$2" "$tmp/$1.rep"; }
# the shim's own lines (the probes' report, printed at exit, aside)
shim_lines() { grep '^gpuprobe: ' "$tmp/$1.err"; }

run native "$(dirname "$fake")"
if [ "$(cat "$tmp/native.rc")" = 0 ] && grep -q '^done$' "$tmp/native.out" && ! grep -q FAIL "$tmp/native.out"; then
	ok "native: the application passes over the fake driver"
else
	bad "native run"; show native.out native.err
fi
shimdir=$(dirname "$shim")

# 1. Probes on.
run probes "$shimdir" GPUPROBE_PROBES="$probe"
if cmp -s "$tmp/native.out" "$tmp/probes.out" && [ "$(cat "$tmp/probes.rc")" = 0 ]; then
	ok "probes: output byte-identical to native"
else
	bad "probes: output differs from native (exit $(cat "$tmp/probes.rc"))"; show probes.out probes.err probes.rep
fi
if [ "$(rep probes 'captures invalidated')" = "captures invalidated: 0" ]; then
	ok "probes: the application's capture was not invalidated"
else
	bad "probes: $(rep probes 'captures invalidated')"
fi
if [ "$(rep probes 'launches of (original|instrumented)' | xargs)" = \
     "launches of original code: 0 launches of instrumented code: 12" ]; then
	ok "probes: all 12 launches (6 captured, 4 of a built graph's node, 2 plain) ran instrumented code"
else
	bad "probes: launches: $(rep probes 'launches of' | xargs)"; show probes.err
fi
if [ -z "$(shim_lines probes)" ]; then
	ok "probes: the shim printed nothing"
else
	bad "probes: the shim printed"; shim_lines probes
fi

# The collector thread snapshots the maps every second (GPUPROBE_INTERVAL=1) while the
# application keeps its global-mode capture open 2.5 s: its copies must not break it either.
run copier "$shimdir" GPUPROBE_PROBES="$probe" GPUPROBE_INTERVAL=1 CAPTURE_APP_WAIT_MS=2500
if cmp -s "$tmp/native.out" "$tmp/copier.out" && [ "$(cat "$tmp/copier.rc")" = 0 ] &&
   [ "$(rep copier 'captures invalidated')" = "captures invalidated: 0" ]; then
	ok "copier: snapshots during the application's capture leave it valid"
else
	bad "copier: exit $(cat "$tmp/copier.rc"), $(rep copier 'captures invalidated')"; show copier.out copier.err
fi
n=$(rep copier 'unsafe calls from other threads' | sed 's/.*: //')
if [ "${n:-0}" -ge 2 ] && [ "$(grep -c '^--- [0-9.]*s ---$' "$tmp/copier.err")" -ge 2 ]; then
	ok "copier: two snapshots, $n calls of the collector thread met the open capture"
else
	bad "copier: the collector thread did not run during the capture ($n calls)"; show copier.err copier.rep
fi

# 2. A fault at each set-up step. Set-up steps disable probes (one line); module steps load that
# module's original (one line), or, where kernels are instrumented one at a time at their first
# launch (shim/lazy.h), run each kernel without probes (one line per kernel). Module steps run
# both ways (GPUPROBE_LAZY=0: whole modules at load). Each line, as a regular expression:
K='kernel [a-z_]+ \(module 1\)'
declare -A line=(
	[memory]='^gpuprobe: probes: map memory: .*GPUPROBE_TEST_FAULT=memory.*; probes disabled$'
	[descriptor]="^gpuprobe: .*maps: map 'enter': cannot allocate its descriptor .*; probes disabled$"
	[config]='^gpuprobe: probes: configuration: .*GPUPROBE_TEST_FAULT=config.*; probes disabled$'
	[objects]='^gpuprobe: probes: objects: .*GPUPROBE_TEST_FAULT=objects.*; probes disabled$'
	[output]='^gpuprobe: probes: output: .*GPUPROBE_TEST_FAULT=output.*; probes disabled$'
	[capture]='^gpuprobe: probes: .*CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.*; probes disabled$'
	[instrument]="^gpuprobe: (module 1|$K): not instrumented \(GPUPROBE_TEST_FAULT=instrument\); (loaded unchanged|runs without probes)\$"
	[compile]="^gpuprobe: (module 1: the instrumented PTX|$K: the instrumented kernel) did not compile \(.*\); (loaded the original|runs) without probes\$"
	[load]="^gpuprobe: (module 1: the instrumented PTX|$K: the instrumented kernel) did not (load|compile) \(.*GPUPROBE_TEST_FAULT=load.*\); (loaded the original|runs) without probes\$"
	[function]="^gpuprobe: (module 1: the instrumented PTX|$K: the instrumented kernel) did not (load|compile) \(.*GPUPROBE_TEST_FAULT=function.*\); (loaded the original|runs) without probes\$"
)
setup="memory descriptor config objects output capture"
for f in $setup instrument compile load function instrument/whole compile/whole load/whole function/whole; do
	envs=(GPUPROBE_PROBES="$probe" GPUPROBE_TEST_FAULT="${f%/whole}")
	case $f in */whole) envs+=(GPUPROBE_LAZY=0) ;; esac
	name=f-${f/\//-}
	what="fault $f"
	f=${f%/whole}
	run "$name" "$shimdir" "${envs[@]}"
	if cmp -s "$tmp/native.out" "$tmp/$name.out" && [ "$(cat "$tmp/$name.rc")" = 0 ]; then
		ok "$what: output byte-identical to native"
	else
		bad "$what: output differs (exit $(cat "$tmp/$name.rc"))"; show "$name.out" "$name.err" "$name.rep"
	fi
	lines=$(shim_lines "$name")
	n=$(printf '%s\n' "$lines" | grep -c .)
	if [ "$n" -ge 1 ] && [ "$(printf '%s\n' "$lines" | grep -cE "${line[$f]}")" = "$n" ] &&
	   { [ "$n" = 1 ] || ! case " $setup " in *" $f "*) true ;; *) false ;; esac; }; then
		ok "$what: $(printf '%s\n' "$lines" | head -1)${lines:+$([ "$n" -gt 1 ] && echo " (+$((n - 1)) such lines)")}"
	else
		bad "$what: expected lines matching ${line[$f]}, got:"; printf '%s\n' "$lines"
	fi
	got=$(rep "$name" 'captures invalidated|launches of instrumented' | xargs)
	if [ "$got" = "launches of instrumented code: 0 captures invalidated: 0" ]; then
		ok "$what: only original code ran, no capture invalidated"
	else
		bad "$what: $got"
	fi
	if [ "$(rep "$name" 'live modules')" = "live modules: 0" ]; then
		ok "$what: no module of ours left loaded"
	else
		bad "$what: modules left loaded:"; rep "$name" 'live module'
	fi
	case " $setup " in *" $f "*)
		got=$(rep "$name" 'live (streams|allocations|reservations)' | xargs)
		want="live streams: 0 live allocations: 0, host: 0, registered: 0 live reservations: 0, handles: 0, mappings: 0"
		if [ "$got" = "$want" ]; then
			ok "$what: nothing of ours left allocated"
		else
			bad "$what: left allocated: $got"
		fi
	esac
done

[ $fails = 0 ] && echo "capture: all passed" || echo "capture: $fails failed"
[ $fails = 0 ]
