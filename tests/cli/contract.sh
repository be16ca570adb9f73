#!/bin/sh
# Issue 13 point 7: one command-line contract. Every command: --help exits 0 and prints a usage
# line, bad usage exits 2, a success case exits 0, a failure case exits 1; -p is always a probe
# file; -o/--output on every command that writes; --json on list, verify, lower and show (valid
# JSON). Table-driven: each row is WANT_STATUS, then the command line.
# usage: contract.sh GPUPROBE SOURCE_DIR WORK_DIR   (CLANG in the environment for the probe)
set -u
gp=$1 src=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*"; failed=1; }
failed=0
ptx=$src/tests/cli/data/templates.ptx
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
[ -n "$CLANG" ] || { echo "SKIP: no clang for the probe object"; exit 0; }
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
	-c "$src/tests/cli/data/match.bpf.c" -o "$work/p.bpf.o" || { echo "FAIL: clang"; exit 1; }
bpf=$work/p.bpf.o
printf 'not ptx at all\n' > "$work/bad.ptx"
printf '.version 7.8\n.target sm_75\n.address_size 64\n.visible .entry k( { ret;\n' > "$work/broken.ptx"
# a probe the verifier rejects (a read past the context)
cat > "$work/bad.bpf.c" <<'EOC'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>
GPU_ENTRY("*") int past_ctx(struct gp_kernel_ctx *ctx) { return *(int *)((char *)ctx + 4096); }
char LICENSE[] SEC("license") = "GPL";
EOC
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
	-c "$work/bad.bpf.c" -o "$work/bad.bpf.o" || { echo "FAIL: clang bad.bpf.c"; exit 1; }

# row WANT ARGS...: run gpuprobe ARGS, check the exit status (and that stderr is one line for
# statuses 1 and 2: what went wrong, said once)
row() {
	want=$1; shift
	err=$("$gp" "$@" 2>&1 >/dev/null); st=$?
	if [ "$st" != "$want" ]; then
		fail "gpuprobe $*: exit $st, expected $want ($err)"
		return
	fi
	if [ "$want" = 2 ] && [ -z "$err" ]; then
		fail "gpuprobe $*: exit 2 without a word"
		return
	fi
	echo "ok: $want  gpuprobe $*"
}

# the command itself
row 2
row 0 --help
row 2 nosuchcommand
# every command's --help
for c in list fatbin lower ptx tools run verify show "ptx print" "ptx instrument" "ptx spirv"; do
	# shellcheck disable=SC2086
	row 0 $c --help
	# shellcheck disable=SC2086
	"$gp" $c --help | head -1 | grep -q '^usage: gpuprobe' || fail "$c --help: no usage line"
done

# bad usage: an unknown option, a missing operand -> 2
for c in list fatbin lower verify show "ptx print" "ptx instrument" "ptx spirv" tools run; do
	# shellcheck disable=SC2086
	row 2 $c --no-such-option "$ptx"
done
row 2 list
row 2 list "$ptx" "$ptx"
row 2 fatbin "$ptx"                     # no -o
row 2 lower
row 2 verify
row 2 show
row 2 ptx
row 2 ptx nosuch
row 2 ptx print
row 2 ptx instrument "$ptx"              # no -p
row 2 ptx spirv "$ptx"                   # no -o
row 2 list --kind elf "$ptx"
row 2 list --target 90 "$ptx"
row 2 run -i abc -- true
row 2 lower -p on_scale "$bpf"          # the old '-p NAME': -p is the probe file now (--prog NAME)

# a file of a kind the command does not read -> 2, one line
row 2 verify "$ptx"
row 2 lower "$ptx"
row 2 show "$ptx"
row 2 ptx print "$bpf"
row 2 ptx instrument -p "$ptx" "$ptx"    # -p is the probe file
row 2 ptx spirv -p "$ptx" -o "$work/x.spv" "$ptx"
row 2 fatbin -o "$work/fb" "$ptx"
row 2 list "$work/nonexistent"

# success -> 0
row 0 list "$ptx"
row 0 list --probes "$ptx"
row 0 list --summary "$ptx"
row 0 list --match 'gpu/entry/scale*' "$ptx"
row 0 list "$bpf"
row 0 show "$bpf"
row 0 verify "$bpf"
row 0 verify -p "$bpf"
row 0 lower "$bpf"
row 0 lower -p "$bpf" --prog on_scale
row 0 ptx print "$ptx"
row 0 ptx instrument -p "$bpf" "$ptx"
row 0 ptx spirv -p "$bpf" -o "$work/p.spv" "$ptx"   # -p on ptx spirv too: probes spliced in first
row 0 tools
row 0 run -- true

# failure -> 1
row 1 list --match 'gpu/entry/nosuch' "$ptx"
row 1 ptx print "$work/broken.ptx"
row 2 lower --prog nosuch "$bpf"        # a program the object lacks: bad usage
row 1 lower "$work/bad.bpf.o"
row 1 verify "$work/bad.bpf.o"
row 1 ptx instrument -p "$work/bad.bpf.o" "$ptx"
row 1 run -- false

# -o/--output on every command that writes: the file gets what stdout would (lower's map
# descriptor addresses are host addresses, different each run)
norm() { sed -E 's/_[0-9a-f]{8,}/_X/g; s/[0-9]{9,}/N/g' "$1"; }
for c in "list" "list --probes" "list --summary" "show" "verify" "lower" "ptx print"; do
	# shellcheck disable=SC2086
	case $c in list*|ptx*) in=$ptx ;; *) in=$bpf ;; esac
	# shellcheck disable=SC2086
	"$gp" $c "$in" > "$work/stdout" 2>/dev/null
	for o in -o --output; do
		rm -f "$work/out"
		# shellcheck disable=SC2086
		"$gp" $c $o "$work/out" "$in" > "$work/stdout2" 2>/dev/null || fail "$c $o: exit $?"
		[ "$(norm "$work/stdout")" = "$(norm "$work/out")" ] || fail "$c $o: the file differs from stdout"
		[ -s "$work/stdout2" ] && fail "$c $o: wrote to stdout too"
	done
	echo "ok: $c -o/--output"
done
"$gp" ptx instrument -p "$bpf" --output "$work/i.ptx" "$ptx" 2>/dev/null && [ -s "$work/i.ptx" ] \
	|| fail "ptx instrument --output"
"$gp" fatbin --output "$work/fb" "$src/tests/cli/data/templates.ptx" >/dev/null 2>&1
[ $? = 2 ] || fail "fatbin --output on PTX"

# --json: valid JSON on list (every form), verify, lower, show
for c in "list" "list --probes" "list --summary" "list --match gpu/entry/scale*" "show" "verify" "lower"; do
	case $c in list*) in=$ptx ;; *) in=$bpf ;; esac
	# shellcheck disable=SC2086
	"$gp" $c --json "$in" 2>/dev/null | python3 -c 'import json,sys; json.load(sys.stdin)' \
		|| fail "$c --json: not JSON"
	echo "ok: $c --json"
done

# ptx spirv -p: the probe's code is in the SPIR-V (more of it than without)
"$gp" ptx spirv -S -o "$work/plain.spvasm" "$ptx" && "$gp" ptx spirv -p "$bpf" -S -o "$work/probed.spvasm" "$ptx" \
	|| fail "ptx spirv -S"
[ "$(wc -l < "$work/probed.spvasm")" -gt "$(wc -l < "$work/plain.spvasm")" ] || fail "ptx spirv -p: no probe code"

[ $failed = 0 ] && echo PASS
exit $failed
