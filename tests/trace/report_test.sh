#!/usr/bin/env bash
# gpuprobe report: gen_capture.py's capture (typed with typed.bpf.o when given) into a Perfetto
# trace, a Chrome trace and HTML reports of each; the reports are one self-contained file (no
# address outside it, no file loaded); the timeline's data holds the capture's tracks, spans and
# map. Hostile input (empty, garbage, cut short, damaged, wrong kinds): one line, exit 1, never
# a crash (this test runs under ASan/UBSan in CI's second stage).
# usage: report_test.sh GPUPROBE SRC_DIR [TYPED.bpf.o]
set -u
gp=$1 src=$2 typed=${3:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
# Perfetto traces need protobuf-c at build time (scripts/build.sh installs it)
if ! "$gp" run --trace "$tmp/probe.pftrace" --dry-run >/dev/null 2>&1; then
	echo "SKIP: this gpuprobe was built without protobuf-c (no Perfetto traces)"; exit 77
fi
p=(); [ -n "$typed" ] && [ -f "$typed" ] && p=(-p "$typed")

python3 "$src/gen_capture.py" "$tmp/cap.jsonl"
for f in cap.pftrace cap.json; do
	"$gp" report "${p[@]}" -o "$tmp/$f" "$tmp/cap.jsonl" 2>"$tmp/err" || { bad "report -o $f"; cat "$tmp/err"; }
	if [ ${#p[@]} -gt 0 ]; then
		python3 "$src/check_trace.py" capture "$tmp/$f" || fails=$((fails + 1))
	fi
done
python3 "$src/gen_capture.py" "$tmp/nc.jsonl" --no-clock
if [ ${#p[@]} -gt 0 ]; then
	"$gp" report "${p[@]}" -o "$tmp/nc.pftrace" "$tmp/nc.jsonl" 2>/dev/null &&
		python3 "$src/check_trace.py" capture-noclock "$tmp/nc.pftrace" || fails=$((fails + 1))
else
	echo "skip typed ring records (no typed.bpf.o: no clang)"
fi
# reports of the capture itself and of both traces; the default name replaces the ending
for f in cap.jsonl cap.pftrace cap.json; do
	"$gp" report "$tmp/$f" 2>"$tmp/err"
	h=$tmp/${f%.*}.html
	[ -s "$h" ] && grep -q "^gpuprobe: report: $h (" "$tmp/err" && ok "report $f -> ${f%.*}.html" ||
		{ bad "report $f"; cat "$tmp/err"; continue; }
	if grep -qiE '(src|href) *= *"?(https?:)?//|<link|XMLHttpRequest|fetch\(|import\(' "$h"; then
		bad "report of $f refers to something outside the file"
	else
		ok "report of $f is self-contained"
	fi
	python3 - "$h" <<'PY' && ok "report of $f: its data holds the tracks, the kernel, the blocks and the map" || fails=$((fails + 1))
import json, re, sys
html = open(sys.argv[1]).read()
m = re.search(r"const DATA = (\{.*?\});\n", html, re.S)
d = json.loads(m.group(1))
names = sorted(t["name"] for t in d["tracks"])
ev = d["events"]
kern = [e for e in ev if e[4] == "kernel"]
blocks = [e for e in ev if e[4] == "block"]
want = ["GPU 0", "SM 3", "SM 5", "app 4242"]
ok = all(w in names for w in want) and len(kern) == 1 and kern[0][3] == "foo(float*)" and \
     kern[0][2] == 40000 and len(blocks) == 3 and [m["name"] for m in d["maps"]] == ["lat"]
if not ok:
    print("FAIL data: tracks %s, kernels %s, %d blocks, maps %s" % (names, kern, len(blocks), d["maps"]))
sys.exit(0 if ok else 1)
PY
done

# hostile input: one line on stderr, exit 1
printf '' >"$tmp/empty.pftrace"
printf 'hello\n' >"$tmp/garbage.json"
head -c 300 "$tmp/cap.pftrace" >"$tmp/cut.pftrace"
head -c 500 "$tmp/cap.json" >"$tmp/cut.json"
printf '{"type":"api","pid":1,"tid":1,"name":"cuInit","ts":1,"dur":1}\nnot json\n{"type":"api"}\n' >"$tmp/bad.jsonl"
printf '\x0a\x0a\x5a\x08\x58\x02\x10\x05\x58\x02\x50\x07' >"$tmp/endless.pftrace"   # an end with no begin
printf '\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01' >"$tmp/huge.pftrace"
printf '{"traceEvents":[{"ph":"X","name":5,"ts":"x","pid":[],"tid":{}},7,null]}' >"$tmp/odd.json"
printf '{"traceEvents":{}}' >"$tmp/noarray.json"
printf '{"type":"process","pid":1}\n' >"$tmp/nothing.jsonl"
head -c 4000 /dev/urandom >"$tmp/random.pftrace"
for f in empty.pftrace garbage.json cut.pftrace cut.json bad.jsonl endless.pftrace huge.pftrace \
	noarray.json nothing.jsonl random.pftrace; do
	"$gp" report -o "$tmp/out.html" "$tmp/$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	n=$(wc -l <"$tmp/err")
	if [ $rc = 1 ] && [ "$n" = 1 ] && grep -q "^gpuprobe: report: $tmp/$f: " "$tmp/err"; then
		ok "hostile $f: $(sed "s|$tmp/||" "$tmp/err")"
	else
		bad "hostile $f: exit $rc, $n lines:"; cat "$tmp/err"
	fi
done
# a Chrome trace with odd members still makes a report (what it can read of it)
"$gp" report -o "$tmp/odd.html" "$tmp/odd.json" 2>"$tmp/err" && ok "odd.json (wrong member types): a report" ||
	{ rc=$?; [ $rc = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && ok "odd.json: one line" || bad "odd.json: exit $rc"; }
# a ring record of no bytes (fuzz/trace_fuzz.c found it read past its hex text)
printf '{"type":"thread","pid":1,"tid":1,"name":"a"}\n{"type":"api","pid":1,"tid":1,"name":"cuInit","ts":5,"dur":1}\n{"type":"event","map":"e","ring":0,"data":""}\n' >"$tmp/empty_rec.jsonl"
"$gp" report -o "$tmp/empty_rec.json" "$tmp/empty_rec.jsonl" 2>/dev/null &&
	python3 -c 'import json,sys; e=[x for x in json.load(open(sys.argv[1]))["traceEvents"] if x.get("cat")=="event"]; sys.exit(0 if len(e)==1 and e[0]["args"]["data"]=="" else 1)' "$tmp/empty_rec.json" &&
	ok "an empty ring record: an instant with empty data" || bad "an empty ring record"
got=$("$gp" report -o "$tmp/x.txt" "$tmp/cap.jsonl" 2>&1); rc=$?
[ $rc = 2 ] && [ "$(wc -l <<<"$got")" = 1 ] && ok "-o x.txt: one line, exit 2" || bad "-o x.txt: exit $rc: $got"
got=$("$gp" report "$tmp/none.json" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(wc -l <<<"$got")" = 1 ] && ok "a missing file: one line, exit 1" || bad "missing file: exit $rc: $got"
[ $fails = 0 ] && echo "PASS" || echo "$fails FAILED"
exit $((fails > 0))
