#!/bin/bash
# docs/guide.md's first probe, as a reader would take it: the first ```c block saved under the
# name its first comment gives, compiled with the guide's own clang line, verified by gpuprobe.
# usage: guide_example.sh GPUPROBE REPO WORKDIR   (CLANG: the compiler)
set -u
gp=$1 repo=$2 work=$3
rm -rf "$work" && mkdir -p "$work/bin" && cd "$work" || exit 1
ln -s "$repo/include" include
if [ -n "${CLANG:-}" ] && [ "$(basename "$CLANG")" != clang ]; then
	ln -s "$CLANG" bin/clang
	PATH=$work/bin:$PATH
fi
guide=$repo/docs/guide.md
awk '/^```c/{n++; if (n == 1) {b=1; next}} /^```/{b=0} b' "$guide" >probe.c
name=$(sed -n '1s#^// \([a-z_]*\.bpf\.c\):.*#\1#p' probe.c)
[ -n "$name" ] || { echo "FAIL: the guide's first C block does not begin with '// NAME.bpf.c:'"; exit 1; }
mv probe.c "$name"
line=$(awk '/^```sh/{b=1; next} /^```/{b=0} b' "$guide" | grep -m1 "^clang -target bpf.* $name ")
[ -n "$line" ] || { echo "FAIL: no clang line for $name in the guide"; exit 1; }
(eval "$line") || { echo "FAIL: $line"; exit 1; }
obj=${name%.c}.o
want="on_entry (gpu/entry/*): OK, 28 insns, stack 16"
got=$("$gp" verify "$obj" 2>&1)
[ "$got" = "$want" ] || { printf 'FAIL: gpuprobe verify %s\n--- expected:\n%s\n--- got:\n%s\n' "$obj" "$want" "$got"; exit 1; }
echo "ok: the guide's first probe compiles with its line and verifies"
