#!/bin/bash
# Two planes (docs/architecture.md): under `gpuprobe run` the application's process only writes
# its maps into a segment, and gpuprobe prints them. Over tests/shim_lazy's fake driver, with the
# built-in tool `launches` (host probes: their maps fill without a GPU):
#   - the report reaches the terminal though the application's own stderr is closed
#     (planes_app's "quiet"): gpuprobe printed it, byte for byte what the shim printed before;
#   - --json FILE: the application's file, its process record, its maps;
#   - the segment is the user's alone (0600, in a 0700 folder of the runtime directory), and the
#     folder is gone after the run;
#   - the application killed with SIGKILL: gpuprobe still prints its last snapshot;
#   - without gpuprobe run (the shim loaded directly, GPUPROBE_PROBES): the shim prints the same
#     report itself at exit;
#   - events (events.bpf.c: a host probe's bpf_printk line and ring record per launch) reach
#     gpuprobe through the segment's log, each kind in order, as the shim printed them; a ring
#     whose records have a declared type (__type(value, struct T)) prints them by field.
# usage: planes.sh GPUPROBE APP SHIM FAKE PTX LAUNCHES.bpf.o EVENTS.bpf.o
set -u
gp=$1 app=$2 shim=$3 fake=$4 ptx=$5 tool=$6 events=$7
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_RUNTIME_DIR=$tmp/runtime
mkdir -m 0700 "$XDG_RUNTIME_DIR"
unset GPUPROBE_CONFIG GPUPROBE_PROBES GPUPROBE_JSON GPUPROBE_TOP GPUPROBE_INTERVAL GPUPROBE_SEGMENT_DIR
export GPUPROBE_REAL_LIBCUDA=$fake GPUPROBE_CACHE_DIR=$tmp/cache
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; printf '  expected: %s\n  got:      %s\n' "$2" "$3"; fi; }
bar=$(printf '@%.0s' $(seq 52))
want="@launches[k_use]: 3
@blocks[k_use]: 3
@threads[k_use]: 384
@calls[cuLaunchKernel]: 3
@block_threads:
[128, 256) 3 |$bar|
@grid_blocks:
[1] 3 |$bar|"

# 1. printed by gpuprobe: the application's stderr goes nowhere
"$gp" run -p "$tool" -- "$app" "$shim" "$ptx" 3 quiet >"$tmp/out" 2>"$tmp/err"
check "quiet application: exit status" 0 $?
check "quiet application: gpuprobe printed the report" "$want" "$(cat "$tmp/err")"
check "the run's folder is gone" "" "$(ls "$XDG_RUNTIME_DIR/gpuprobe" 2>&1)"

# 2. --json: the application's file
"$gp" run --json "$tmp/out.json" -p "$tool" -- "$app" "$shim" "$ptx" 2 quiet >"$tmp/out" 2>"$tmp/err"
check "--json: exit status, nothing on stderr" "0 " "$? $(cat "$tmp/err")"
check "--json: records" "process launches=2 calls=2 block_threads=2" "$(python3 - "$tmp/out.json" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
out = [recs[0]["type"]]
for r in recs[1:]:
    if r["type"] == "top" and r["name"] in ("launches", "calls"):
        out.append("%s=%d" % (r["name"], r["data"][0]["value"]))
    if r["type"] == "hist" and r["name"] == "block_threads":
        out.append("block_threads=%d" % sum(b["count"] for b in r["data"]))
print(" ".join(out))
PY
)"

# 3. the segment while the application runs; 4. SIGKILL
hold=$tmp/hold
"$gp" run -p "$tool" -- "$app" "$shim" "$ptx" 3 "$hold" 30 >"$tmp/out" 2>"$tmp/err" &
gpid=$!
for i in $(seq 100); do [ -s "$hold" ] && break; sleep 0.1; done
read -r apid <"$hold" 2>/dev/null || apid=
if [ -z "$apid" ]; then
	bad "the held application never started"; cat "$tmp/out" "$tmp/err"
	kill -KILL $gpid 2>/dev/null
else
	seg=$(ls -d "$XDG_RUNTIME_DIR"/gpuprobe/run.$gpid/seg.$apid.* 2>/dev/null | head -1)
	check "segment: the user's, mode 0600, in a 0700 folder" "600 700 $(id -u) $(id -u)" \
		"$(stat -c %a "$seg" 2>&1) $(stat -c %a "$(dirname "$seg")" 2>&1) $(stat -c %u "$seg" 2>&1) $(stat -c %u "$(dirname "$seg")" 2>&1)"
	sleep 1.5   # a snapshot after the launches (the copier takes one every 200 ms)
	kill -KILL "$apid"
	wait $gpid
	check "SIGKILL: gpuprobe's exit status" 137 $?
	check "SIGKILL: gpuprobe prints the last snapshot" \
		"gpuprobe: run: process $apid ended without its final report: its maps as of its last snapshot, X s after its probes started
$want" "$(sed 's/snapshot, [0-9.]* s after/snapshot, X s after/' "$tmp/err")"
fi

# 5. without gpuprobe run: the shim prints at exit (as the application's stderr)
GPUPROBE_PROBES=$tool "$app" "$shim" "$ptx" 3 >"$tmp/out" 2>"$tmp/err"
check "without gpuprobe run: the shim's own report" "0 $want" "$? $(cat "$tmp/err")"

# 6. events through the segment's log (a quiet application: gpuprobe printed them)
"$gp" run -p "$events" -- "$app" "$shim" "$ptx" 3 quiet >"$tmp/out" 2>"$tmp/err"
check "events: exit status" 0 $?
check "events: printk lines in order" "gpuprobe: launch 1
gpuprobe: launch 2
gpuprobe: launch 3" "$(grep '^gpuprobe: launch' "$tmp/err")"
check "events: ring records in order, then the map" "@events[ring 0]: 0x0000000000000001
@events[ring 0]: 0x0000000000000002
@events[ring 0]: 0x0000000000000003
@seq[0]: 3" "$(grep '^@events\|^@seq' "$tmp/err")"
# a ring declared with __type(value, struct launch_rec): its records by field, in order
check "events: a typed ring's records by field" "@typed[ring 0]: seq=1 delta=0 api=7
@typed[ring 0]: seq=2 delta=-1 api=7
@typed[ring 0]: seq=3 delta=-2 api=7" "$(grep '^@typed' "$tmp/err")"
"$gp" run --json "$tmp/ev.json" -p "$events" -- "$app" "$shim" "$ptx" 3 quiet >/dev/null 2>&1
check "events: --json: a typed record's fields beside its bytes" \
	'{"type":"event","map":"typed","ring":0,"data":"0200000000000000ffffffff07000000","fields":{"seq":2,"delta":-1,"api":7}}' \
	"$(grep '"map":"typed"' "$tmp/ev.json" | sed -n 2p)"
GPUPROBE_PROBES=$events "$app" "$shim" "$ptx" 3 >"$tmp/out" 2>"$tmp/err.direct"
check "events: the same lines as the shim prints without gpuprobe run" \
	"$(sort "$tmp/err.direct")" "$(grep -v '^warning' "$tmp/err" | sort)"

[ $fails = 0 ] && echo "PASS: two planes over the fake driver"
exit $((fails > 0))
