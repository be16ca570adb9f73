#!/bin/sh
# Issue 13 point 8: every command reads every file kind it can, and says in one line what it got
# when it cannot (cli/file_kind.c, one sniffer for all). `show` lists a probe object's programs
# and maps; `fatbin` and `list` filter by --kind and --target; `list --summary` fits a screen.
# usage: file_kinds.sh GPUPROBE SOURCE_DIR WORK_DIR   (CLANG in the environment for the probe)
set -u
gp=$1 src=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
failed=0
fail() { echo "FAIL: $*"; failed=1; }
ptx=$src/tests/cli/data/templates.ptx
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
[ -n "$CLANG" ] || { echo "SKIP: no clang"; exit 0; }
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
	-c "$src/tests/cli/data/match.bpf.c" -o "$work/p.bpf.o" || { echo "FAIL: clang"; exit 1; }
bpf=$work/p.bpf.o
exe=$gp                       # an executable without GPU code
: > "$work/empty"
printf 'hello\n' > "$work/text.txt"

# said WANT_STATUS WANT_LINE ARGS...: exactly one line on stderr, that one
said() {
	want=$1 line=$2; shift 2
	err=$("$gp" "$@" 2>&1 >/dev/null); st=$?
	[ "$st" = "$want" ] || { fail "gpuprobe $*: exit $st, expected $want ($err)"; return; }
	[ "$err" = "$line" ] || { fail "gpuprobe $*: said
  $err
expected
  $line"; return; }
	echo "ok: gpuprobe $* -> $st: $err"
}
said 2 "gpuprobe: ptx instrument: $exe is an x86-64 executable, not a PTX file; 'gpuprobe fatbin $exe -o DIR --kind ptx' writes its PTX modules" \
	ptx instrument -p "$bpf" "$exe"
said 2 "gpuprobe: ptx print: $bpf is a BPF object, not a PTX file; 'gpuprobe show $bpf' lists its programs and maps" \
	ptx print "$bpf"
said 2 "gpuprobe: ptx spirv: $work/empty is an empty file, not a PTX file" ptx spirv -o "$work/x.spv" "$work/empty"
said 2 "gpuprobe: fatbin: $ptx is a PTX file, not an executable, library, object file, static library or fatbin; 'gpuprobe list $ptx' lists its kernels" \
	fatbin -o "$work/fb" "$ptx"
said 2 "gpuprobe: verify: $ptx is a PTX file, not a BPF object (clang -target bpf); 'gpuprobe list $ptx' lists its kernels" verify "$ptx"
said 2 "gpuprobe: lower: $work/text.txt is a text file, not a BPF object (clang -target bpf)" \
	lower "$work/text.txt"
said 2 "gpuprobe: show: $exe is an x86-64 executable, not a BPF object (clang -target bpf)" show "$exe"
said 2 "gpuprobe: list: $work/missing: No such file or directory" list "$work/missing"
said 2 "gpuprobe: ptx instrument: $ptx is a PTX file, not a BPF object (-p takes a probe; the PTX file is the last argument); 'gpuprobe list $ptx' lists its kernels" \
	ptx instrument -p "$ptx" "$ptx"

# list reads a BPF object too (as show does)
"$gp" list "$bpf" | grep -q '^programs:' || fail "list on a BPF object"

# show: programs (name, section, attach point, insns), maps (type, sizes, printing), BTF types
out=$("$gp" show "$bpf") || fail "show: exit $?"
for want in "^$bpf: BPF object, 3 programs, 1 map, BTF" \
	'^  on_scale  *gpu/entry/scale\*  *kernel entry, kernel scale\*, [0-9]* insns' \
	'^  on_typo  *host/entry/cuLaunchKernal  *host API entry, host API cuLaunchKernal' \
	'^  hits  *array  *key 4 value 8 max_entries 4  prints as counts (by map name)' \
	'key: __u32  value: __u64'; do
	echo "$out" | grep -q "$want" || fail "show lacks '$want':
$out"
done
"$gp" show --json "$bpf" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [p["name"] for p in d["programs"]] == ["on_scale", "on_nosuch", "on_typo"], d
m = d["maps"][0]
assert (m["name"], m["type"], m["key_size"], m["value_size"], m["max_entries"], m["key_type"]) == ("hits", "array", 4, 8, 4, "__u32"), m
' || fail "show --json"
echo "ok: show"

# --kind and --target, on a fatbin when the build made one (nvcc), else on PTX
fb=$(ls "$src"/build*/tests/shim/kernels_ptx.fatbin 2>/dev/null | head -1)
"$gp" list --kind cubin "$ptx" | grep -q '(1 modules left out' || fail "list --kind cubin on PTX"
"$gp" list --target sm_75 "$ptx" | grep -q '^module 0: ptx sm_75' || fail "list --target sm_75"
"$gp" list --target sm_90 "$ptx" | grep -q '^module' && fail "list --target sm_90 kept sm_75"
if [ -n "$fb" ]; then
	"$gp" fatbin --kind ptx -o "$work/fb" "$fb" > "$work/fb.out" 2>/dev/null || fail "fatbin --kind ptx"
	ls "$work/fb" | grep -qv '\.ptx$' && fail "fatbin --kind ptx wrote a non-PTX entry"
	ls "$work/fb" | grep -q '\.ptx$' || fail "fatbin --kind ptx wrote nothing"
	n=$("$gp" list --kind ptx "$fb" | grep -c '^module')
	[ "$n" -ge 1 ] || fail "list --kind ptx on $fb"
	"$gp" list --kind ptx "$fb" | grep '^module' | grep -q cubin && fail "list --kind ptx kept a cubin"
	echo "ok: --kind/--target on $fb"
fi

# --summary fits a screen (cuBLASLt's full listing is 56,390 lines)
lt=/usr/local/cuda/lib64/libcublasLt.so
if [ -r "$lt" ]; then
	n=$("$gp" list --summary "$lt" | wc -l)
	[ "$n" -le 40 ] || fail "list --summary $lt: $n lines"
	echo "ok: list --summary $lt: $n lines"
fi
n=$("$gp" list --summary "$ptx" | wc -l)
[ "$n" -le 40 ] || fail "list --summary: $n lines"
"$gp" list --summary "$ptx" | grep -q '^kernels: 4 distinct, 4 with PTX' || fail "list --summary counts"

[ $failed = 0 ] && echo PASS
exit $failed
