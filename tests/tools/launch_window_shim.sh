#!/bin/bash
# `gpuprobe run --launch-skip/--launch-count` end to end over tests/shim_lazy's fake driver: its
# application launches k_use twice, and the fake says per launch whether the original or the
# instrumented function ran. usage: launch_window_shim.sh GPUPROBE APP SHIM FAKE MODULE.ptx PROBE.bpf.o
set -u
# The per-site call shape (GPUPROBE_DEFER=0): deferred sites (ptx-frontend/instrument.h) have
# their own checks in tests/e2e/aggregate_test.sh and tests/own_driver/probes.sh.
export GPUPROBE_DEFER=0
gp=$1 app=$2 shim=$3 fake=$4 ptx=$5 probe=$6
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
inst="fake: launch k_use instrumented, block 128, 0 bytes dynamic shared; reads c = 7 reads g = 42 reads g = 42 reads c = 7 reads g = 42"
orig="fake: launch k_use original, block 128, 0 bytes dynamic shared;"
try() {   # try WHAT EXPECTED-LAUNCHES [run options]
	local what=$1 want=$2; shift 2
	local got
	got=$(GPUPROBE_REAL_LIBCUDA=$fake GPUPROBE_CACHE_DIR=$tmp/cache "$gp" run "$@" -p "$probe" -- \
		"$app" "$shim" "$ptx" 2>"$tmp/err" | grep '^fake: launch')
	if [ "$got" != "$want" ]; then
		printf 'FAIL: %s\n--- expected:\n%s\n--- got:\n%s\n--- stderr:\n' "$what" "$want" "$got"
		cat "$tmp/err"
		fail=1
	fi
}
try "no window: both launches instrumented" "$inst
$inst"
try "--launch-skip 1: the second only" "$orig
$inst" --launch-skip 1
try "--launch-count 1: the first only" "$inst
$orig" --launch-count 1
try "--launch-skip 1 --launch-count 1" "$orig
$inst" --launch-skip 1 --launch-count 1
try "--launch-skip 2: none" "$orig
$orig" --launch-skip 2
[ $fail = 0 ] && echo "ok: the launch window, through gpuprobe run and the shim"
exit $fail
