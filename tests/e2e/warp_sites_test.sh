#!/bin/bash
# CI (no GPU): the sites of probes that call the warp helpers (515 bpf_gpu_warp_unique, 516
# bpf_gpu_warp_count). What keeps their counts exact on the GPU:
#   - each site is entered with the mask of the lanes that run it together (%__gp_wm): captured
#     by activemask at the site, or kept from the site before it in the same basic block (that
#     site ended with bar.warp.sync of it and every lane of it reaches this one; a fresh
#     activemask there named a warp in two groups on the H200: coalescing's load_random counted
#     384 warp requests for 256);
#   - the probe's warp helpers before its first branch match over that mask (passed to the probe
#     as a .b32 parameter), not over an activemask of their own; helpers after a branch do;
#   - each site ends with bar.warp.sync of the mask, directly before the application's
#     instruction: none of the probe's code after it.
# Each instrumented function is reduced to a string of tokens, checked exactly:
#   C activemask.b32 %__gp_wm   M the probe's mask register set from %__gp_wm
#   S bar.warp.sync of the probe's mask register (the lanes meet before a helper)
#   U match.any.sync over the probe's mask register   B bar.warp.sync %__gp_wm
#   L a label of the application or of a guard's skip   J an application branch
#   G a guard's skip branch   a a global load of the application
# usage: warp_sites_test.sh GPUPROBE SRC_DIR WORK_DIR
set -u
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
cc_bpf() { "$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" -c "$1" -o "$2" || exit 2; }
cc_bpf "$SRC/examples/coalescing/coalescing.bpf.c" "$W/coalescing.bpf.o"
cc_bpf "$SRC/tests/e2e/probes/warp_cond.bpf.c" "$W/warp_cond.bpf.o"
"$NVCC" -arch=sm_90 -ptx "$SRC/examples/apps/coalescing.cu" -o "$W/coalescing.ptx" || exit 2

body() { awk -v n="$2" 'index($0, n "(") && /\.entry|\.func/ {f=1} f {print} f && /^}/ {exit}' "$1"; }
tokens() {
	body "$1" "$2" | sed 's/^[[:space:]]*//' | awk '
		/^activemask\.b32[[:space:]]+%__gp_wm;/ { printf "C"; next }
		/^mov\.b32[[:space:]]+%[A-Za-z0-9_$]*_wm, %__gp_wm;/ { printf "M"; next }
		/^match\.any\.sync\.b64[[:space:]].*_wm;$/ { printf "U"; next }
		/^bar\.warp\.sync[[:space:]]+%__gp_wm;/ { printf "B"; next }
		/^bar\.warp\.sync[[:space:]]+%[A-Za-z0-9_$]+_wm;/ { printf "S"; next }
		/^[A-Za-z0-9_$]+:$/ { if ($0 !~ /^__gpi/) printf "L"; next }
		/[[:space:]]bra(\.uni)?[[:space:]]/ { if ($0 ~ /__gpi/) next; printf ($0 ~ /__gp_L/ ? "G" : "J"); next }
		/^(@!?%p[0-9]+ )?ld\.global\./ { if ($0 !~ /__gp/) printf "a"; next }'
}

# Inlined (the default pipeline) and out of line.
for mode in inline call; do
	[ $mode = call ] && export GPUPROBE_INLINE=0 || unset GPUPROBE_INLINE
	"$GP" ptx instrument --sms 132 -p "$W/coalescing.bpf.o" "$W/coalescing.ptx" -o "$W/c_$mode.ptx" 2>"$W/c_$mode.err"
	check "$mode: coalescing instrumented" 0 $?
	"$PTXAS" -arch=sm_90 "$W/c_$mode.ptx" -o "$W/c_$mode.cubin"
	check "$mode: ptxas sm_90 on coalescing" 0 $?
	"$GP" ptx instrument -p "$W/warp_cond.bpf.o" "$SRC/tests/e2e/apps/warp_sites.ptx" -o "$W/w_$mode.ptx" 2>"$W/w_$mode.err"
	check "$mode: warp_sites instrumented" 0 $?
	"$PTXAS" -arch=sm_90 "$W/w_$mode.ptx" -o "$W/w_$mode.cubin"
	check "$mode: ptxas sm_90 on warp_sites" 0 $?
done
# Inlined: the whole site is in the kernel. load_random's second site is in the first one's block.
check "load_coalesced tokens" CMSUSUBa "$(tokens "$W/c_inline.ptx" _Z14load_coalescedPKfPf)"
check "load_strided tokens" CMSUSUBa "$(tokens "$W/c_inline.ptx" _Z12load_stridedPKfPf)"
check "load_random tokens" CMSUSUBaMSUSUBa "$(tokens "$W/c_inline.ptx" _Z11load_randomPKfPKiPf)"
# A after entry, B after a branch, C after a label, D guarded, E after D's skip label: each
# captures; F, in E's block, keeps E's mask. One U each: the second helper follows a branch.
check "warp_sites tokens" CMSUBaJCMSUBaLCMSUBaGCMSUBLaCMSUBaMSUBa "$(tokens "$W/w_inline.ptx" warp_sites)"
# that second helper (516 after the probe's branch) matches over an activemask of its own
check "warp_sites: helpers after the probe's branch use activemask" 6 \
	"$(body "$W/w_inline.ptx" warp_sites | grep -A1 -E 'activemask\.b32[[:space:]]+%__gpi[0-9]+___gp0_0_w4;' |
	   grep -cE 'match\.any\.sync\.b64[[:space:]]+%__gpi[0-9]+___gp0_0_w5, %__gpi[0-9]+___gp0_0_r1, %__gpi[0-9]+___gp0_0_w4;')"
# Out of line: the call passes the mask; the probe reads it and its first helper matches over it.
check "call: load_random passes the mask at both sites" 2 \
	"$(body "$W/c_call.ptx" _Z11load_randomPKfPKiPf | grep -cE 'call[[:space:]]+\(__gp_ret\), __gp_p0_0_on_load, \(__gp_arg, __gp_warg\);')"
check "call: load_random captures once" 1 "$(body "$W/c_call.ptx" _Z11load_randomPKfPKiPf | grep -cE 'activemask\.b32[[:space:]]+%__gp_wm;')"
probe() { awk '/^\.func \(/ {h=""} {h = h $0 "\n"} /^\) __gp_p0_0_on_load\(/ {f=1} f && /^}/ {printf "%s", h; exit}' "$1"; }
check "call: the probe's mask parameter" 1 \
	"$(probe "$W/c_call.ptx" | tr -d '\n' | grep -cE '__gp_p0_0_on_load\([[:space:]]*\.param \.b64[[:space:]]+__gp0_0_a1,[[:space:]]*\.param \.b32[[:space:]]+__gp0_0_wm[[:space:]]*\)')"
check "call: both helpers match over it" 2 \
	"$(probe "$W/c_call.ptx" | grep -cE 'match\.any\.sync\.b64[[:space:]]+%__gp0_0_w5, %__gp0_0_r1, %__gp0_0_wm;')"
[ $fail = 0 ] && echo "warp_sites: ALL PASS" || echo "warp_sites: FAILURES"
exit $fail
