#!/bin/bash
# GPU test of process events under probes (issue 12): PyTorch programs that fork and spawn while
# `gpuprobe run` has an entry+exit counter on every kernel (entry_exit_hash: maps enter, leave
# keyed by kernel name hash). PyTorch's kernels carry SASS only; gp_fork_scale (fork/scale.ptx,
# loaded through the driver API) is the kernel with PTX, the one the probe counts exactly.
#   train    fork/train.py: a small MLP on random data (fixed seed, deterministic) with
#            DataLoader(num_workers=4), workers forked after CUDA is up at every epoch:
#            finishes, losses bit-identical to the run without gpuprobe, one report (one JSON
#            file, one 'enter' record, none from the workers), enter == leave == the threads the
#            script launched
#   pool     fork/pool.py: 8 CUDA workers started with multiprocessing's "spawn" method: each
#            worker's results in a file of its own labelled by its PID (FILE.PID, first record
#            {"type":"process","pid":PID}), enter == leave == its threads; the parent's in FILE
# usage: tests/gpu/fork.sh   (BUILD=<build dir> with bin/gpuprobe and lib/libcuda.so.1; PROBE=
# entry_exit_hash.bpf.o, else $CORPORA/probes/ (tests/gpu/stage_corpora.sh), else clang builds it)
# Logs to $OUT. Exit 77 without a GPU or PyTorch; 2 when something it needs is missing; 1 when a
# check fails.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then
	for b in "$root/build" "$root"/build-*; do
		[ -x "$b/bin/gpuprobe" ] && [ -e "$b/lib/libcuda.so.1" ] && { BUILD=$b; break; }
	done
