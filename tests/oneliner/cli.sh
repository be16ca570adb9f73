#!/usr/bin/env bash
# gpuprobe run -e / --dry-run and gpuprobe verify -e (issue 13), without a GPU:
#   - a mistake in the one-liner: exactly one line naming the column, exit 2, the application
#     never starts;
#   - --dry-run prints the maps (with how each prints) and the programs; verify -e verifies;
#   - the object is a 0600 file in the per-user runtime folder, named by its content;
#   - device one-liners instrument real PTX that ptxas compiles (when ptxas is there);
#   - host one-liners run end to end under the shim over tests/shim_jit's fake driver, with exact
#     counts in text and JSON (tests/proc/fork_app synchronises 3 times).
# usage: cli.sh GPUPROBE FORK_APP SHIM FAKE_DRIVER PTX
set -u
g=$1 app=$2 shim=$3 fake=$4 ptx=$5
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_RUNTIME_DIR=$tmp/rt
mkdir -m 700 "$XDG_RUNTIME_DIR"
unset GPUPROBE_CONFIG GPUPROBE_PROBES GPUPROBE_JSON GPUPROBE_INTERVAL
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "  expected: $2"; echo "  got:      $3"; fi; }

# mistake WANT_LINE ONELINER: run -e gives that line on stderr, exit 2, the app never starts
mistake() {
	rm -f "$tmp/started"
	local err
	err=$("$g" run -e "$2" -- touch "$tmp/started" 2>&1 >/dev/null)
	local rc=$?
	check "run -e '$2': exit 2" 2 "$rc"
	check "run -e '$2': message" "$1" "$err"
	[ ! -e "$tmp/started" ] || bad "run -e '$2': the application started"
}
mistake "gpuprobe: run: -e: column 12: expected '{' after the attach point (or a /filter/ before it), got the end" \
	'gpu/entry/*'
mistake "gpuprobe: run: -e: column 27: expected count(), sum(), hist() or lhist() after '=', got 'cnt'" \
	'gpu/entry/* { @[kernel] = cnt(); }'
mistake "gpuprobe: run: -e: column 24: 'addr' is available at gpu/mem only (this probe is gpu/entry/*)" \
	'gpu/entry/* { @x = sum(addr); }'
# the loader's own message about the section (ebpf/object_attach.c words it), at column 1
err=$("$g" run -e 'gpu/mem/globl/* { @x = count(); }' -- true 2>&1)
check "run -e with a bad memory filter: exit 2, the loader's message at column 1" \
	"2|gpuprobe: run: -e: column 1: unknown memory filter 'globl' (use" "$?|${err%% global,*}"
err=$("$g" run -e 'gpu/entry/* { @x = count(); }' -e 'gpu/exit/* { @y = count(); }' -- true 2>&1)
check "-e twice: exit 2 and one line" "2|gpuprobe: run: -e given twice (one program may hold several probes) (see 'gpuprobe run --help')" "$?|$err"
err=$("$g" verify -e 'gpu/entry/* { @x = sum(thread +); }' 2>&1)
check "verify -e with a mistake" "2|gpuprobe: verify: -e: column 32: expected a number, a builtin or '(', got ')'" "$?|$err"

# --dry-run: the maps and the programs, no application needed
one='gpu/entry/* /thread % 2 == 0/ { @[kernel] = count(); @t = hist(time) } gpu/mem/global,store/* { @bytes[kernel] = sum(size); @l = lhist(addr % 256, 0, 256, 64) } host/entry/cuLaunchKernel { @launches[api] = count(); @cfg[arg1, arg4] = count() }'
out=$("$g" run --dry-run -e "$one" 2>&1)
check "--dry-run: exit 0" 0 $?
check "--dry-run: maps" "map 0: @count hash, key 4 bytes, value 8 bytes, 10240 entries; prints as kernel names (gp_kernel_id_t)
map 1: @t array, key 4 bytes, value 8 bytes, 65 entries; prints as log2 histogram (gp_log2_key_t)
map 2: @bytes hash, key 4 bytes, value 8 bytes, 10240 entries; prints as kernel names (gp_kernel_id_t)
map 3: @l hash, key 4 bytes, value 8 bytes, 4 entries; prints as linear histogram (gp_lhist_key_t) step 64
map 4: @launches hash, key 4 bytes, value 8 bytes, 10240 entries; prints as driver function names (gp_api_id_t)
map 5: @cfg hash, key 16 bytes, value 8 bytes, 10240 entries; prints as tuples (u64, u64)" "$(grep '^map ' <<<"$out")"
check "--dry-run: programs" "oneliner_1 (gpu/entry/*)|oneliner_2 (gpu/mem/global,store/*)|oneliner_3 (host/entry/cuLaunchKernel)" \
	"$(grep '^oneliner_' <<<"$out" | sed 's/: [0-9]* insns$//' | paste -sd'|')"
