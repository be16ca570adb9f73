#!/bin/bash
# gpuprobe ptx llvm / ptx amdgpu: help, usage errors (exit 2), a module that does not lower (one
# line naming the instruction and its line, exit 1), hostile input (one line, never a crash), LLVM IR
# for both targets, PTX for nvptx, code objects for gfx90a/gfx942/gfx1100 (one kernel descriptor,
# with register and LDS use in llvm-readobj's notes) and --cache.
# usage: cli.sh GPUPROBE CASES_DIR
set -u
gp=$1
cases=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() {   # check NAME EXPECTED_STATUS COMMAND...: runs it; stdout+stderr in $work/out
	local name=$1 want=$2
	shift 2
	"$@" >"$work/out" 2>&1
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL $name: exit $rc, expected $want: $(head -c 400 "$work/out")"
		fail=1
		return 1
	fi
	echo "ok $name"
}
has() {   # has NAME TEXT: $work/out contains TEXT
	if ! grep -qF -- "$2" "$work/out"; then
		echo "FAIL $1: output lacks '$2': $(head -c 400 "$work/out")"
		fail=1
	fi
}
lines() {   # lines NAME N: $work/out has exactly N lines
	local n
	n=$(wc -l <"$work/out")
	[ "$n" = "$2" ] || { echo "FAIL $1: $n lines, expected $2: $(head -c 400 "$work/out")"; fail=1; }
}

cat >"$work/vadd.ptx" <<'PTX'
.version 7.0
.target sm_70
.address_size 64
.visible .entry vadd(.param .u64 a, .param .u64 c, .param .u32 n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .f32 %f<3>;
	.reg .b64 %rd<8>;
	.shared .align 4 .b8 tile[512];
	ld.param.u64 %rd1, [a];
	ld.param.u64 %rd2, [c];
	ld.param.u32 %r2, [n];
	mov.u32 %r3, %tid.x;
	setp.ge.u32 %p1, %r3, %r2;
	@%p1 bra DONE;
	mul.wide.u32 %rd3, %r3, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.f32 %f1, [%rd4];
	shl.b32 %r4, %r3, 2;
	st.shared.f32 [tile+%r4], %f1;
	bar.sync 0;
	add.f32 %f2, %f1, %f1;
	add.s64 %rd5, %rd2, %rd3;
	st.global.f32 [%rd5], %f2;
DONE:
	ret;
}
PTX
sed 's/tile+%r4/%r4/' "$work/vadd.ptx" >"$work/v2.ptx" && mv "$work/v2.ptx" "$work/vadd.ptx"
sed 's/\tadd.f32 %f2, %f1, %f1;/\ttex.level.2d.v4.f32.f32 {%f2, %f2, %f2, %f2}, [t, {%f1, %f1}], %f1;/' "$work/vadd.ptx" >"$work/tex.ptx"

check help-llvm 0 "$gp" ptx llvm --help && has help-llvm "--target amdgcn|nvptx"
check help-amdgpu 0 "$gp" ptx amdgpu --help && has help-amdgpu "--arch gfx90a|gfx942|gfx1100"
check ptx-help 0 "$gp" ptx --help && has ptx-help "llvm" && has ptx-help "amdgpu"
check no-target 2 "$gp" ptx llvm "$work/vadd.ptx"
check bad-target 2 "$gp" ptx llvm --target spirv "$work/vadd.ptx" && has bad-target "unknown target 'spirv'" && lines bad-target 1
check bad-arch 2 "$gp" ptx amdgpu --arch gfx908 -o "$work/x.co" "$work/vadd.ptx" && has bad-arch "unknown architecture 'gfx908'"
check bad-cov 2 "$gp" ptx amdgpu --arch gfx90a --cov 3 -o "$work/x.co" "$work/vadd.ptx"
check no-output 2 "$gp" ptx amdgpu --arch gfx90a "$work/vadd.ptx"
check ptx-amdgcn 2 "$gp" ptx llvm --target amdgcn --ptx "$work/vadd.ptx" && has ptx-amdgcn "--ptx needs --target nvptx"
check missing 2 "$gp" ptx llvm --target nvptx "$work/none.ptx"

check ll-amdgcn 0 "$gp" ptx llvm --target amdgcn "$work/vadd.ptx" -o "$work/a.ll"
grep -q 'target triple = "amdgcn-amd-amdhsa"' "$work/a.ll" && grep -q 'amdgpu_kernel void @vadd' "$work/a.ll" &&
	grep -q 'llvm.amdgcn.s.barrier' "$work/a.ll" || { echo "FAIL ll-amdgcn: $(head -c 300 "$work/a.ll")"; fail=1; }
