#!/bin/bash
# Built-in tools and run's one-liner options, without a GPU: `gpuprobe tools` lists exactly the
# tools include/gpuprobe/tools/ holds (and the aliases kernels, instrcount), each with its
# section in docs/tools.md; each tool verifies; `gpuprobe ptx instrument` puts each tool's
# probes at exactly the sites vec_add.ptx has (2 global loads, 1 store, 1 atomic; 3 basic
# blocks; entry and block begin) and ptxas compiles the result; the opcodes tool's sites get
# the instruction classes of classes.ptx; `run -t/-k/--launch-*` hand the shim what they should
# (the applications are shell commands that print it) or stop with one line and exit 2. What
# each tool prints: tools_sim_test.c. usage: tools.sh GPUPROBE REPO WORKDIR   (PTXAS: optional)
set -u
# Site counts of the per-site call shape (GPUPROBE_DEFER=0): deferred sites (ptx-frontend/
# instrument.h) have their own checks in tests/e2e/aggregate_test.sh and tests/own_driver/probes.sh.
export GPUPROBE_DEFER=0
gp=$1 repo=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
check() {   # check WHAT EXPECTED ACTUAL
	if [ "$2" != "$3" ]; then
		printf 'FAIL: %s\n--- expected:\n%s\n--- got:\n%s\n' "$1" "$2" "$3"
		fail=1
	fi
}

# the list (aliases: names tools had before), and the list against the sources
check "gpuprobe tools" "bbcount     basic blocks and PTX instructions executed per kernel, per thread (gpu/bb)
blocks      thread blocks as spans per SM, for run --trace (gpu/block_begin, block_end)
divergence  active lanes per warp at each basic block: SIMD efficiency per kernel (gpu/bb)
instrcount  the same as bbcount
kcount      launches, blocks and threads per kernel (gpu/entry, gpu/block_begin)
kernels     the same as kcount
ktime       GPU time per kernel and a histogram of launch durations (gpu/block_begin, block_end)
launches    launches per kernel and driver function, grid and block sizes (host/entry/cuLaunch*)
memcount    loads, stores and atomics executed per kernel, every state space (gpu/mem)
memtrace    every global access as a ring record: address, size, direction, kernel (gpu/mem)
opcodes     PTX instructions executed per kernel by class: int, fp32, load, control... (gpu/bb)
warptrace   every global access of a warp as one lossless record: base + stride or each lane's address (gpu/mem)" \
	"$("$gp" tools 2>&1)"
check "tools listed = tools in include/gpuprobe/tools" \
	"$(cd "$repo/include/gpuprobe/tools" && ls *.bpf.c | sed 's/\.bpf\.c$//')" \
	"$("$gp" tools | grep -v 'the same as' | awk '{print $1}')"
# every tool has its section in docs/tools.md, every alias its mention
for t in $("$gp" tools | grep -v 'the same as' | awk '{print $1}'); do
	grep -q "^## \`$t\`$" "$repo/docs/tools.md" ||
		{ echo "FAIL: docs/tools.md has no section for $t"; fail=1; }
done
for t in $("$gp" tools | grep 'the same as' | awk '{print $1}'); do
	grep -q "alias \`$t\`" "$repo/docs/tools.md" ||
		{ echo "FAIL: docs/tools.md does not name the alias $t"; fail=1; }
done

