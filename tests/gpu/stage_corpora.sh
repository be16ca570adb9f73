#!/bin/bash
# Build-machine step of tests/gpu/apps.sh: copies the corpora (../shared does not travel to the GPU
# machine) into DEST (default $root/.carry/corpora, git-ignored) and builds the four corpus probes
# into DEST/probes/ with clang (the GPU machine has none), each checked by `gpuprobe verify` when a
# build is at hand (BUILD, default build-gpu):
#   entry_exit_hash.bpf.o  (a) from app-regressions/probes/
#   memcount.bpf.o         (b) from app-regressions/probes/
#   bb_insns.bpf.o         (c) tests/gpu/apps_probes/bb_insns.bpf.c
#   block_ring.bpf.o       (d) tests/gpu/apps_probes/block_ring.bpf.c
# usage: tests/gpu/stage_corpora.sh [DEST]   (SRC: the corpora, default $root/../shared/corpora;
#        SUBSET as tests/gpu/apps.sh's: only those samples, to carry less; app-regressions whole)
# then carry .carry/corpora (about 26 MB) with the build: see tests/gpu/apps.sh.
# Exit 77 (SKIP) where the corpora or clang are absent (the GPU machine, under run-all.sh).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${SRC:-$root/../shared/corpora}
[ -d /work/shared/corpora ] && [ ! -d "$SRC" ] && SRC=/work/shared/corpora
DEST=$(realpath -m "${1:-$root/.carry/corpora}")
if [ ! -d "$SRC/cuda-samples" ] || [ ! -d "$SRC/app-regressions" ]; then
	echo "stage_corpora.sh: SKIP: no corpora in $SRC (build-machine step; set SRC)"
	exit 77
fi
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
[ -n "$CLANG" ] || { echo "stage_corpora.sh: SKIP: no clang (build-machine step)"; exit 77; }
mkdir -p "$DEST"
for c in cuda-samples app-regressions; do
	rm -rf "${DEST:?}/$c"
	if [ -n "${SUBSET:-}" ] && [ $c = cuda-samples ]; then   # only the samples SUBSET names
		mkdir -p "$DEST/$c/samples"
		cp -r "$SRC/$c/Common" "$SRC/$c/README.md" "$SRC/$c/LICENSE" "$DEST/$c/"
		for n in $(python3 "$root/tests/gpu/apps_tool.py" list "$SRC" "$SUBSET" --slow | awk -F'\t' '$2 == "sample" {print $1}'); do
			cp -r "$SRC/$c/samples/$n" "$DEST/$c/samples/"
		done
		awk -F'\t' -v d="$DEST/$c/samples" 'NR == 1 || system("test -d \"" d "/" $1 "\"") == 0' \
			"$SRC/$c/samples.tsv" >"$DEST/$c/samples.tsv"
	else
		cp -r "$SRC/$c" "$DEST/$c"
	fi
done
mkdir -p "$DEST/probes"
BUILD=${BUILD:-$root/build-gpu}
for p in "$SRC/app-regressions/probes/entry_exit_hash.bpf.c" "$SRC/app-regressions/probes/memcount.bpf.c" \
	"$root/tests/gpu/apps_probes/bb_insns.bpf.c" "$root/tests/gpu/apps_probes/block_ring.bpf.c"; do
	o=$DEST/probes/$(basename "$p" .c).o
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" -c "$p" -o "$o"
	if [ -x "$BUILD/bin/gpuprobe" ]; then
		"$BUILD/bin/gpuprobe" verify "$o" | sed "s|^|$(basename "$o"): |"
	fi
done
du -sh "$DEST"
echo "stage_corpora.sh: staged in $DEST; carry $(realpath -m --relative-to="$root" "$DEST") beside the build, then on the GPU machine:"
echo "  BUILD=\$PWD/build-gpu tests/gpu/apps.sh      (options: SUBSET, MAX_SECONDS, SANITIZER=1; see its header)"
