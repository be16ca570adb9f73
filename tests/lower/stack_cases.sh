#!/bin/bash
# The frame in registers (ebpf/lower_plan.c): the programs of stack_cases/ (bpf_conformance
# format) store and load stack slots at every width, sign-extending, in a loop and in two frames;
# one copies r10 into a register (its frame stays a .local array). Their expected results are
# checked on the host interpreter, then the lowered module must keep exactly that one .local
# stack, compile with ptxas, and give the same results through SPIR-V on PoCL.
# usage: stack_cases.sh CONFORMANCE_TEST LOWER_CORPUS SPIRV_EBPF_MODULES PTXAS CASES_DIR WORK_DIR
set -u
CONF=$1 LOWER=$2 RUN=$3 PTXAS=$4 DIR=$5 W=$6
mkdir -p "$W"
fail=0
n=$(ls "$DIR"/*.data | wc -l)
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
"$CONF" tests "$DIR" >"$W/interp.log" 2>&1
check "host interpreter: every expected result" 0 $?
tail -n 1 "$W/interp.log"
"$LOWER" "$DIR" "$W/stack.ptx" "$W/stack.manifest" --target sm_75 --expect "$n" >/dev/null
check "lowered, all $n" 0 $?
check "frames in registers (every program but copied_fp, frames.data has two)" "$n" "$(grep -c '^	\.reg \.b64 	%__gp[0-9]*_s<' "$W/stack.ptx")"
check "frames in .local (copied_fp's)" 1 "$(grep -c '^	\.local .*__gp[0-9]*_stack\[' "$W/stack.ptx")"
if [ -x "$PTXAS" ]; then
	"$PTXAS" -arch=sm_75 "$W/stack.ptx" -o "$W/stack.cubin"
	check "ptxas sm_75" 0 $?
else
	echo "skip: ptxas not found at $PTXAS"
fi
"$RUN" "$W/stack.ptx" "$W/stack.manifest"
rc=$?
if [ $rc = 77 ]; then
	echo "skip: no OpenCL (PoCL) device for the SPIR-V run"
	[ $fail = 0 ] && exit 77
else
	check "SPIR-V on PoCL: every expected result" 0 $rc
fi
exit $fail
