#!/bin/sh
# gpuprobe decode on a capture test_capture writes (5 records of struct cap_rec on 2 rings):
# exact lines as text and JSON, --limit, --stats, a truncated file, hostile files, bad usage.
# usage: decode_test.sh GPUPROBE TEST_CAPTURE REC.bpf.o WORKDIR
set -u
GP=$1 TC=$2 REC=$3 W=$4
rm -rf "$W" && mkdir -p "$W" || exit 1
fail=0
check() {   # check NAME EXPECTED-FILE ACTUAL-FILE
	if cmp -s "$2" "$3"; then echo "PASS $1"; else echo "FAIL $1"; diff "$2" "$3"; fail=1; fi
}
status() {  # status NAME WANT GOT
	if [ "$2" = "$3" ]; then echo "PASS $1 (exit $3)"; else echo "FAIL $1: exit $3, expected $2"; fail=1; fi
}
F=$W/s.gpt
"$TC" "$REC" --sample "$F" || { echo "FAIL: test_capture --sample"; exit 1; }

cat >"$W/text.want" <<'X'
events ring 0: seq=0 sm=0 neg=-1 tag="t0" pair.lo=0 pair.hi=2 f=0.5
events ring 0: seq=2 sm=0 neg=-3 tag="t2" pair.lo=2 pair.hi=2 f=0.5
events ring 0: seq=4 sm=0 neg=-5 tag="t4" pair.lo=4 pair.hi=2 f=0.5
events ring 1: seq=1 sm=1 neg=-2 tag="t1" pair.lo=1 pair.hi=2 f=0.5
events ring 1: seq=3 sm=1 neg=-4 tag="t3" pair.lo=3 pair.hi=2 f=0.5
X
echo "gpuprobe: $F: map 'events': 5 records, 0 lost (2 rings, lossy)" >"$W/sum.want"
"$GP" decode "$F" >"$W/text.out" 2>"$W/text.err"; status text 0 $?
check text.stdout "$W/text.want" "$W/text.out"
check text.stderr "$W/sum.want" "$W/text.err"

cat >"$W/json.want" <<'X'
{"map":"events","ring":0,"seq":0,"sm":0,"neg":-1,"tag":"t0","pair.lo":0,"pair.hi":2,"f":0.5}
{"map":"events","ring":0,"seq":2,"sm":0,"neg":-3,"tag":"t2","pair.lo":2,"pair.hi":2,"f":0.5}
{"map":"events","ring":0,"seq":4,"sm":0,"neg":-5,"tag":"t4","pair.lo":4,"pair.hi":2,"f":0.5}
{"map":"events","ring":1,"seq":1,"sm":1,"neg":-2,"tag":"t1","pair.lo":1,"pair.hi":2,"f":0.5}
{"map":"events","ring":1,"seq":3,"sm":1,"neg":-4,"tag":"t3","pair.lo":3,"pair.hi":2,"f":0.5}
{"type":"summary","map":"events","records":5,"lost":0,"lost_known":true,"rings":2,"mode":"lossy","sample_every":1,"wait_ns":0,"rings_gave_up":0,"offered":0}
X
"$GP" decode --json "$F" >"$W/json.out" 2>"$W/json.err"; status json 0 $?
check json.stdout "$W/json.want" "$W/json.out"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$W/json.out" \
	&& echo "PASS json.parses" || { echo "FAIL json.parses"; fail=1; }

head -n 2 "$W/text.want" >"$W/limit.want"
"$GP" decode --limit 2 "$F" >"$W/limit.out" 2>/dev/null; status limit 0 $?
check limit "$W/limit.want" "$W/limit.out"

: >"$W/empty"
"$GP" decode --stats "$F" >"$W/stats.out" 2>"$W/stats.err"; status stats 0 $?
check stats.stdout "$W/empty" "$W/stats.out"
check stats.stderr "$W/sum.want" "$W/stats.err"

# cut by one byte: the END chunk is gone, everything before it decodes, one line says so
size=$(wc -c <"$F")
head -c $((size - 1)) "$F" >"$W/cut.gpt"
"$GP" decode "$W/cut.gpt" >"$W/cut.out" 2>"$W/cut.err"; status truncated 0 $?
check truncated.stdout "$W/text.want" "$W/cut.out"
{ echo "gpuprobe: $W/cut.gpt: no end chunk: the capturing process died or is still writing; what follows is every whole chunk"
  echo "gpuprobe: $W/cut.gpt: map 'events': 5 records, 0 lost (2 rings, lossy)"; } >"$W/cut.want"
check truncated.stderr "$W/cut.want" "$W/cut.err"

printf 'hello, not a capture' >"$W/bad.gpt"
"$GP" decode "$W/bad.gpt" >"$W/bad.out" 2>"$W/bad.err"; status hostile 1 $?
echo "gpuprobe: decode: $W/bad.gpt: not a gpuprobe capture (no GPTRACE header)" >"$W/bad.want"
check hostile.stderr "$W/bad.want" "$W/bad.err"
# an unknown chunk type right after the header
{ head -c 32 "$F"; printf '\011\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000'; } >"$W/type.gpt"
"$GP" decode "$W/type.gpt" >/dev/null 2>"$W/type.err"; status chunk-type 1 $?
echo "gpuprobe: decode: $W/type.gpt: chunk at byte 32: unknown chunk type 9" >"$W/type.want"
check chunk-type.stderr "$W/type.want" "$W/type.err"

"$GP" decode "$W/missing.gpt" >/dev/null 2>"$W/miss.err"; status missing 1 $?
echo "gpuprobe: decode: $W/missing.gpt: No such file or directory" >"$W/miss.want"
check missing.stderr "$W/miss.want" "$W/miss.err"
"$GP" decode "$W" >/dev/null 2>"$W/dir.err"; status directory 1 $?

"$GP" decode >/dev/null 2>&1; status usage.none 2 $?
"$GP" decode --limit x "$F" >/dev/null 2>"$W/u.err"; status usage.limit 2 $?
"$GP" decode --help >"$W/help.out" 2>&1; status help 0 $?
grep -q '^usage: gpuprobe decode' "$W/help.out" && echo "PASS help.text" || { echo "FAIL help.text"; fail=1; }
exit $fail
