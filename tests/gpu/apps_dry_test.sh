#!/bin/bash
# ctest of tests/gpu/apps.sh without a GPU (APPS_DRY=1): a fake corpus of shell-script "programs"
# runs through the whole pipeline (parallel build, native, shim, `gpuprobe run -p PROBE` fresh and
# cached, verdicts, masking, JSON checks, budget, table). The fake programs print timings, dates and
# addresses that differ per run (masked), and, when started by `gpuprobe run` (GPUPROBE_PROBES set),
# the shim's timed log lines and the JSON map lines the probes would give, so that:
#   good       passes everywhere, same output (its timing lines differ every run)
#   differs    prints another result under probes            -> same_as_native = no
#   mismatch   (a) leaves one exit uncounted                 -> EXITS != ENTRIES
#   hang       (b) hangs                                     -> TIMEOUT
#   noisy      prints a different (unmasked) value every run -> native's output "varies"
#   natfail    fails natively                                -> the other configurations not run
#   broken     does not build                                -> BUILD FAILED
#   hb-cuda    a HeCBench-style Makefile program (make run LAUNCHER=...)
#   long       prints 4096 lines (over the 16 KiB logs are trimmed to): same output everywhere
# usage: tests/gpu/apps_dry_test.sh BUILD   (needs BUILD/bin/gpuprobe, BUILD/lib/libcuda.so.1)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(realpath "${1:-$root/build}")
[ -x "$BUILD/bin/gpuprobe" ] || { echo "SKIP: no $BUILD/bin/gpuprobe"; exit 77; }
command -v python3 >/dev/null && command -v make >/dev/null || { echo "SKIP: no python3 or make"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
C=$W/corpora
mkdir -p "$C/cuda-samples/samples" "$C/cuda-samples/Common" "$C/app-regressions/hb-cuda" "$C/probes"
# gpuprobe run opens and verifies every probe object before the program starts: one real
# object (tests/e2e's counter) under each corpus probe's name; the fake programs only look at
# the name. 0644: gpuprobe refuses probe objects others may write.
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
[ -n "$CLANG" ] || { echo "SKIP: no clang for the probe object"; exit 77; }
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" \
	-c "$root/tests/e2e/probes/count.bpf.c" -o "$W/probe.bpf.o" || exit 1
for p in entry_exit_hash memcount bb_insns block_ring; do
	install -m 0644 "$W/probe.bpf.o" "$C/probes/$p.bpf.o"
done

# The fake program: fake.sh NAME (copied into each sample folder by its build command).
cat >"$W/fake.sh" <<'EOF'
#!/bin/bash
name=$1
[ -n "${FAKE_SLEEP:-}" ] && sleep "$FAKE_SLEEP"
probe=$(basename "${GPUPROBE_PROBES:-}" .bpf.o)
echo "$name starting at $(date) on pid $$, buffer at 0x7ffd$(printf '%08x' $RANDOM)"
echo "Processing time: $RANDOM.$RANDOM (ms)"
echo "Throughput = $RANDOM.5 GFlop/s, Time = 0.00$RANDOM s, Size = 1024 Ops"
if [ -n "$probe" ] && [ "${GPUPROBE_LOG:-}" = 1 ]; then
	echo "gpuprobe: probes: 1 objects, 2 device programs, maps on 132 SMs in 12.5 ms (map memory 1.0, configuration 0.1, objects 1.0, output 0.2, host probes 0.0)" >&2
	echo "gpuprobe: module 1: instrumented (3 probe sites in 1 functions) in 2.5 ms" >&2
	echo "gpuprobe: first launch of _Z3fooPf (module 1, PTX present) via cuLaunchKernel" >&2
	[ -e "$GPUPROBE_CACHE_DIR/seen" ] && echo "gpuprobe: module 1: cubin from the cache (x.cubin, 4096 bytes, 0.5 ms)" >&2 ||
		echo "gpuprobe: module 1: compiled in 40.0 ms by the driver's JIT (sm_90, checked)" >&2
	touch "$GPUPROBE_CACHE_DIR/seen"
fi
leave=64
[ "$name" = mismatch ] && leave=63
if [ -n "${GPUPROBE_JSON:-}" ]; then
	case $probe in
	entry_exit_hash)
		echo '{"type":"map","name":"enter","time":0.1,"data":{"11":64,"22":128}}'
		echo "{\"type\":\"map\",\"name\":\"leave\",\"time\":0.1,\"data\":{\"11\":$leave,\"22\":128}}" ;;
	memcount) echo '{"type":"map","name":"by_dir","time":0.1,"data":{"0":0,"1":100,"2":50,"3":2}}' ;;
	bb_insns) echo '{"type":"top","name":"insns_by_kernel","time":0.1,"data":[{"key":"foo(float*)","id":11,"value":5000}]}' ;;
	block_ring) for i in 1 2 3; do echo '{"type":"event","map":"blocks","ring":0,"data":"00"}'; done ;;
	esac >"$GPUPROBE_JSON"
