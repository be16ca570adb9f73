#!/bin/bash
# Built-in tools and run's one-liner options, without a GPU: `gpuprobe tools` lists exactly the
# tools include/gpuprobe/tools/ holds; each tool verifies; `gpuprobe ptx instrument` puts each
# tool's probes at exactly the sites vec_add.ptx has (2 global loads, 1 store, 1 atomic; 3
# basic blocks; entry and block begin) and ptxas compiles the result; `run -t/-k/--launch-*`
# hand the shim what they should (the applications are shell commands that print it) or stop
# with one line and exit 2. usage: tools.sh GPUPROBE REPO WORKDIR   (PTXAS: optional)
set -u
gp=$1 repo=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
check() {   # check WHAT EXPECTED ACTUAL
	if [ "$2" != "$3" ]; then
		printf 'FAIL: %s\n--- expected:\n%s\n--- got:\n%s\n' "$1" "$2" "$3"
		fail=1
	fi
}

# the list, and the list against the sources
check "gpuprobe tools" "instrcount  PTX instructions executed per kernel, from basic-block lengths (gpu/bb)
kernels     threads, blocks and launches per kernel (gpu/entry, gpu/block_begin)
memcount    loads, stores and atomics executed per kernel, every state space (gpu/mem)
memtrace    every global access as a ring record: address, size, direction, kernel (gpu/mem)" \
	"$("$gp" tools 2>&1)"
check "tools listed = tools in include/gpuprobe/tools" \
	"$(cd "$repo/include/gpuprobe/tools" && ls *.bpf.c | sed 's/\.bpf\.c$//')" \
	"$("$gp" tools | awk '{print $1}')"

tools=$(dirname "$(dirname "$gp")")/lib/gpuprobe-tools
verify() { "$gp" verify "$tools/$1.bpf.o" 2>&1; }
check "verify kernels" "on_entry (gpu/entry/*): OK, 28 insns, stack 16
on_block (gpu/block_begin/*): OK, 63 insns, stack 16" "$(verify kernels)"
check "verify memcount" "on_load (gpu/mem/load/*): OK, 28 insns, stack 16
on_store (gpu/mem/store/*): OK, 28 insns, stack 16
on_atomic (gpu/mem/atomic/*): OK, 28 insns, stack 16" "$(verify memcount)"
check "verify instrcount" "on_bb (gpu/bb/*): OK, 29 insns, stack 16" "$(verify instrcount)"
check "verify memtrace" "on_access (gpu/mem/global/*): OK, 22 insns, stack 24" "$(verify memtrace)"

# sites in a kernel of known shape
ptx=$repo/tests/tools/vec_add.ptx
for t in kernels:2 memcount:4 instrcount:3 memtrace:4; do
	name=${t%%:*} n=${t#*:}
	got=$("$gp" ptx instrument -p "$tools/$name.bpf.o" -o "$work/$name.ptx" "$ptx" 2>&1)
	check "ptx instrument -t $name" "gpuprobe: $ptx: $n probe sites in 1 functions" "$got"
	if [ -n "${PTXAS:-}" ] && [ -x "${PTXAS:-}" ] &&
		! "$PTXAS" -arch=sm_90 "$work/$name.ptx" -o "$work/$name.cubin" >"$work/ptxas.txt" 2>&1; then
		echo "FAIL: ptxas rejects vec_add.ptx with $name"; cat "$work/ptxas.txt"; fail=1
	fi
done

# run -t / -k / --launch-*: what the application is handed
export XDG_RUNTIME_DIR=$work/runtime
mkdir -m 0700 "$XDG_RUNTIME_DIR"
unset GPUPROBE_CONFIG GPUPROBE_PROBES
out=$("$gp" run -t kernels -t memcount -k 'vec*' -k "it's" --launch-skip 2 --launch-count 3 -- \
	sh -c 'cat "$GPUPROBE_CONFIG"; echo "$GPUPROBE_PROBES"; echo "$GPUPROBE_LAUNCH_SKIP $GPUPROBE_LAUNCH_COUNT"' 2>&1)
check "run -t -k --launch-skip --launch-count" "# written by gpuprobe run for -k: only these kernels get probes
kernels:
  include: ['vec*', 'vec*(*', 'it''s', 'it''s(*']
$tools/kernels.bpf.o:$tools/memcount.bpf.o
2 3" "$out"
cfg=$(ls "$XDG_RUNTIME_DIR"/gpuprobe/kernels-*.yaml)
check "-k configuration: one file, 0600" "-rw-------" "$(stat -c %A "$cfg")"
"$gp" run -k 'vec*' -k "it's" -- true
check "-k again: the same file (the cache of instrumented code hits)" "$cfg" \
	"$(ls "$XDG_RUNTIME_DIR"/gpuprobe/kernels-*.yaml)"

usage() {   # usage EXPECTED-LINE ARGS...: exit 2, one line, the application never started
	local want=$1; shift
	rm -f "$work/started"
	local got
	got=$("$gp" run "$@" -- touch "$work/started" 2>&1)
	local rc=$?
	check "run $* (exit status)" 2 "$rc"
	check "run $*" "$want" "$got"
	[ -e "$work/started" ] && { echo "FAIL: run $*: the application started"; fail=1; }
}
usage "gpuprobe: run: -t nosuch: no such tool (tools: instrcount, kernels, memcount, memtrace; see 'gpuprobe tools')" -t nosuch
usage "gpuprobe: run: -k needs a kernel name or glob (see 'gpuprobe run --help')" -k ''
usage "gpuprobe: run: --launch-count 0: expected a whole number from 1 to 4294967295" --launch-count 0
usage "gpuprobe: run: --launch-skip -1: expected a whole number from 0 to 4294967295" --launch-skip -1
printf 'output:\n  top: 5\n' >"$work/c.yaml" && chmod 0600 "$work/c.yaml"
usage "gpuprobe: run: -k with a configuration file ($work/c.yaml): put the kernels in its 'kernels: include:' list instead" -c "$work/c.yaml" -k 'vec*'

[ $fail = 0 ] && echo "ok: gpuprobe tools, every tool's probes and sites, run -t/-k/--launch-*"
exit $fail
