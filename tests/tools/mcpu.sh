#!/bin/bash
# Every built-in tool (include/gpuprobe/tools/*.bpf.c) compiled as users compile probes, at
# -mcpu=v1, v2, v3, v4 and -O1, -O2, -O3, by each clang here that knows the CPU: every program
# verifies, and the tool's device probes instrument tests/tools/vec_add.ptx at the same sites as
# the shipped build (ptxas compiles the result when PTXAS is set). A CPU no clang here knows (v4
# needs clang 18) is said once and skipped. usage: mcpu.sh GPUPROBE REPO WORKDIR
set -u
# Site counts of the per-site call shape (GPUPROBE_DEFER=0): deferred sites (ptx-frontend/
# instrument.h) have their own checks in tests/e2e/aggregate_test.sh and tests/own_driver/probes.sh.
export GPUPROBE_DEFER=0
gp=$1 repo=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
ptx=$repo/tests/tools/vec_add.ptx
fail=0 built=0
echo 'int x;' >"$work/probe.c"
clangs=$(for c in clang clang-14 clang-15 clang-16 clang-17 clang-18 clang-19; do command -v $c; done | sort -u)
[ -n "$clangs" ] || { echo "SKIP: no clang"; exit 77; }
# sites each tool's device probes have in vec_add.ptx (tools.sh checks the same at -O2)
declare -A sites=([kcount]=2 [memcount]=4 [bbcount]=3 [memtrace]=4 [warptrace]=4 [opcodes]=3 [divergence]=3
		  [ktime]=2 [launches]=0 [blocks]=2)
for v in v1 v2 v3 v4; do
	cc=
	for c in $clangs; do
		if "$c" -target bpf -mcpu=$v -c "$work/probe.c" -o "$work/probe.o" 2>/dev/null; then
			cc=$c; break
		fi
	done
	if [ -z "$cc" ]; then
		echo "skipped: -mcpu=$v: no clang here knows it ($(echo $clangs | tr '\n' ' '))"
		continue
	fi
	for o in 1 2 3; do
		for src in "$repo"/include/gpuprobe/tools/*.bpf.c; do
			t=$(basename "$src" .bpf.c)
			obj=$work/$t.$v.O$o.bpf.o
			if ! "$cc" -target bpf -mcpu=$v -O$o -g -I/usr/include/x86_64-linux-gnu \
				-I"$repo/include" -c "$src" -o "$obj" 2>"$work/cc.txt"; then
				echo "FAIL: $t -mcpu=$v -O$o: $cc rejects it"; cat "$work/cc.txt"; fail=1; continue
			fi
			out=$("$gp" verify "$obj" 2>&1)
			if [ $? != 0 ] || echo "$out" | grep -qv ': OK, '; then
				echo "FAIL: $t -mcpu=$v -O$o ($cc): verify"; echo "$out"; fail=1; continue
			fi
			want=${sites[$t]:-}
			if [ -z "$want" ]; then
				echo "FAIL: $t: no expected site count in mcpu.sh"; fail=1; continue
			fi
			if [ "$want" != 0 ]; then
				got=$("$gp" ptx instrument -p "$obj" -o "$work/$t.ptx" "$ptx" 2>&1)
				if [ "$got" != "gpuprobe: $ptx: $want probe sites in 1 functions" ]; then
					echo "FAIL: $t -mcpu=$v -O$o: ptx instrument: $got"; fail=1; continue
				fi
				if [ -n "${PTXAS:-}" ] && [ -x "${PTXAS:-}" ] &&
					! "$PTXAS" -arch=sm_90 "$work/$t.ptx" -o "$work/$t.cubin" >"$work/ptxas.txt" 2>&1; then
					echo "FAIL: $t -mcpu=$v -O$o: ptxas"; cat "$work/ptxas.txt"; fail=1; continue
				fi
			fi
			built=$((built + 1))
		done
	done
done
[ $fail = 0 ] && echo "ok: $built tool builds verify and instrument (every -mcpu a clang here knows, -O1..-O3)"
exit $fail