fi
[ "$name" = hang ] && [ "$probe" = memcount ] && sleep 30
if [ "$name" = differs ] && [ -n "$probe" ]; then echo "result 43"; else echo "result 42"; fi
[ "$name" = noisy ] && echo "seed $RANDOM$RANDOM"
[ "$name" = long ] && seq 1 4096 | sed 's/^/5.1 * x + 2 = line /'
[ "$name" = natfail ] && { echo "Test failed"; exit 1; }
[ "$name" = hb-cuda ] && { echo "PASS"; exit 0; }
echo "Test passed"
EOF
{
	printf 'name\tcategory\tbuild\trun\tverdict\tnotes\n'
	for n in good differs mismatch hang noisy natfail long; do
		mkdir -p "$C/cuda-samples/samples/$n"
		printf '%s\tfake\tcp %s %s && chmod +x %s && test -n "$NVCC" && test -d "$COMMON"\t./%s %s\tTest passed\tfake\n' \
			"$n" "$W/fake.sh" "$n" "$n" "$n" "$n"
	done
	mkdir -p "$C/cuda-samples/samples/broken"
	printf 'broken\tfake\techo "broken.cu(1): error: no" >&2; false\t./broken\texit 0\tfake\n'
} >"$C/cuda-samples/samples.tsv"
printf 'main:\n\tcp %s main && chmod +x main\nrun: main\n\t$(LAUNCHER) ./main hb-cuda\n' "$W/fake.sh" \
	>"$C/app-regressions/hb-cuda/Makefile"

out=$W/out
APPS_DRY=1 BUILD=$BUILD CORPORA=$C OUT=$out APPS_WORK=$W/work APPS_LOGS=$W/logs APPS_MIN_TIMEOUT=3 APPS_TIMEOUT=20 \
	APPS_JOBS=2 bash "$root/tests/gpu/apps.sh" >"$W/log" 2>&1
