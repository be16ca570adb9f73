#!/bin/sh
# Issue 13 point 5: one kernel-matching rule (ptx-frontend/kernel_match.h). A glob matches the
# mangled name, the demangled name without return type, that without parameters, and the base
# name; `list --probes` prints real attach points; `list --match` says what a section attaches
# to; `verify` warns about unknown host APIs and (--against) globs that match no kernel.
# usage: match.sh GPUPROBE SOURCE_DIR WORK_DIR   (CLANG in the environment for the probe)
set -u
gp=$1 src=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
ptx=$src/tests/cli/data/templates.ptx
fail() { echo "FAIL: $*"; exit 1; }

# match GLOB WANT: the kernels `list --match gpu/entry/GLOB` prints (mangled, space-separated)
match() {
	got=$("$gp" list --match "gpu/entry/$1" "$ptx" 2>/dev/null | awk '{print $2}' | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$2" ] || fail "gpu/entry/$1 matched '$got', expected '$2'"
	echo "ok: gpu/entry/$1 -> ${got:-nothing}"
}
match 'scale*' _Z5scaleILi512EEvPfi
match 'scale<512>' _Z5scaleILi512EEvPfi
match 'scale' _Z5scaleILi512EEvPfi
match 'scale<512>(float\*, int)' _Z5scaleILi512EEvPfi
match '_Z5scaleILi512EEvPfi' _Z5scaleILi512EEvPfi
match 'reduce' _Z6reducePKfPfi
match 'reduce(float const\*, float\*, int)' _Z6reducePKfPfi
match 'plain_add' plain_add
match 'ns::fill' _ZN2ns4fillIfEEvPT_
match 'ns::fill<float>' _ZN2ns4fillIfEEvPT_
match '*fill*' _ZN2ns4fillIfEEvPT_
match 'void*' ''           # the return type is not part of any form
match 'scal' ''
"$gp" list --match 'gpu/func_entry/twice' "$ptx" | grep -q '^func _Z5twicei' || fail "func_entry/twice"
echo "ok: gpu/func_entry/twice -> _Z5twicei"

# nothing matched: exit 1 and one line that says where to look
err=$("$gp" list --match 'gpu/entry/nosuch*' "$ptx" 2>&1 >/dev/null); st=$?
[ $st = 1 ] || fail "--match nothing: exit $st"
echo "$err" | grep -q "matches no kernel" || fail "--match nothing: $err"
err=$("$gp" list --match 'bogus/x' "$ptx" 2>&1 >/dev/null); st=$?
[ $st = 2 ] || fail "--match bogus section: exit $st ($err)"
"$gp" list --match 'host/entry/cuMemcpy*' "$ptx" | grep -q 'host API cuMemcpyHtoD' || fail "host/entry/cuMemcpy*"
echo "ok: --match errors and host APIs"

# --probes: the real attach points in section form
out=$("$gp" list --probes "$ptx") || fail "--probes exit $?"
for want in 'gpu/entry/_Z5scaleILi512EEvPfi  scale<512>(float\*, int)' 'gpu/entry/plain_add' \
	'gpu/func_entry/_Z5twicei  twice(int)' 'host/entry/cuLaunchKernel'; do
	echo "$out" | grep -q "^$want" || fail "--probes lacks '$want':
$out"
done
echo "$out" | grep -q 'KERNEL' && fail "--probes prints a template"
"$gp" list --probes --json "$ptx" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["kernels"])==4 and d["kernels"][0]["demangled"]=="scale<512>(float*, int)", d' \
	|| fail "--probes --json"
echo "ok: --probes"

# the same rule in the configuration's kernel filters (run -k): config.c uses kernel_match
# (tests/maps covers gp_config__kernel_selected); verify's warnings:
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
if [ -z "$CLANG" ]; then echo "SKIP: verify warnings (no clang)"; exit 0; fi
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
	-c "$src/tests/cli/data/match.bpf.c" -o "$work/match.bpf.o" || fail "clang"
out=$("$gp" verify --against "$ptx" "$work/match.bpf.o"); st=$?
[ $st = 0 ] || fail "verify --against: exit $st"
echo "$out" | grep -q "^warning: gpu/entry/nosuch\*: no kernel of .*templates.ptx matches 'nosuch\*'; kernels seen: scale<512>, reduce, plain_add, ns::fill<float>" \
	|| fail "no warning for nosuch*: $out"
echo "$out" | grep -q "warning: gpu/entry/scale" && fail "scale* warned: $out"
echo "$out" | grep -q "^warning: host/entry/cuLaunchKernal: 'cuLaunchKernal' names no host API" \
	|| fail "no warning for cuLaunchKernal: $out"
# the instrumentation uses the same rule: gpu/entry/scale* puts one site into scale<512> only
err=$("$gp" ptx instrument -p "$work/match.bpf.o" -o "$work/i.ptx" "$ptx" 2>&1)
echo "$err" | grep -q ': 1 probe sites in 1 functions$' || fail "ptx instrument: $err"
[ "$(awk '/^\.visible \.entry/ { k = $3 } /__gp/ && k { print k }' "$work/i.ptx" | sed 's/(.*//' | sort -u)" = _Z5scaleILi512EEvPfi ] \
	|| fail "the probe call is not in scale<512>"
echo "ok: ptx instrument puts gpu/entry/scale* into scale<512>"
"$gp" verify --help | grep -q 'bpf_map_lookup_elem' || fail "verify --help names no helpers"
echo "ok: verify warnings and helpers"
echo "PASS"