check ll-nvptx 0 "$gp" ptx llvm --target nvptx "$work/vadd.ptx" -o "$work/n.ll"
grep -q 'target triple = "nvptx64-nvidia-cuda"' "$work/n.ll" && grep -q '"kernel"' "$work/n.ll" ||
	{ echo "FAIL ll-nvptx: $(head -c 300 "$work/n.ll")"; fail=1; }
check ptx-nvptx 0 "$gp" ptx llvm --target nvptx --arch sm_90 --ptx "$work/vadd.ptx" -o "$work/n.ptx"
grep -q '^.target sm_90' "$work/n.ptx" && grep -q '.visible .entry vadd' "$work/n.ptx" && grep -q 'bar.sync' "$work/n.ptx" ||
	{ echo "FAIL ptx-nvptx: $(head -c 300 "$work/n.ptx")"; fail=1; }
# LLVM's PTX is PTX our own frontend reads again
check ptx-reparse 0 "$gp" ptx print "$work/n.ptx" -o "$work/n2.ptx"

readobj=$(command -v llvm-readobj-19 || echo /usr/lib/llvm-19/bin/llvm-readobj)
for arch in gfx90a gfx942 gfx1100; do
	for cov in 4 5; do
		check "co-$arch-v$cov" 0 "$gp" ptx amdgpu --arch $arch --cov $cov "$work/vadd.ptx" -o "$work/$arch.co" || continue
		if [ -x "$readobj" ]; then
			"$readobj" --file-headers --notes --dyn-symbols "$work/$arch.co" >"$work/out" 2>&1
			has "co-$arch-v$cov" "EF_AMDGPU_MACH_AMDGCN_$(echo $arch | tr a-z A-Z)"
			has "co-$arch-v$cov" ".symbol:         vadd.kd"
			has "co-$arch-v$cov" ".vgpr_count:"
			has "co-$arch-v$cov" ".group_segment_fixed_size: 0"
			has "co-$arch-v$cov" "amdhsa.version"
			n=$(grep -c '\.kd$\|Name: vadd.kd' "$work/out")
			[ "$n" -ge 1 ] || { echo "FAIL co-$arch-v$cov: no kernel descriptor symbol"; fail=1; }
			case $arch in gfx1100) has "co-$arch-v$cov" ".wavefront_size: 32" ;; *) has "co-$arch-v$cov" ".wavefront_size: 64" ;; esac
		fi
	done
done

# what does not lower: one line naming the instruction and its line, exit 1
check not-lowered 1 "$gp" ptx llvm --target nvptx "$work/tex.ptx" && lines not-lowered 1 &&
	has not-lowered "tex.ptx:23: cannot lower \`tex.level.2d.v4.f32.f32\` to LLVM IR"
check not-lowered-co 1 "$gp" ptx amdgpu --arch gfx942 -o "$work/t.co" "$work/tex.ptx" && lines not-lowered-co 1
[ ! -e "$work/t.co" ] || { echo "FAIL not-lowered-co: wrote $work/t.co"; fail=1; }

# a module where only some kernels do not lower (tests/spirv/data/isolate.ptx: `bad` fetches a
# mipmapped texture, `bad_call` through a device function, `good` does not): those two are left out,
# one line each naming why, exit 0; the code object has good's descriptor alone; with --cache (the
# shim loads its output in place of the original) a kernel left out is the module not lowered
iso=$(dirname "$cases")/data/isolate.ptx
for t in nvptx amdgcn; do
	check "isolate-$t" 0 "$gp" ptx llvm --target $t -o "$work/iso.$t.ll" "$iso" && lines "isolate-$t" 2 &&
		has "isolate-$t" "isolate.ptx: kernel bad left out: 23: cannot lower \`tex.level.2d.v4.f32.f32\` to LLVM IR: mipmapped and multisample textures are not lowered" &&
		has "isolate-$t" "isolate.ptx: kernel bad_call left out: needs fetch, not lowered: 12: cannot lower \`tex.level.2d.v4.f32.f32\`"
	n=$(grep -c '^define .*@\(bad\|bad_call\|fetch\)(' "$work/iso.$t.ll")
	g=$(grep -c '^define .*@good(' "$work/iso.$t.ll")
	[ "$n" = 0 ] && [ "$g" = 1 ] || { echo "FAIL isolate-$t: $n left-out functions defined, good defined $g times"; fail=1; }
