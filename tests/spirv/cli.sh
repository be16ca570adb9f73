#!/usr/bin/env bash
# gpuprobe ptx spirv: a valid module out, exact errors for what cannot be lowered, usage errors.
# usage: cli.sh GPUPROBE CASES_DIR DATA_DIR
set -u
gp=$1 cases=$2 data=$3
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
check() { # name, expected, actual
	if [ "$2" != "$3" ]; then
		echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fail=1
	else
		echo "PASS $1"
	fi
}
# the vector add of the conformance suite, as a plain PTX file
sed -n '/^ptx:$/,$p' "$cases/vadd_full.case" | tail -n +2 >"$t/vadd.ptx"
"$gp" ptx spirv -o "$t/vadd.spv" "$t/vadd.ptx"; check "exit 0 on a valid module" 0 $?
check "SPIR-V magic" "07230203" "$(od -An -tx4 -N4 "$t/vadd.spv" | tr -d ' ')"
spirv-val --target-env opencl2.0 "$t/vadd.spv"; check "spirv-val accepts it" 0 $?
"$gp" ptx spirv -S -o "$t/vadd.txt" "$t/vadd.ptx"
check "-S writes the entry point" 1 "$(grep -c 'OpEntryPoint Kernel %vadd "vadd"' "$t/vadd.txt")"
err=$("$gp" ptx spirv -o "$t/x.spv" "$data/mma.ptx" 2>&1); rc=$?
check "mma: exit 1" 1 $rc
check "mma: one line naming the instruction and its line" \
	"gpuprobe: $data/mma.ptx:10: cannot lower \`mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32\` to SPIR-V: this shape is not lowered" "$err"
err=$("$gp" ptx spirv -o "$t/x.spv" "$data/wgmma.ptx" 2>&1); rc=$?
check "wgmma: exit 1" 1 $rc
check "wgmma: one line" "gpuprobe: $data/wgmma.ptx:9: cannot lower \`wgmma.fence.sync.aligned\` to SPIR-V: tensor-core instructions have no SPIR-V equivalent" "$err"
err=$("$gp" ptx spirv -o "$t/x.spv" "$data/extra_operands.ptx" 2>&1); rc=$?
check "five operands to a directed-rounding f64 add: exit 1" 1 $rc
check "five operands: one line, nothing read past the three sources" \
	"gpuprobe: $data/extra_operands.ptx:9: cannot lower \`add.rz.f64\` to SPIR-V: too many operands" "$err"
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b64 %%rd<100000000>;\n\tret;\n}\n' >"$t/manyreg.ptx"
err=$("$gp" ptx spirv -o "$t/x.spv" "$t/manyreg.ptx" 2>&1); rc=$?
check "10^8 registers: one line, no table of them (the fuzzer's out-of-memory)" \
	"1 gpuprobe: $t/manyreg.ptx: %rd<100000000>: more than 1048576 registers are not lowered" "$rc $err"