fi
[ -n "${BUILD:-}" ] && [ -x "$BUILD/bin/gpuprobe" ] && [ -e "$BUILD/lib/libcuda.so.1" ] ||
	{ echo "fork.sh: no BUILD with bin/gpuprobe and lib/libcuda.so.1 (set BUILD=<build dir>)"; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
	{ echo "SKIP: no python3 with PyTorch and CUDA"; exit 77; }

CORPORA=${CORPORA:-$root/.carry/corpora}
probe=${PROBE:-}
for p in "$BUILD/probes/entry_exit_hash.bpf.o" "$CORPORA/probes/entry_exit_hash.bpf.o"; do
	[ -z "$probe" ] && [ -e "$p" ] && probe=$p
done
if [ -z "$probe" ]; then
	clang=$(command -v clang || command -v clang-14 || true)
	src=$root/../shared/corpora/app-regressions/probes/entry_exit_hash.bpf.c
	[ -n "$clang" ] && [ -e "$src" ] ||
		{ echo "fork.sh: no entry_exit_hash.bpf.o (set PROBE, or run tests/gpu/stage_corpora.sh)"; exit 2; }
	"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" -c "$src" \
		-o "$OUT/entry_exit_hash.bpf.o" || exit 2
	probe=$OUT/entry_exit_hash.bpf.o
fi
F=$root/tests/gpu/fork

native_path=${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset GPUPROBE_PROBES GPUPROBE_CONFIG GPUPROBE_JSON GPUPROBE_LOG GPUPROBE_TEST_FAULT GPUPROBE_LAZY \
	GPUPROBE_PRECOMPILE GPUPROBE_DUMP_DIR GPUPROBE_INTERVAL LD_AUDIT
export CUBLAS_WORKSPACE_CONFIG=:4096:8 PYTHONHASHSEED=0 GPUPROBE_TOP=1000000
GP=$BUILD/bin/gpuprobe
T=${FORK_TIMEOUT:-600}   # per run (s)
nvidia-smi -L | tee "$OUT/gpus.txt"
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
# run NAME CMD...: stdout NAME.out, stderr NAME.err, exit status NAME.rc (124: timed out)
run() {
	local name=$1
	shift
	timeout -s KILL "$T" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	local rc=$?
	[ $rc = 137 ] && rc=124
	echo $rc >"$OUT/$name.rc"
}
# jsoncheck FILE THREADS: "ok" when FILE's process record, single 'enter'/'leave' records and
# enter == leave == THREADS for gp_fork_scale hold; else what is wrong
jsoncheck() {
	python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys
path, want, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def h(s):
    x = 2166136261
    for b in s.encode():
        x = ((x ^ b) * 16777619) & 0xffffffff
    return x
raw = open(path, "rb").read()
if raw and not raw.endswith(b"\n"):
    print("torn last record"); sys.exit(1)
recs = [json.loads(l) for l in raw.split(b"\n") if l.strip()]
if not recs or recs[0].get("type") != "process":
    print("no process record first"); sys.exit(1)
if pid and str(recs[0].get("pid")) != pid:
    print("process record pid %s, not %s" % (recs[0].get("pid"), pid)); sys.exit(1)
maps = {}
for r in recs:
    if r.get("type") in ("map", "top") and r.get("name") in ("enter", "leave"):
        if r["name"] in maps:
            print("more than one '%s' record (a second report)" % r["name"]); sys.exit(1)
        d = r.get("data")
        maps[r["name"]] = d if isinstance(d, dict) else {str(e.get("id", e.get("key"))): e.get("value") for e in d}
k = str(h("gp_fork_scale"))
e, l = maps.get("enter", {}).get(k), maps.get("leave", {}).get(k)
if e != want or l != want:
    print("gp_fork_scale: enter %s leave %s, launched %d" % (e, l, want)); sys.exit(1)
bad = [kk for kk in maps.get("enter", {}) if maps["enter"][kk] != maps.get("leave", {}).get(kk)]
if bad:
    print("enter != leave for %d kernels" % len(bad)); sys.exit(1)
print("ok")
PY
}

# --- train: DataLoader workers forked after CUDA is up ------------------------------------------
run train-native env LD_LIBRARY_PATH="$native_path" python3 "$F/train.py"
if [ "$(cat "$OUT/train-native.rc")" != 0 ]; then
	fail "train: native run exit $(cat "$OUT/train-native.rc")"; tail -5 "$OUT/train-native.err"
else
	pass "train: native run"
	rm -f "$OUT"/train.json*
	run train env GPUPROBE_CACHE_DIR="$OUT/cache" "$GP" run --json "$OUT/train.json" -p "$probe" -- python3 "$F/train.py"
	rc=$(cat "$OUT/train.rc")
	[ "$rc" = 0 ] && pass "train: finishes under gpuprobe run" || { fail "train: exit $rc"; tail -5 "$OUT/train.err"; }
	if cmp -s <(grep '^epoch' "$OUT/train-native.out") <(grep '^epoch' "$OUT/train.out") &&
	   [ "$(grep -c '^epoch' "$OUT/train.out")" -gt 0 ]; then
		pass "train: losses bit-identical to the native run ($(grep -c '^epoch' "$OUT/train.out") steps)"
	else
		fail "train: losses differ from the native run"; diff <(grep '^epoch' "$OUT/train-native.out") <(grep '^epoch' "$OUT/train.out") | head -5
	fi
	extra=$(ls "$OUT" | grep -c '^train\.json\.[0-9]*$')
	[ "$extra" = 0 ] && pass "train: one JSON file (no worker wrote one)" || fail "train: $extra files from other processes"
	threads=$(sed -n 's/^threads //p' "$OUT/train.out")
	r=$(jsoncheck "$OUT/train.json" "${threads:-0}")
	[ "$r" = ok ] && pass "train: one report, enter == leave == $threads threads" || fail "train: $r"
fi

# --- pool: 8 CUDA workers, "spawn" ---------------------------------------------------------------
rm -f "$OUT"/pool.json*
run pool env GPUPROBE_CACHE_DIR="$OUT/cache" "$GP" run --json "$OUT/pool.json" -p "$probe" -- python3 "$F/pool.py"
rc=$(cat "$OUT/pool.rc")
[ "$rc" = 0 ] && pass "pool: finishes, every worker's result right" || { fail "pool: exit $rc"; tail -5 "$OUT/pool.err"; }
nw=0
while read -r _ i _ pid _ threads _; do
	nw=$((nw + 1))
	r=$(jsoncheck "$OUT/pool.json.$pid" "$threads" "$pid" 2>&1)
	[ "$r" = ok ] && pass "pool: worker $i (pid $pid): pool.json.$pid, enter == leave == $threads" ||
		fail "pool: worker $i (pid $pid): ${r:-no pool.json.$pid}"
done < <(grep '^worker ' "$OUT/pool.out")
[ $nw = 8 ] && pass "pool: 8 workers reported" || fail "pool: $nw workers reported"
read -r _ _ ppid _ pthreads < <(grep '^parent ' "$OUT/pool.out") || true
r=$(jsoncheck "$OUT/pool.json" "${pthreads:-0}" "${ppid:-}" 2>&1)
[ "$r" = ok ] && pass "pool: the parent's report in pool.json" || fail "pool: parent: $r"
files=$(ls "$OUT" | grep -c '^pool\.json\.[0-9]*$')
[ "$files" = 8 ] && pass "pool: 8 files of workers" || fail "pool: $files worker files (want 8)"

grep -h '^gpuprobe: ' "$OUT"/train.err "$OUT"/pool.err | sort | uniq -c | sort -rn | head -5 >"$OUT/lines.txt"
echo "fork.sh: logs in $OUT"
[ $fails = 0 ] && { echo "fork.sh: PASS"; exit 0; }
echo "fork.sh: $fails FAILED"
exit 1