done
check isolate-co 0 "$gp" ptx amdgpu --arch gfx942 -o "$work/iso.co" "$iso" && lines isolate-co 2
if [ -x "$readobj" ]; then
	"$readobj" --notes --dyn-symbols "$work/iso.co" >"$work/out" 2>&1
	kds=$(grep -o '\.symbol: *[a-z_]*\.kd' "$work/out" | awk '{print $2}' | tr '\n' ' ')
	[ "$kds" = "good.kd " ] && echo "ok isolate-co: kernel descriptors: $kds" ||
		{ echo "FAIL isolate-co: kernel descriptors '$kds', expected good.kd alone"; fail=1; }
fi
# instructions with too few operands (fuzz_amdgpu_lower: `and.b16 %rs1, 255;` crashed in LLVMBuildAnd
# on a missing operand): the kernels are left out with the reason, the module's other kernel lowers
printf '.version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b16 %%rs<3>;\n\tand.b16 %%rs1, 255;\n\tret;\n}\n.visible .entry k2()\n{\n\t.reg .pred %%p<3>;\n\tand.pred %%p1;\n\tret;\n}\n.visible .entry k3()\n{\n\tret;\n}\n' >"$work/fewops.ptx"
check fewops 0 "$gp" ptx llvm --target amdgcn -o "$work/fewops.ll" "$work/fewops.ptx" && lines fewops 2 &&
	has fewops "fewops.ptx: kernel k left out: 7: cannot lower \`and.b16\` to LLVM IR: too few operands" &&
	has fewops "fewops.ptx: kernel k2 left out: 13: cannot lower \`and.pred\` to LLVM IR: too few operands"
check isolate-cache 1 "$gp" ptx llvm --target nvptx --cache "$work/isocache" "$iso" &&
	# the key the shim's GPUPROBE_LLVM_CACHE mode names when it loads the module unchanged: FNV-1a and length
	has isolate-cache "not lowered (key $(python3 -c 'import sys
h = 1469598103934665603
d = open(sys.argv[1], "rb").read().split(b"\0")[0]
for c in d: h = ((h ^ c) * 1099511628211) % 2**64
print("%016x-%d.ptx" % (h, len(d)))' "$iso")): line 12: cannot lower"

# nvptx passes NVIDIA's own texture/surface instructions and system-scope atomics through as written
# (the driver's handles are no gp_tex_desc; LLVM prints atomicrmw at GPU scope), takes the module's
# PTX ISA version (kernel parameters past 4352 bytes need 8.1); GPUPROBE_LLVM_GENERIC=1 keeps the
# software textures on nvptx (what PoCL checks)
cat >"$work/native.ptx" <<'PTX'
.version 8.3
.target sm_90
.address_size 64
.visible .entry k(.param .u64 t, .param .u64 s, .param .u64 p, .param .align 4 .b8 big[8192])
{
	.reg .b32 %r<8>;
	.reg .f32 %f<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [t];
	ld.param.u64 %rd2, [s];
	ld.param.u64 %rd3, [p];
	ld.param.u32 %r7, [big+8188];
	mov.f32 %f5, 0f3F000000;
	tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f5}];
	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 2;
	cvt.rzi.s32.f32 %r3, %f1;
	sust.b.2d.b32.trap [%rd2, {%r2, %r7}], {%r3};
	atom.global.sys.add.u32 %r4, [%rd3], 10;
	st.global.u32 [%rd3+4], %r4;
	ret;
}
PTX
check native 0 "$gp" ptx llvm --target nvptx --arch sm_90 --ptx -o "$work/native.out.ptx" "$work/native.ptx" &&
	for want in '.version 8.3' 'tex.2d.v4.f32.f32 {%f' 'sust.b.2d.b32.trap [%rd' 'atom.global.sys.add.u32 %r'; do
		grep -qF -- "$want" "$work/native.out.ptx" || { echo "FAIL native: no '$want' in LLVM's PTX"; fail=1; }
	done
check native-generic 0 env GPUPROBE_LLVM_GENERIC=1 "$gp" ptx llvm --target nvptx --arch sm_90 --ptx -o "$work/generic.out.ptx" "$work/native.ptx" &&
	! grep -q 'tex\.2d\|sust\.' "$work/generic.out.ptx" || { echo "FAIL native-generic: textures passed through with GPUPROBE_LLVM_GENERIC=1"; fail=1; }