rc=$?
cat "$W/log"
fails=0
expect() {   # expect WHAT PROGRAM CONFIG COLUMN PATTERN (grep -E on the column's value)
	local v
	v=$(awk -F'\t' -v p="$2" -v c="$3" -v k="$4" 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
		$1 == p && $2 == c {print $col[k]}' "$out/apps.tsv")
	if echo "$v" | grep -qE "$5"; then echo "ok: $1"; else echo "FAIL: $1: $2 $3 $4 = '$v', expected /$5/"; fails=$((fails + 1)); fi
}
[ $rc = 1 ] || { echo "FAIL: apps.sh exit $rc, expected 1"; fails=$((fails + 1)); }
expect "native passes" good native verdict '^PASS$'
expect "timings masked: same output" good a-cached same_as_native '^yes$'
expect "shim run, same output" good shim same_as_native '^yes$'
expect "ratio computed" good b-fresh ratio '^[0-9]+\.[0-9]{3}$'
expect "first-launch ms, fresh (12.5+2.5+40)" good a-fresh first_launch_ms '^55\.0$'
expect "first-launch ms, cached (12.5+2.5+0.5)" good a-cached first_launch_ms '^15\.5$'
expect "exits = entries" good a-fresh check '^exits = entries \(2 kernels, 192 threads\)'
expect "memcount read" good b-cached check '^loads 100 stores 50 atomics 2$'
expect "bb counter read" good c-fresh check '^1 kernels, 5000 instructions$'
expect "ring events counted" good d-cached check '^3 block events, 0 lost$'
expect "no probe log natively" good native first_launch_ms '^-$'
expect "a different result is caught" differs a-fresh same_as_native '^no$'
expect "but the verdict is still the rule's" differs a-fresh verdict '^PASS$'
expect "exits != entries caught" mismatch a-cached check '^EXITS != ENTRIES in 1 of 2 kernels \(11: 64 entries, 63 exits\)'
expect "hang killed" hang b-fresh verdict '^TIMEOUT$'
expect "next configuration runs after a hang" hang c-fresh verdict '^PASS$'
expect "native output stable (first run vs timed run)" good native same_as_native '^yes$'
expect "native output varies" noisy native same_as_native '^no$'
expect "an output over 16 KiB compared whole" long b-cached same_as_native '^yes$'
expect "native failure" natfail native verdict '^FAIL'
expect "native failure: rest not run" natfail shim verdict '^not run$'
expect "build failure reported as such" broken native verdict '^BUILD FAILED$'
expect "build failure reason" broken native notes 'error: no'
expect "Makefile program via LAUNCHER" hb-cuda a-fresh check '^exits = entries'
expect "Makefile program passes" hb-cuda d-cached verdict '^PASS$'
[ -f "$out/apps.md" ] && grep -q '^| good | PASS ' "$out/apps.md" && grep -q 'no probes, median' "$out/apps.md" &&
	grep -q 'dry run' "$out/apps.md" && grep -q 'between two native runs of: noisy' "$out/apps.md" && echo "ok: table written" || { echo "FAIL: apps.md"; fails=$((fails + 1)); }
tar -tzf "$out/apps-logs.tgz" | grep -q 'apps/good/a-fresh.out' && echo "ok: log tarball" ||
	{ echo "FAIL: apps-logs.tgz"; fails=$((fails + 1)); }
[ -s "$W/logs/apps/differs/a-fresh.diff" ] && echo "ok: diff kept" || { echo "FAIL: no differs diff"; fails=$((fails + 1)); }

# The budget: with MAX_SECONDS=4 and every run taking 2 s, the first program's third configuration
# is not run, no further program starts, the table is still written; the build is not redone.
out2=$W/out2
FAKE_SLEEP=2 APPS_DRY=1 BUILD=$BUILD CORPORA=$C OUT=$out2 APPS_WORK=$W/work MAX_SECONDS=4 \
	APPS_CONFIGS="shim a-fresh" SUBSET="good,differs,hb-*" bash "$root/tests/gpu/apps.sh" >"$W/log2" 2>&1
grep -q 'built before' "$W/work/logs/apps/build.tsv" && echo "ok: builds reused" || { echo "FAIL: rebuilt"; fails=$((fails + 1)); }
n=$(tail -n +2 "$out2/apps.tsv" | cut -f1 | sort -u | wc -l)
if grep -q 'budget: MAX_SECONDS=4 spent' "$W/log2" && [ "$n" -le 1 ] && [ -f "$out2/apps.md" ]; then
	echo "ok: budget stops new programs ($n of 3 programs started: $(tail -n +2 "$out2/apps.tsv" | cut -f2,3 | tr '\t\n' ': '))"
else
	echo "FAIL: budget ($n rows)"; cat "$W/log2"; fails=$((fails + 1))
fi
# apps_multi.sh: two slices side by side (APPS_GPUS=2), balanced by the first run's native times,
# one table over both
out3=$W/out3
APPS_GPUS=2 APPS_TIMES="$out/apps.tsv" APPS_DRY=1 BUILD=$BUILD CORPORA=$C OUT=$out3 APPS_WORK=$W/work3 \
	APPS_MIN_TIMEOUT=3 APPS_TIMEOUT=20 APPS_CONFIGS=shim SUBSET="good,hb-*,long" \
	bash "$root/tests/gpu/apps_multi.sh" >"$W/log3" 2>&1
rc=$?
rows=$(grep -cE '^\| (good|hb-cuda|long) ' "$out3/apps.md" 2>/dev/null)
if [ $rc = 0 ] && [ "$(wc -l <"$out3/slices.txt")" = 2 ] && [ "$rows" = 3 ] && [ -f "$out3/gpu0/apps.tsv" ] && [ -f "$out3/gpu1/apps.tsv" ]; then
	echo "ok: apps_multi.sh: 2 slices ($(paste -sd'|' "$out3/slices.txt")), one table of 3 programs"
else
	echo "FAIL: apps_multi.sh: exit $rc, $rows rows"; tail -5 "$W/log3"; cat "$out3/slices.txt" 2>/dev/null; fails=$((fails + 1))
fi
# Merging two runs' TSVs into one table
python3 "$root/tests/gpu/apps_tool.py" table "$W/merged.md" "$out/apps.tsv" "$out2/apps.tsv" --device "$out/apps-device.txt" &&
	grep -q '^| hb-cuda ' "$W/merged.md" && echo "ok: merge" || { echo "FAIL: merge"; fails=$((fails + 1)); }
[ $fails = 0 ] && echo "PASS: apps.sh dry run" || { echo "FAIL: $fails checks"; exit 1; }