grep -q '^ *[0-9]*: lock \*(u64 \*)(r0 +0) += r1$' <<<"$out" && ok "--dry-run: the atomic add" || bad "--dry-run: no atomic add"
grep -q '^ *[0-9]*: r4 = 1$' <<<"$out" && ok "--dry-run: the BPF_NOEXIST insert" || bad "--dry-run: no NOEXIST insert"

out=$("$g" verify -v -e "$one" 2>&1 | grep -E '^(oneliner_|  map )' | sed 's/: OK, [0-9]* insns, stack [0-9]*$/: OK/')
check "verify -v -e: every program verifies, every map sharded" "oneliner_1 (gpu/entry/*): OK
  map count: changed only by atomic add (sharded per SM)
  map t: changed only by atomic add (sharded per SM)
oneliner_2 (gpu/mem/global,store/*): OK
  map bytes: changed only by atomic add (sharded per SM)
  map l: changed only by atomic add (sharded per SM)
oneliner_3 (host/entry/cuLaunchKernel): OK
  map launches: changed only by atomic add (sharded per SM)
  map cfg: changed only by atomic add (sharded per SM)" "$out"

# the object: 0600, named by its content, the same for the same one-liner
rm -f "$XDG_RUNTIME_DIR"/gpuprobe/oneliner-*.bpf.o
"$g" run --dry-run -e "$one" >/dev/null && "$g" run --dry-run -e "$one" >/dev/null
objs=("$XDG_RUNTIME_DIR"/gpuprobe/oneliner-*.bpf.o)
check "one object for the same one-liner run twice" 1 "${#objs[@]}"
check "object mode and folder mode" "600 700" "$(stat -c %a "${objs[0]}") $(stat -c %a "$XDG_RUNTIME_DIR/gpuprobe")"

# device one-liners in real PTX: instrumented, and ptxas compiles the result
if "$g" ptx instrument -p "${objs[0]}" -o "$tmp/k.ptx" "$ptx" 2>"$tmp/instr.err"; then
	ok "ptx instrument with the one-liner's object"
	if command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
		ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
		"$ptxas" -arch=sm_90 "$tmp/k.ptx" -o "$tmp/k.cubin" && ok "ptxas compiles it" || bad "ptxas rejects it"
	else
		echo "skip ptxas (not installed)"
	fi
else
	bad "ptx instrument: $(cat "$tmp/instr.err")"
fi

# end to end: host one-liners under the shim (fake driver), exact counts
GPUPROBE_REAL_LIBCUDA=$fake timeout 30 "$g" run -e 'host/entry/cuCtxSynchronize { @syncs = count(); @calls[api] = count() } host/exit/cuCtxSynchronize /result == 0/ { @ok[api] = count(); @skipped = sum(result != 0) }' \
	-- "$app" "$shim" "$ptx" plain >"$tmp/run.out" 2>"$tmp/run.err"
check "run -e: exit 0" 0 $?
check "run -e: exact counts" "@syncs: 3
@calls[cuCtxSynchronize]: 3
@ok[cuCtxSynchronize]: 3" "$(grep '^@' "$tmp/run.err" | grep -v '^@skipped')"
GPUPROBE_REAL_LIBCUDA=$fake timeout 30 "$g" run --json "$tmp/run.json" -e 'host/entry/cuCtxSynchronize { @calls[api] = count(); @h = lhist(3, 0, 10, 2) }' \
	-- "$app" "$shim" "$ptx" plain >/dev/null 2>&1
check "run -e --json: typed records" '{"type":"top","name":"calls","data":[{"key":"cuCtxSynchronize","id":4,"value":3}]}
{"type":"hist","name":"h","data":[{"min":2,"max":3,"count":3}]}' \
	"$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] in ("top", "hist"):
        r.pop("time", None); print(json.dumps(r, separators=(",", ":")))' "$tmp/run.json")"

[ $fails = 0 ] && echo "all passed" || echo "$fails failed"
[ $fails = 0 ]