tools=$(dirname "$(dirname "$gp")")/lib/gpuprobe-tools
verify() { "$gp" verify "$tools/$1.bpf.o" 2>&1; }
check "verify kcount" "on_entry (gpu/entry/*): OK, 28 insns, stack 16
on_block (gpu/block_begin/*): OK, 63 insns, stack 16" "$(verify kcount)"
check "verify memcount" "on_load (gpu/mem/load/*): OK, 28 insns, stack 16
on_store (gpu/mem/store/*): OK, 28 insns, stack 16
on_atomic (gpu/mem/atomic/*): OK, 28 insns, stack 16" "$(verify memcount)"
check "verify bbcount" "on_bb (gpu/bb/*): OK, 55 insns, stack 16" "$(verify bbcount)"
check "verify memtrace" "on_access (gpu/mem/global/*): OK, 22 insns, stack 24" "$(verify memtrace)"
check "verify warptrace" "on_access (gpu/mem/global/*): OK, 17 insns, stack 0" "$(verify warptrace)"
check "verify opcodes" "on_bb (gpu/bb/*): OK, 382 insns, stack 16" "$(verify opcodes)"
check "verify divergence" "on_bb (gpu/bb/*): OK, 139 insns, stack 16" "$(verify divergence)"
check "verify ktime" "on_begin (gpu/block_begin/*): OK, 38 insns, stack 24
on_end (gpu/block_end/*): OK, 152 insns, stack 32" "$(verify ktime)"
check "verify blocks" "trace_block_begin (gpu/block_begin/*): OK, 22 insns, stack 32
trace_block_end (gpu/block_end/*): OK, 22 insns, stack 32" "$(verify blocks)"
check "verify launches" "on_launch (host/entry/cuLaunch*): OK, 287 insns, stack 48" "$(verify launches)"

# sites in a kernel of known shape (launches has host probes only: no site)
ptx=$repo/tests/tools/vec_add.ptx
for t in kcount:2 memcount:4 bbcount:3 memtrace:4 warptrace:4 opcodes:3 divergence:3 ktime:2 blocks:2; do
	name=${t%%:*} n=${t#*:}
	got=$("$gp" ptx instrument -p "$tools/$name.bpf.o" -o "$work/$name.ptx" "$ptx" 2>&1)
	check "ptx instrument -t $name" "gpuprobe: $ptx: $n probe sites in 1 functions" "$got"
	if [ -n "${PTXAS:-}" ] && [ -x "${PTXAS:-}" ] &&
		! "$PTXAS" -arch=sm_90 "$work/$name.ptx" -o "$work/$name.cubin" >"$work/ptxas.txt" 2>&1; then
		echo "FAIL: ptxas rejects vec_add.ptx with $name"; cat "$work/ptxas.txt"; fail=1
	fi
done
check "ptx instrument -t launches" "gpuprobe: $ptx: no probe has a site in this module (check the section globs)" \
	"$("$gp" ptx instrument -p "$tools/launches.bpf.o" -o "$work/launches.ptx" "$ptx" 2>&1)"

# the instruction classes each gpu/bb site hands the probe (gp_bb_ctx.op_count, in enum
# gp_op_class order: int fp32 fp64 fp16 sfu move load store atomic control sync warp tensor
# other), per basic block of classes.ptx (its header says why)
cls=$repo/tests/tools/classes.ptx
check "ptx instrument -t opcodes classes.ptx" "gpuprobe: $cls: 3 probe sites in 1 functions" \
	"$("$gp" ptx instrument -p "$tools/opcodes.bpf.o" -o "$work/classes.ptx" "$cls" 2>&1)"
check "op_count per basic block of classes.ptx" "3 2 1 1 2 5 2 1 2 1 2 2 0 0
0 0 0 0 0 0 0 0 0 1 0 0 1 2
0 0 0 0 0 0 0 0 0 1 0 0 0 0" "$(awk '/mov.u32.*%__gp_s0, [0-9]+;/ {v=$NF; sub(";","",v); next}
	/st.local.u32.*__gp_ctx\+[0-9]+\], %__gp_s0;/ {o=$0; sub(/.*__gp_ctx\+/,"",o); sub(/\].*/,"",o); o+=0;
		if (o==64 && row) {print row; row=""} if (o>=64 && o<120) row=row (row?" ":"") v}
	END {print row}' "$work/classes.ptx")"
if [ -n "${PTXAS:-}" ] && [ -x "${PTXAS:-}" ] &&
	! "$PTXAS" -arch=sm_90 "$work/classes.ptx" -o "$work/classes.cubin" >"$work/ptxas.txt" 2>&1; then
	echo "FAIL: ptxas rejects classes.ptx with opcodes"; cat "$work/ptxas.txt"; fail=1
fi

# run -t / -k / --launch-*: what the application is handed
export XDG_RUNTIME_DIR=$work/runtime
mkdir -m 0700 "$XDG_RUNTIME_DIR"
unset GPUPROBE_CONFIG GPUPROBE_PROBES
out=$("$gp" run -t kernels -t memcount -t instrcount -k 'vec*' -k "it's" --launch-skip 2 --launch-count 3 -- \
	sh -c 'cat "$GPUPROBE_CONFIG"; echo "$GPUPROBE_PROBES"; echo "$GPUPROBE_LAUNCH_SKIP $GPUPROBE_LAUNCH_COUNT"' 2>&1)
check "run -t (aliases kernels, instrcount) -k --launch-skip --launch-count" "# written by gpuprobe run for -k: only these kernels get probes
kernels:
  include: ['vec*', 'vec*(*', 'it''s', 'it''s(*']
$tools/kcount.bpf.o:$tools/memcount.bpf.o:$tools/bbcount.bpf.o
2 3
gpuprobe: run: no process of the application set up probes: none loaded a GPU module through gpuprobe's libcuda.so.1 (it made no CUDA call, or reached a driver another way); nothing to report" "$out"
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
usage "gpuprobe: run: -t nosuch: no such tool (tools: bbcount, blocks, divergence, kcount, ktime, launches, memcount, memtrace, opcodes, warptrace; see 'gpuprobe tools')" -t nosuch
usage "gpuprobe: run: -k needs a kernel name or glob (see 'gpuprobe run --help')" -k ''
usage "gpuprobe: run: --launch-count 0: expected a whole number from 1 to 4294967295" --launch-count 0
usage "gpuprobe: run: --launch-skip -1: expected a whole number from 0 to 4294967295" --launch-skip -1
printf 'output:\n  top: 5\n' >"$work/c.yaml" && chmod 0600 "$work/c.yaml"
usage "gpuprobe: run: -k with a configuration file ($work/c.yaml): put the kernels in its 'kernels: include:' list instead" -c "$work/c.yaml" -k 'vec*'

[ $fail = 0 ] && echo "ok: gpuprobe tools, every tool's probes and sites, run -t/-k/--launch-*"
exit $fail
