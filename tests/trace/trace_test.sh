#!/usr/bin/env bash
# gpuprobe run --trace over a fake driver (fake_driver.c: asynchronous stream, kernels of
# 400 us): trace_app.c's two threads of driver calls, as a Perfetto trace and as a Chrome JSON
# trace, decoded by check_trace.py (its own protobuf decoder): a track per thread with its calls
# in order, properly nested; the launches with their kernels' names, grids and blocks; GPU 0 with
# the four kernels in order, each covering its run; a flow from every launch to its kernel.
# --trace-api keeps the calls it names (and the launches). The application's output is the same
# as without gpuprobe; a bad --trace name is one line and exit 2.
# usage: trace_test.sh GPUPROBE FAKE_DRIVER_DIR TRACE_APP SRC_DIR
set -u
gp=$1 fake=$2 app=$3 src=$4
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

# Perfetto traces need protobuf-c at build time (scripts/build.sh installs it)
if ! "$gp" run --trace "$tmp/probe.pftrace" --dry-run >/dev/null 2>&1; then
	echo "SKIP: this gpuprobe was built without protobuf-c (no Perfetto traces)"; exit 77
fi
native=$(LD_LIBRARY_PATH=$fake "$app" 2>&1)
[ "$native" = "trace_app: ok" ] || { bad "the app over the fake driver: $native"; exit 1; }
export GPUPROBE_REAL_LIBCUDA=$fake/libcuda.so.1 XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$tmp/run"

for f in t.pftrace t.json; do
	out=$("$gp" run --trace "$tmp/$f" -- "$app" 2>"$tmp/err")
	rc=$?
	[ $rc = 0 ] && [ "$out" = "$native" ] && ok "run --trace $f: the app's output as without gpuprobe" ||
		{ bad "run --trace $f: exit $rc, output '$out'"; cat "$tmp/err"; }
	grep -q "^gpuprobe: trace: $tmp/$f (5 tracks, 26 events; " "$tmp/err" && ok "run --trace $f: says what it wrote" ||
		{ bad "run --trace $f: no 'trace:' line"; cat "$tmp/err"; }
	python3 "$src/check_trace.py" app "$tmp/$f" || fails=$((fails + 1))
done
"$gp" run --trace "$tmp/m.pftrace" --trace-api 'cuMemcpy*' -- "$app" >/dev/null 2>"$tmp/err" &&
	python3 "$src/check_trace.py" app "$tmp/m.pftrace" --api-only 'cuMemcpy*' || { bad "--trace-api 'cuMemcpy*'"; cat "$tmp/err"; }
# the schema written down in cli/trace_perfetto.proto decodes the trace too
if command -v protoc >/dev/null; then
	n=$(protoc --decode=perfetto.protos.Trace -I"$src/../../cli" "$src/../../cli/trace_perfetto.proto" \
		<"$tmp/t.pftrace" 2>&1 | grep -c 'track_event {')
	[ "$n" = 52 ] && ok "protoc decodes the Perfetto trace: 52 track events (26 spans, a begin and an end each)" ||
		bad "protoc --decode: $n track events, expected 52"
else
	echo "skip protoc --decode (no protoc)"
fi
# names that are no trace
got=$("$gp" run --trace "$tmp/t.txt" -- "$app" 2>&1); rc=$?
[ $rc = 2 ] && [ "$(wc -l <<<"$got")" = 1 ] && grep -q 'name a Perfetto trace (FILE.pftrace) or a Chrome JSON trace' <<<"$got" &&
	ok "--trace t.txt: one line, exit 2" || bad "--trace t.txt: exit $rc: $got"
got=$("$gp" run --trace-api 'a,b' --trace "$tmp/x.json" -- "$app" 2>&1); rc=$?
[ $rc = 2 ] && [ "$(wc -l <<<"$got")" = 1 ] && ok "--trace-api with a comma: one line, exit 2" || bad "--trace-api a,b: exit $rc: $got"
# the private folder of the records is gone after the run
left=$(find "$tmp/run" -name 'trace-*' | wc -l)
[ "$left" = 0 ] && ok "the trace records' folder is removed" || bad "$left trace folders left in $tmp/run"
[ $fails = 0 ] && echo "PASS" || echo "$fails FAILED"
exit $((fails > 0))
