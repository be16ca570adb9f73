#!/bin/bash
# Every built-in tool through `gpuprobe run -t` and the shim, over tests/shim_lazy's fake driver
# (its application loads a module, launches k_use twice; in "threads" mode k_use and k_plain
# once each from two threads). Device tools: both launches run the instrumented k_use, nothing
# is said on stderr, exit 0. launches (host probes): its exact output, -k included.
# usage: tools_shim.sh GPUPROBE APP SHIM FAKE MODULE.ptx
set -u
gp=$1 app=$2 shim=$3 fake=$4 ptx=$5
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_RUNTIME_DIR=$tmp/runtime
mkdir -m 0700 "$XDG_RUNTIME_DIR"
unset GPUPROBE_CONFIG GPUPROBE_PROBES GPUPROBE_JSON GPUPROBE_TOP
fail=0
run() {   # run TOOL [app args...] [-- run options]: stdout in $tmp/out, stderr in $tmp/err
	local t=$1; shift
	local args=() opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && { shift; opts=("$@"); }
	GPUPROBE_REAL_LIBCUDA=$fake GPUPROBE_CACHE_DIR=$tmp/cache "$gp" run -t "$t" ${opts[@]+"${opts[@]}"} -- \
		"$app" "$shim" "$ptx" ${args[@]+"${args[@]}"} >"$tmp/out" 2>"$tmp/err"
}
for t in kcount ktime bbcount opcodes divergence memcount memtrace warptrace; do
	run $t
	rc=$?
	n=$(grep -c '^fake: launch k_use instrumented' "$tmp/out")
	if [ $rc != 0 ] || [ "$n" != 2 ] || [ -s "$tmp/err" ]; then
		echo "FAIL: -t $t: exit $rc, $n of 2 launches instrumented"
		cat "$tmp/out" "$tmp/err"; fail=1
	fi
done
check_launches() {   # WHAT EXPECTED [app args...]
	local what=$1 want=$2; shift 2
	run launches "$@"
	local rc=$?
	if [ $rc != 0 ] || [ "$(cat "$tmp/err")" != "$want" ]; then
		printf 'FAIL: -t launches %s (exit %s)\n--- expected:\n%s\n--- got:\n' "$what" $rc "$want"
		cat "$tmp/err"; fail=1
	fi
}
check_launches "k_use twice, block 256, 64 bytes shared" "@launches[k_use]: 2
@blocks[k_use]: 2
@threads[k_use]: 512
@smem_bytes[k_use]: 128
@calls[cuLaunchKernel]: 2
@block_threads:
[256, 512) 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
@grid_blocks:
[1] 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|" module 256 64
check_launches "k_use and k_plain from two threads" "@launches[k_plain]: 1
@launches[k_use]: 1
@blocks[k_plain]: 1
@blocks[k_use]: 1
@threads[k_plain]: 128
@threads[k_use]: 128
@calls[cuLaunchKernel]: 2
@block_threads:
[128, 256) 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
@grid_blocks:
[1] 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|" threads
check_launches "-k k_plain: the filter applies to launches too" "@launches[k_plain]: 1
@blocks[k_plain]: 1
@threads[k_plain]: 128
@calls[cuLaunchKernel]: 1
@block_threads:
[128, 256) 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
@grid_blocks:
[1] 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|" threads -- -k k_plain
[ $fail = 0 ] && echo "ok: every tool through gpuprobe run -t and the shim over the fake driver"
exit $fail
