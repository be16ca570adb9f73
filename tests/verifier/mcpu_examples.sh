#!/bin/bash
# Every example probe (examples/*/*.bpf.c, bpftime's conventions among them), the safe verifier
# probes (tests/verifier/progs/safe_*.bpf.c, bpftime's GPU examples' idioms) and, when the shared
# corpus is there, the app-regression probes, compiled as users compile them at -mcpu=v1, v2, v3,
# v4 and -O1, -O2, -O3 by every clang here that knows the CPU: each program verifies. Different
# clang versions and CPUs emit different code for the same C (v3: 32-bit subregisters and JMP32,
# newer clang: "w = w" zero extension), and the verifier must accept what Linux accepts of it.
# Probes that include vmlinux.h get examples/vmlinux_min.h as vmlinux.h and -D__TARGET_ARCH_x86,
# as README's bpftime line does. The built-in tools are tests/tools/mcpu.sh's.
# A probe that names its CPU in a "// clang-flags: -mcpu=vN" comment is built for that CPU only.
# A CPU no clang here knows (v4 needs clang 18) is said once and skipped.
# usage: mcpu_examples.sh GPUPROBE REPO WORKDIR
set -u
gp=$1 repo=$2 work=$3
rm -rf "$work" && mkdir -p "$work/include" || exit 1
cp "$repo/examples/vmlinux_min.h" "$work/include/vmlinux.h" || exit 1
echo 'int x;' >"$work/probe.c"
clangs=()
seen=
for c in clang clang-14 clang-15 clang-16 clang-17 clang-18 clang-19 clang-20; do
	p=$(command -v "$c") || continue
	v=$("$p" --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
	case " $seen " in *" $v "*) continue ;; esac
	seen="$seen $v"
	clangs+=("$p")
done
[ ${#clangs[@]} -gt 0 ] || { echo "SKIP: no clang"; exit 77; }
srcs=("$repo"/examples/*/*.bpf.c "$repo"/tests/verifier/progs/safe_*.bpf.c)
corpus=$repo/../shared/corpora/app-regressions/probes
[ -d "$corpus" ] && srcs+=("$corpus"/*.bpf.c)
fail=0 built=0
for v in v1 v2 v3 v4; do
	ccs=()
	for c in "${clangs[@]}"; do
		"$c" -target bpf -mcpu=$v -c "$work/probe.c" -o "$work/probe.o" 2>/dev/null && ccs+=("$c")
	done
	if [ ${#ccs[@]} = 0 ]; then
		echo "skipped: -mcpu=$v: no clang here knows it (clang$seen; v4 needs clang >= 18)"
		continue
	fi
	for cc in "${ccs[@]}"; do
		for o in 1 2 3; do
			for src in "${srcs[@]}"; do
				t=$(basename "$src" .bpf.c)
				# a probe written for one CPU (its "// clang-flags: -mcpu=vN") is built for that one
				only=$(sed -n 's|^// clang-flags:.*-mcpu=\(v[0-9]\).*|\1|p' "$src")
				[ -n "$only" ] && [ "$only" != $v ] && continue
				obj=$work/$t.$v.O$o.$(basename "$cc").bpf.o
				if ! "$cc" -target bpf -mcpu=$v -O$o -g -D__TARGET_ARCH_x86 -I/usr/include/x86_64-linux-gnu \
					-I"$repo/include" -I"$work/include" -c "$src" -o "$obj" 2>"$work/cc.txt"; then
					echo "FAIL: $t -mcpu=$v -O$o: $cc rejects it"; cat "$work/cc.txt"; fail=1; continue
				fi
				out=$("$gp" verify "$obj" 2>&1)
				if [ $? != 0 ] || printf '%s\n' "$out" | grep -v '^ *warning: ' | grep -qv ': OK, '; then
					echo "FAIL: $t -mcpu=$v -O$o ($cc): verify"; printf '%s\n' "$out"; fail=1; continue
				fi
				built=$((built + 1))
			done
		done
	done
done
[ $fail = 0 ] && echo "ok: $built probe builds verify (${#srcs[@]} probes, every -mcpu a clang here knows, -O1..-O3, clang$seen)"
exit $fail
