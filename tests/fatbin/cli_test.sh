#!/usr/bin/env bash
# gpuprobe list / gpuprobe fatbin on the committed seeds: exact outputs (expected/*.txt), written
# entries, --help, and one-line errors with a non-zero exit on bad input.
# Usage: cli_test.sh PATH/TO/gpuprobe   (UPDATE=1 rewrites the expected files)
set -uo pipefail
G=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
seeds=$here/fuzz-seeds/fatbin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# golden NAME CMD...: stdout must equal expected/NAME.txt, exit 0, nothing on stderr
golden() {
	local name=$1; shift
	(cd "$tmp" && "$@") >"$tmp/out.txt" 2>"$tmp/err.txt"
	local rc=$?
	[ $rc = 0 ] || bad "$name: exit $rc: $(cat "$tmp/err.txt")"
	[ -s "$tmp/err.txt" ] && bad "$name: stderr: $(cat "$tmp/err.txt")"
	if [ "${UPDATE:-}" = 1 ]; then cp "$tmp/out.txt" "$here/expected/$name.txt"; fi
	diff -u "$here/expected/$name.txt" "$tmp/out.txt" || bad "$name: output differs"
}

# one_error [2] WANT CMD...: exit 1 (2: bad usage or a file of another kind), nothing on stdout,
# exactly the line WANT on stderr
one_error() {
	local status=1
	if [ "$1" = 2 ]; then status=2; shift; fi
	local want=$1; shift
	(cd "$tmp" && "$@") >"$tmp/out.txt" 2>"$tmp/err.txt"
	local rc=$?
	[ $rc = $status ] || bad "$*: exit $rc (want $status)"
	[ -s "$tmp/out.txt" ] && bad "$*: wrote to stdout"
	[ "$(cat "$tmp/err.txt")" = "$want" ] || bad "$*: stderr '$(cat "$tmp/err.txt")', want '$want'"
}

cp "$seeds"/* "$tmp/"
for f in tiny_default.fatbin tiny_speed.fatbin tiny_size.fatbin tiny_multi.fatbin tiny_object.o tiny_rdc.o tiny_sm75.cubin \
	tiny_lib.a tiny_lto.o; do
	golden "list_${f//./_}" "$G" list "$f"
done
golden fatbin_tiny_default "$G" fatbin tiny_default.fatbin -o out
cmp -s "$tmp/out/0-sm_75.cubin" "$seeds/tiny_sm75.cubin" || bad "extracted cubin differs from nvcc -cubin"
golden fatbin_tiny_rdc "$G" fatbin tiny_rdc.o -o rdc
cmp -s "$tmp/out/1-sm_75.ptx" "$tmp/rdc/1-sm_75.ptx" && bad "rdc PTX should differ (it is built with -rdc)"
# LTO IR is stored encoded: fatbin skips it with a note, and succeeds
(cd "$tmp" && "$G" fatbin tiny_lto.o -o lto) >"$tmp/out.txt" 2>"$tmp/err.txt" || bad "fatbin on LTO IR failed"
[ "$(cat "$tmp/err.txt")" = "gpuprobe: tiny_lto.o: entry 0 skipped: offset 0x5b0: LTO IR payload is encoded (flags 0x18011) and cannot be read" ] ||
	bad "fatbin on LTO IR: stderr '$(cat "$tmp/err.txt")'"
[ -s "$tmp/out.txt" ] && bad "fatbin on LTO IR wrote lines for skipped entries"
cp "$tmp/out/1-sm_75.ptx" "$tmp/tiny.ptx"
golden list_tiny_ptx "$G" list tiny.ptx
[ "$(tail -c 1 "$tmp/tiny.ptx" | od -An -tx1 | tr -d ' ')" != 00 ] || bad "PTX written with trailing NULs"

"$G" list --help | grep -q '^usage: gpuprobe list ' || bad "list --help"
"$G" fatbin --help | grep -q '^usage: gpuprobe fatbin .*-o DIR FILE' || bad "fatbin --help"

printf 'hello\n' >"$tmp/junk.txt"
one_error "gpuprobe: /bin/sh: offset 0x0: ELF file has no fatbin (no .nv_fatbin section: not a CUDA binary?)" \
	"$G" list /bin/sh
head -c 1000 "$seeds/tiny_default.fatbin" >"$tmp/short.fatbin"
head -c 3000 "$seeds/tiny_object.o" >"$tmp/short.o"
one_error 2 "gpuprobe: list: nosuch: No such file or directory" "$G" list nosuch
one_error 2 "gpuprobe: list: junk.txt is a text file, not a binary, fatbin, cubin or PTX file" "$G" list junk.txt
one_error "gpuprobe: short.fatbin: offset 0x0: fatbin of 0x12a0 bytes runs past the end of the image (0x3d8 bytes left)" \
	"$G" list short.fatbin
one_error "gpuprobe: short.fatbin: offset 0x0: fatbin of 0x12a0 bytes runs past the end of the image (0x3d8 bytes left)" \
	"$G" fatbin short.fatbin -o x
one_error "gpuprobe: short.o: offset 0x28: ELF section headers at 0x2cd0 lie past the end of the file" "$G" list short.o
one_error 2 "gpuprobe: fatbin: junk.txt is a text file, not an executable, library, object file, static library or fatbin" \
	"$G" fatbin junk.txt -o x
one_error 2 "gpuprobe: fatbin: tiny_sm75.cubin is a cubin, not an executable, library, object file, static library or fatbin; 'gpuprobe list tiny_sm75.cubin' lists its kernels" \
	"$G" fatbin tiny_sm75.cubin -o x
one_error 2 "gpuprobe: fatbin: no output directory given (-o DIR)" "$G" fatbin tiny_default.fatbin
one_error 2 "gpuprobe: fatbin: no FILE given (see 'gpuprobe fatbin --help')" "$G" fatbin -o x
one_error 2 "gpuprobe: list: no FILE given (see 'gpuprobe list --help')" "$G" list
one_error 2 "gpuprobe: list: unknown option '--bogus' (see 'gpuprobe list --help')" "$G" list --bogus x
one_error 2 "gpuprobe: list: one FILE only ('b' is extra)" "$G" list a b

[ $fail = 0 ] && echo "fatbin cli: all checks passed"
exit $fail