err=$("$gp" ptx spirv -o "$t/x.spv" "$data/guarded_shfl.ptx" 2>&1)
check "a guarded shuffle: the emulation's limit, named" "gpuprobe: $data/guarded_shfl.ptx:11: cannot lower \`shfl.sync.down.b32\` to SPIR-V: a guarded warp collective: this target has no 32-lane sub-groups, and the work-group emulation needs every thread of the block to reach it" "$err"
check "no output file after an error" no "$([ -e "$t/x.spv" ] && echo yes || echo no)"
"$gp" ptx spirv "$t/vadd.ptx" >/dev/null 2>&1; check "missing -o: usage, exit 2" 2 $?
printf '.version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k( {\n' >"$t/bad.ptx"
err=$("$gp" ptx spirv -o "$t/y.spv" "$t/bad.ptx" 2>&1); rc=$?
check "malformed PTX: exit 1" 1 $rc
check "malformed PTX: one line" 1 "$(printf '%s\n' "$err" | wc -l)"
err=$("$gp" ptx spirv -o "$t/iso.spv" "$data/isolate.ptx" 2>&1); rc=$?
check "kernels that cannot be lowered are left out: exit 0" 0 $rc
check "one line per kernel left out, naming it, the construct and its line" \
"gpuprobe: $data/isolate.ptx: kernel bad left out: 23: cannot lower \`tex.level.2d.v4.f32.f32\` to SPIR-V: mipmapped and multisample textures are not lowered
gpuprobe: $data/isolate.ptx: kernel bad_call left out: needs fetch, not lowered: 12: cannot lower \`tex.level.2d.v4.f32.f32\` to SPIR-V: mipmapped and multisample textures are not lowered" "$err"
check "the other kernel is there" "good" "$("$gp" ptx spirv -S -o - "$data/isolate.ptx" 2>/dev/null | sed -n 's/.*OpEntryPoint Kernel %[a-z_]* "\([^"]*\)".*/\1/p' | tr '\n' ' ' | sed 's/ $//')"
err=$("$gp" ptx spirv -o "$t/div.spv" "$data/divergent_shfl.ptx" 2>&1); rc=$?
check "a shuffle in a branch the lowering leaves as written: exit 0" 0 $rc
check "one warning, for that kernel only, naming the shuffle and its line" \
"gpuprobe: $data/divergent_shfl.ptx: warning: left, line 55: \`shfl.sync.down.b32\` may be reached by part of a block only (a thread-dependent branch or loop around it is left as written): its results are undefined on this device" "$err"
err=$("$gp" ptx spirv -o "$t/launch.spv" "$data/device_launch.ptx" 2>&1); rc=$?
check "a device launch without the own driver's launch queue: the launching kernel left out, one line" \
"0 gpuprobe: $data/device_launch.ptx: kernel _Z6parentPi left out: 76: dynamic parallelism (a kernel launching kernels, __cudaCDP2GetParameterBufferV2) needs a launch queue, which gpuprobe's own driver gives and this lowering was not given" "$rc $err"
err=$("$gp" ptx spirv -o "$t/probe.spv" "$data/probe_collectives.ptx" 2>&1); rc=$?
check "a probe's collectives part of a block may not reach: exit 0, no warning" "0 " "$rc $err"
check "... and no work-group barrier for them (a warp of one lane)" 0 \
	"$("$gp" ptx spirv -S -o - "$data/probe_collectives.ptx" 2>/dev/null | grep -c 'OpControlBarrier')"
err=$("$gp" ptx spirv -o "$t/rec.spv" "$data/recursion.ptx" 2>&1); rc=$?
check "recursion (a function calling itself, two calling each other): each call within a cycle named, not made" \
"0 gpuprobe: $data/recursion.ptx: warning: odd, line 66: recursion: odd calls even, which calls it back; OpenCL has no recursion, so this call is not made: a thread that reaches it fails the launch (CUDA_ERROR_LAUNCH_FAILED)
gpuprobe: $data/recursion.ptx: warning: even, line 44: recursion: even calls odd, which calls it back; OpenCL has no recursion, so this call is not made: a thread that reaches it fails the launch (CUDA_ERROR_LAUNCH_FAILED)
gpuprobe: $data/recursion.ptx: warning: fact, line 21: recursion: fact calls fact (itself); OpenCL has no recursion, so this call is not made: a thread that reaches it fails the launch (CUDA_ERROR_LAUNCH_FAILED)" "$rc $err"
check "... every kernel is there; of the calls to fact, even and odd only the two kernels' remain" "k_fact k_even k_plain 2" \
	"$("$gp" ptx spirv -S -o - "$data/recursion.ptx" 2>/dev/null | sed -n 's/.*OpEntryPoint Kernel %[a-z_]* "\([^"]*\)".*/\1/p' | tr '\n' ' ')$("$gp" ptx spirv -S -o - "$data/recursion.ptx" 2>/dev/null | grep -c 'OpFunctionCall %[a-z0-9_]* %\(fact\|odd\|even\)\b' )"
printf '.version 7.0\n.target sm_70\n.address_size 32\n.visible .entry k() { ret; }\n' >"$t/a32.ptx"
err=$("$gp" ptx spirv -o "$t/y.spv" "$t/a32.ptx" 2>&1)
check "32-bit PTX refused" "gpuprobe: $t/a32.ptx: .address_size 32: only 64-bit PTX is lowered" "$err"
"$gp" ptx spirv --help | grep -q '^usage: gpuprobe ptx spirv'; check "--help" 0 $?
exit $fail
