#!/usr/bin/env bash
# gpuprobe ptx print: exact round trip of a hand-written module full of rare constructs (verbatim
# and canonical, checked with ptxas), and the exact error lines and exit codes on bad input.
# usage: cli_print.sh GPUPROBE TESTS_PTX_DIR WORK_DIR
set -uo pipefail
gp=$1 dir=$2 work=$3
export PATH=$PATH:/usr/local/cuda/bin
rm -rf "$work" && mkdir -p "$work/a" "$work/b" "$work/c"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# 1. verbatim print reproduces the file byte for byte
"$gp" ptx print "$dir/rare.ptx" > "$work/rare.out" || bad "print rare.ptx exited $?"
cmp -s "$dir/rare.ptx" "$work/rare.out" || bad "verbatim print of rare.ptx differs"
# 2. ptxas gives the same cubin for the original, the printed and the canonical module
cp "$dir/rare.ptx" "$work/a/m.ptx"
cp "$work/rare.out" "$work/b/m.ptx"
"$gp" ptx print --canonical "$dir/rare.ptx" -o "$work/c/m.ptx" || bad "print --canonical exited $?"
cmp -s "$dir/rare.ptx" "$work/c/m.ptx" && bad "canonical output is identical to the input: the test would prove nothing"
for v in a b c; do
	(cd "$work/$v" && ptxas -arch=sm_90 m.ptx -o m.cubin) || bad "ptxas failed on $v"
done
cmp -s "$work/a/m.cubin" "$work/b/m.cubin" || bad "printed cubin differs"
cmp -s "$work/a/m.cubin" "$work/c/m.cubin" || bad "canonical cubin differs"
# canonical output parses again and is a fixed point
"$gp" ptx print --canonical "$work/c/m.ptx" > "$work/c2.ptx" || bad "re-print of canonical failed"
cmp -s "$work/c/m.ptx" "$work/c2.ptx" || bad "canonical print is not a fixed point"

# 3. malformed input: FILE:LINE:COL: message, exit 1
printf '.version 8.8\n.target sm_90\n.entry k()\n{\n\tadd.s32 %%r1, %%r2 %%r3;\n}\n' > "$work/bad.ptx"
out=$("$gp" ptx print "$work/bad.ptx" 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || bad "malformed: exit $rc, want 1"
[ "$out" = "$work/bad.ptx:5:19: expected ',' or ';' after an operand, found '%r3'" ] || bad "malformed: got '$out'"
head -c 300 "$dir/rare.ptx" > "$work/trunc.ptx"
out=$("$gp" ptx print "$work/trunc.ptx" 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && [[ "$out" == "$work/trunc.ptx:"*": "* ]] || bad "truncated: exit $rc, '$out'"
out=$("$gp" ptx print "$work/missing.ptx" 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && [[ "$out" == "gpuprobe: ptx print: $work/missing.ptx: No such file or directory" ]] || bad "missing file: exit $rc, '$out'"
out=$("$gp" ptx frobnicate 2>&1); rc=$?
[ $rc = 2 ] && [ "$out" = "gpuprobe: ptx: unknown subcommand 'frobnicate' (see 'gpuprobe ptx --help')" ] || bad "unknown subcommand: exit $rc, '$out'"
"$gp" ptx print --help | grep -q '^usage: gpuprobe ptx print' || bad "print --help"
"$gp" ptx --help | grep -q '^  print ' || bad "ptx --help lists print"

[ $fail = 0 ] && echo "ptx print CLI: all checks passed"
exit $fail
