#!/bin/bash
# README's probe compile lines, run as a reader would run them, so README cannot drift from what
# works: every line of README's ```sh blocks that compile a probe (and the set-up line before
# them) runs verbatim in a scratch folder that looks like the repository root; then every probe in
# examples/ is compiled with the same line, its source and output swapped in (probes that include
# vmlinux.h with the bpftime line). usage: readme_compile.sh REPO SCRATCH   (CLANG: the compiler)
set -u
repo=$1 work=$2
rm -rf "$work" && mkdir -p "$work/bin" && cd "$work" || exit 1
ln -s "$repo/include" include && ln -s "$repo/examples" examples
# "clang" on PATH as README says it; Debian may only have clang-14
if [ -n "${CLANG:-}" ] && [ "$(basename "$CLANG")" != clang ]; then
	ln -s "$CLANG" bin/clang
	PATH=$work/bin:$PATH
fi
fail=0
# the lines of ```sh blocks that belong to compiling a probe
awk '/^```sh/{b=1; next} /^```/{b=0} b' "$repo/README.md" |
	grep -E '^(clang -target bpf|mkdir -p bpftime-include)' >lines.txt
plain=$(grep -m1 '^clang -target bpf' lines.txt | grep -v vmlinux | grep -v TARGET_ARCH)
bpftime=$(grep '^clang -target bpf' lines.txt | grep -m1 TARGET_ARCH)
if [ -z "$plain" ] || [ -z "$bpftime" ]; then
	echo "FAIL: README.md has no plain and bpftime probe compile lines in a \`\`\`sh block"
	exit 1
fi
while read -r line; do
	if ! (eval "$line") >out.txt 2>&1; then
		echo "FAIL: README line: $line"; cat out.txt; fail=1
	fi
done <lines.txt
n=0
for src in "$repo"/examples/*/*.bpf.c; do
	rel=${src#"$repo"/}
	obj=$(basename "$src" .c).o
	line=$plain
	grep -q 'include <vmlinux.h>' "$src" && line=$bpftime
	# swap the README's -c SRC -o OBJ for this probe's
	line=$(printf '%s\n' "$line" | sed -E "s#-c [^ ]+ -o [^ ]+#-c $rel -o $obj#")
	if ! (eval "$line") >out.txt 2>&1; then
		echo "FAIL: $rel: $line"; cat out.txt; fail=1
	fi
	n=$((n + 1))
done
[ $fail = 0 ] && echo "ok: README's compile lines build all $n example probes"
exit $fail