# hostile input: truncated modules, garbage, an undeclared register: one line each, never a crash
head -c 300 "$work/vadd.ptx" >"$work/trunc.ptx"
printf '.version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tadd.u32 %%r1, %%r2, 1;\n\tret;\n}\n' >"$work/undecl.ptx"
printf '.version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %%r<3>;\n\tfrobnicate.u32 %%r1, %%r2;\n\tbra NOWHERE;\n}\n' >"$work/garbage.ptx"
printf '.version 7.0\n.target sm_70\n.address_size 32\n.visible .entry k()\n{\n\tret;\n}\n' >"$work/a32.ptx"
# many registers, nested blocks, then an instruction that does not lower: the names are dropped in
# the error path (this crashed on dmmaTensorCoreGemm's 700 registers)
{
	printf '.version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n'
	printf '\t.reg .b32 %%r<300>;\n\t.reg .f64 %%fd<700>;\n\t.reg .b64 %%rd<300>;\n'
	for i in $(seq 1 40); do printf '\t{\n\t.reg .b32 %%t<4>;\n\tmov.u32 %%t1, %d;\n\tadd.u32 %%r%d, %%t1, 1;\n\t}\n' $i $i; done
	printf '\t{\n\t.reg .b32 %%t<4>;\n\twmma.load.a.sync.aligned.row.m8n8k32.s4 {%%r1}, [%%rd1];\n\t}\n\tret;\n}\n'
} >"$work/manyregs.ptx"
# an initializer holding the address of a symbol nothing declares (the message named it from
# freed memory: the fuzzer's heap-use-after-free under ASan)
printf '.version 8.0\n.target sm_90\n.address_size 64\n.global .u64 table[2] = {generic(nothere), 0};\n.visible .entry k()\n{\n\tret;\n}\n' >"$work/undecl_init.ptx"
# a module-scope .local (there was no function to hold it: a crash in LLVM)
printf '.version 8.0\n.target sm_90\n.address_size 64\n.local .u32 tref;\n.visible .entry k()\n{\n\tret;\n}\n' >"$work/mlocal.ptx"
# bar.red without operands (its predicate was read from before the operands: a crash)
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tbarrier.red.popc.u32;\n\tret;\n}\n' >"$work/barred.ptx"
# atom.cas with three operands (its new value was read past the operands)
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %%r<3>;\n\t.reg .b64 %%rd<2>;\n\tld.param.u64 %%rd1, [p];\n\tatom.global.cas.b32 %%r1, [%%rd1], 1;\n\tret;\n}\n' >"$work/cas3.ptx"
# a variable of more than 2^64 bytes (its byte image was allocated at the wrapped size)
printf '.version 8.0\n.target sm_90\n.address_size 64\n.global .align 4 .f32 fl[299999999999999999999] = {1.0};\n.visible .entry k()\n{\n\tret;\n}\n' >"$work/huge.ptx"
for f in trunc undecl garbage a32 manyregs undecl_init mlocal barred cas3 huge; do
	for t in nvptx amdgcn; do
		"$gp" ptx llvm --target $t "$work/$f.ptx" >"$work/out" 2>&1
		rc=$?
		if [ $rc != 1 ] || [ "$(wc -l <"$work/out")" != 1 ]; then
			echo "FAIL hostile-$f-$t: exit $rc: $(head -c 300 "$work/out")"; fail=1
		else
			echo "ok hostile-$f-$t: $(cat "$work/out")"
		fi
	done
done

# a 2.8 GB variable: with an initializer refused (its byte image would be built in host memory:
# the fuzzer's out-of-memory), without one lowered as zeros with no image
printf '.version 8.0\n.target sm_90\n.address_size 64\n.global .align 4 .f32 fl[702602343] = {1.0};\n.visible .entry k()\n{\n\tret;\n}\n' >"$work/biginit.ptx"
check biginit 1 "$gp" ptx llvm --target amdgcn "$work/biginit.ptx" &&
	has biginit "fl: an initialized variable of more than 64 MiB (.f32[702602343]) is not lowered"
printf '.version 8.0\n.target sm_90\n.address_size 64\n.global .align 4 .f32 z[702602343];\n.visible .entry k()\n{\n\tret;\n}\n' >"$work/bigzero.ptx"
check bigzero 0 "$gp" ptx llvm --target amdgcn -o "$work/bigzero.ll" "$work/bigzero.ptx" &&
	{ grep -q '\[2810409372 x i8\] zeroinitializer' "$work/bigzero.ll" || { echo "FAIL bigzero: $(grep @z "$work/bigzero.ll")"; fail=1; }; }

check undecl-init-text 1 "$gp" ptx llvm --target amdgcn "$work/undecl_init.ptx" &&
	has undecl-init-text "the initializer of table holds the address of nothere, which is not declared"

