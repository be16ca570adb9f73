#!/bin/sh
# Build one C probe with clang (-target bpf) and check what `gpuprobe verify` says about it
# against the expectations written in its comments:
#   // expect-status: N        exit status of gpuprobe verify
#   // expect-insn: TEXT       the rejected instruction line, exactly ("8: (db) lock ...")
#   // expect-reason: TEXT     the reason line, exactly (the last line of the verifier's log)
#   // expect-line: TEXT       some output line starts with TEXT (runs with -v when TEXT is a map line)
#   // expect-absent: TEXT     no output line starts with TEXT
#   // expect-verbose-once: TEXT  with -v, exactly one output line is TEXT (the rejected
#                              instruction and its source line are not printed twice)
#   // clang-flags: FLAGS      more clang options (e.g. -mcpu=v3)
# usage: check_prog.sh GPUPROBE CLANG SOURCE_ROOT PROG.bpf.c WORKDIR
set -u
gpuprobe=$1 clang=$2 root=$3 src=$4 work=$5
name=$(basename "$src" .bpf.c)
mkdir -p "$work"
obj="$work/$name.bpf.o"
fail() { echo "FAIL $name: $*"; exit 1; }

want() { sed -n "s|^// $1: ||p" "$src"; }
# shellcheck disable=SC2046
"$clang" -target bpf -O2 -g $(want clang-flags) -I/usr/include/x86_64-linux-gnu -I"$root/include" -c "$src" -o "$obj" ||
	fail "clang could not build $src"

verbose=
if want expect-line | grep -q '^  map '; then verbose=-v; fi
out=$("$gpuprobe" verify $verbose "$obj")
status=$?
printf '%s\n' "$out" | grep -v '^[0-9]*: (' | grep -v '^from \|^func#\|^processed ' | head -40

[ "$status" = "$(want expect-status)" ] || fail "exit status $status, expected $(want expect-status)"
insn=$(want expect-insn)
reason=$(want expect-reason)
if [ -n "$reason" ]; then
	got_reason=$(printf '%s\n' "$out" | tail -n 1)
	got_insn=$(printf '%s\n' "$out" | tail -n 2 | head -n 1)
	[ "$got_reason" = "$reason" ] || fail "reason '$got_reason', expected '$reason'"
	[ "$got_insn" = "$insn" ] || fail "instruction '$got_insn', expected '$insn'"
	printf '%s\n' "$out" | grep -q '^prog (.*): rejected$' || fail "no 'NAME (SECTION): rejected' line"
fi
want expect-line > "$work/$name.lines"
while IFS= read -r line; do
	printf '%s\n' "$out" | grep -qF -- "$line" || fail "no line starting '$line'"
	printf '%s\n' "$out" | grep -F -- "$line" | grep -q "^$(printf '%s' "$line" | sed 's/[][\.*^$/]/\\&/g')" ||
		fail "no line starting '$line'"
done < "$work/$name.lines"
want expect-absent > "$work/$name.absent"
while IFS= read -r line; do
	if printf '%s\n' "$out" | grep -qF -- "$line"; then fail "unexpected line '$line'"; fi
done < "$work/$name.absent"
want expect-verbose-once > "$work/$name.once"
if [ -s "$work/$name.once" ]; then
	vout=$("$gpuprobe" verify -v "$obj")
	while IFS= read -r line; do
		n=$(printf '%s\n' "$vout" | grep -cxF -- "$line")
		[ "$n" = 1 ] || fail "with -v, '$line' printed $n times, expected once"
	done < "$work/$name.once"
fi
echo "PASS $name"
