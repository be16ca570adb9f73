#!/bin/bash
# tests/gpu/apps.sh over every GPU of the machine at once: the corpus in one slice per GPU
# (CUDA_VISIBLE_DEVICES=i), each slice's programs still one at a time on its own GPU, then one
# table over all of them (apps_tool.py table). On a 4-GPU machine the whole corpus (111 programs)
# runs a configuration set in about a quarter of the time: session 14 ran (b), (c), (d) fresh and
# cached and memcheck over all of it in two 10-minute calls. The GPUs share the host's cores and
# PCIe root, so timings are each GPU's own (every ratio is over the same GPU's native run).
#
# Slices are balanced by native time: APPS_TIMES=FILE... (apps.tsv files of earlier runs; the
# longest native run of each program), longest first onto the least loaded GPU; programs not in
# them count 2 s. Without APPS_TIMES, round robin.
# usage: BUILD=$PWD/build-gpu [APPS_TIMES="old/apps.tsv ..."] [APPS_GPUS=4] tests/gpu/apps_multi.sh
#   every apps.sh option applies to each slice (APPS_CONFIGS, SANITIZER, MAX_SECONDS, CORPORA,
#   SUBSET, ...); APPS_WORK (default build-apps-work) gets one folder per GPU (gpu0, gpu1, ...).
# Output: $OUT/apps.md (the merged table), $OUT/gpuN/ (each slice's apps.sh output), $OUT/gpuN.log.
# Exit: 77 without a GPU; 1 when a slice's apps.sh says a program failed; 0 otherwise.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/gpu
OUT=${OUT:-$(mktemp -d)}
CORPORA=$(realpath -m "${CORPORA:-$root/.carry/corpora}")
WORK=$(realpath -m "${APPS_WORK:-$root/build-apps-work}")
n=${APPS_GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
[ "$n" -gt 0 ] || { echo "apps_multi.sh: SKIP: no GPU"; exit 77; }
mkdir -p "$OUT"
# One comma-separated list of program names per GPU.
python3 - "$n" "$here/apps_tool.py" "$CORPORA" "${SUBSET:-}" ${APPS_TIMES:-} >"$OUT/slices.txt" <<'PY' || exit 2
import csv, subprocess, sys
n, tool, corpora, subset, times = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
t = {}
for f in times:
    for r in csv.DictReader(open(f), delimiter="\t"):
        if r.get("config") == "native":
            try:
                t[r["program"]] = max(t.get(r["program"], 0.0), float(r["wall_s"]))
            except (KeyError, ValueError):
                pass
cmd = ["python3", tool, "list", corpora] + ([subset] if subset else [])
names = [l.split("\t")[0] for l in subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines() if l]
bins = [[0.0, []] for _ in range(n)]
if times:   # longest first onto the least loaded GPU
    for name in sorted(names, key=lambda x: -t.get(x, 2.0)):
        b = min(bins, key=lambda b: b[0])
        b[0] += t.get(name, 2.0)
        b[1].append(name)
else:
    for i, name in enumerate(names):
        bins[i % n][1].append(name)
for b in bins:
    print(",".join(b[1]))
PY
i=0
while IFS= read -r names; do
	if [ -n "$names" ]; then
		mkdir -p "$OUT/gpu$i"
		CUDA_VISIBLE_DEVICES=$i SUBSET="$names" APPS_JOBS=${APPS_JOBS:-$(( $(nproc) / n > 0 ? $(nproc) / n : 1 ))} \
			CORPORA=$CORPORA APPS_WORK=$WORK/gpu$i OUT=$OUT/gpu$i "$here/apps.sh" >"$OUT/gpu$i.log" 2>&1 &
	fi
	i=$((i + 1))
done <"$OUT/slices.txt"
rc=0
for pid in $(jobs -p); do
	wait "$pid"
	s=$?
	[ $s = 1 ] && rc=1
done
tsvs=$(ls "$OUT"/gpu*/apps.tsv 2>/dev/null)
[ -n "$tsvs" ] || { echo "apps_multi.sh: no slice wrote a table (see $OUT/gpu*.log)"; exit 1; }
python3 "$here/apps_tool.py" table "$OUT/apps.md" $tsvs
echo "apps_multi.sh: $n slices; table in $OUT/apps.md"
exit $rc