# --cache: every PTX module of the files, under its original's key
check cache 0 "$gp" ptx llvm --target nvptx --cache "$work/cache" "$work/vadd.ptx" "$cases/int_div_u32.case"
has cache "1 module(s) in $work/cache, 0 not lowered, 1 file(s) without PTX"
n=$(ls "$work/cache" | grep -c '^[0-9a-f]\{16\}-[0-9]*\.ptx$')
[ "$n" = 1 ] || { echo "FAIL cache: $n files in the cache"; fail=1; }
check cache-notlowered 1 "$gp" ptx llvm --target nvptx --cache "$work/cache" "$work/tex.ptx" && has cache-notlowered "not lowered"
check cache-amdgcn 2 "$gp" ptx llvm --target amdgcn --cache "$work/cache" "$work/vadd.ptx"
# without lib/libgpuprobe-amdgpu.so beside it (LLVM 19 absent), one line saying so
# CUDA's printf and assert on amdgcn (amdgpu/printf.c): the backend's printf buffer, the formats
# in the code object's amdhsa.printf metadata (argument sizes from vprintf's buffer; a `*` width
# left out; the assert's literal strings copied as constants), the buffer's hidden argument where
# the code-object version puts it (explicit arguments: 24 bytes; v5: +72, v4: +24).
pa=$(dirname "$0")/printf_assert.ptx
for arch in gfx90a gfx942 gfx1100; do
	check "printf and assert, $arch" 0 "$gp" ptx amdgpu "$pa" --arch $arch -o "$work/pa.$arch.co"
done
if [ -x "$readobj" ]; then
	for cov in 5 4; do
		"$gp" ptx amdgpu "$pa" --arch gfx942 --cov $cov -o "$work/pa.co" >"$work/out" 2>&1
		"$readobj" --notes "$work/pa.co" >"$work/notes" 2>&1
		got=$(grep -A3 '^ *amdhsa.printf:' "$work/notes" | tail -3 | sed 's/^ *//')
		want="- '1:4:20:4:40:8:%s\72%u\72 %s\72 Device-side assertion \`%s'' failed.\n'
- '2:7:4:8:8:4:4:8:4:n=%d ll=%lld d=%.3f c=%c s=%s p=%p w=%d\n'
- '3:0:big\n'"
		if [ "$got" != "$want" ]; then
			echo "FAIL printf metadata (cov $cov):"; echo "$got"; fail=1
		else
			echo "ok printf metadata (cov $cov): 3 formats, their argument sizes"
		fi
		off=$(grep -B2 'hidden_printf_buffer' "$work/notes" | grep -o 'offset: *[0-9]*' | grep -o '[0-9]*$')
		[ "$off" = $([ $cov = 5 ] && echo 96 || echo 48) ] && echo "ok printf buffer argument at $off (cov $cov)" ||
			{ echo "FAIL printf buffer argument (cov $cov): offset '$off'"; fail=1; }
	done
fi
"$gp" ptx llvm "$pa" --target amdgcn -o "$work/pa.ll" >"$work/out" 2>&1
if grep -qE '@(vprintf|__assertfail)\(' "$work/pa.ll" || ! grep -q '^define hidden ptr addrspace(1) @__printf_alloc(i32' "$work/pa.ll" ||
	! grep -q 'call void @llvm.trap()' "$work/pa.ll"; then
	echo "FAIL printf LLVM IR: vprintf/__assertfail left, or no __printf_alloc or trap"; fail=1
else
	echo "ok printf LLVM IR: printf calls, __printf_alloc, the assert's trap"
fi
mkdir -p "$work/alone/bin" && cp "$gp" "$work/alone/bin/gpuprobe"
LD_LIBRARY_PATH=$(dirname "$gp")/../lib "$work/alone/bin/gpuprobe" ptx llvm --target nvptx "$work/vadd.ptx" >"$work/out" 2>&1
rc=$?
if [ $rc != 1 ] || [ "$(wc -l <"$work/out")" != 1 ] || ! grep -q "the LLVM 19 lowering is not available here" "$work/out"; then
	# found through LD_LIBRARY_PATH's lib/ by name is fine too: then it works
	grep -q "target triple\|^; ModuleID" "$work/out" || { echo "FAIL no-module: exit $rc: $(head -c 300 "$work/out")"; fail=1; }
fi
"$work/alone/bin/gpuprobe" ptx llvm --target nvptx "$work/vadd.ptx" >"$work/out" 2>&1
if [ $? != 1 ] || ! grep -q "ptx llvm: the LLVM 19 lowering is not available here" "$work/out"; then
	echo "FAIL no-module: $(head -c 300 "$work/out")"; fail=1
else
	echo "ok no-module: $(cat "$work/out")"
fi
[ $fail = 0 ] && echo "cli: all checks pass"
exit $fail
