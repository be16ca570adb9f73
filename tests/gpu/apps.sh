#!/bin/bash
# Real programs under probes (issue 11): builds the corpus once, then runs each program, one at a
# time, in every configuration and compares each run with the native one.
#
# Corpus (CORPORA, default $root/.carry/corpora; stage it on the build machine with
# tests/gpu/stage_corpora.sh, then carry .carry/corpora): cuda-samples/ (samples.tsv: build and run
# command and verdict rule per sample), app-regressions/ (HeCBench reproductions: `make ARCH=sm_90`,
# `make run LAUNCHER=...`, pass = PASS printed and no FAIL), probes/*.bpf.o (built by stage_corpora.sh:
# the GPU machine has no clang).
# Configurations, per program: native; shim (LD_LIBRARY_PATH=$BUILD/lib, no probes); then
# `$BUILD/bin/gpuprobe run --json FILE -p PROBE --` with (a) entry_exit_hash (entry+exit thread counts
# per kernel in HASH maps), (b) memcount (every load/store/atomic), (c) bb_insns (instructions per
# kernel, counted at every basic block), (d) block_ring (one ring-buffer event per block), each
# first with empty caches (GPUPROBE_CACHE_DIR and the driver's CUDA_CACHE_PATH: "fresh") and then
# again with what that run cached ("cached"); with SANITIZER=1 also compute-sanitizer memcheck
# (no gpuprobe). Per run: the verdict (the corpus rule), the output compared with native's after
# tests/gpu/apps_mask.sed (timings, rates, dates, addresses masked), whole-run wall time and its
# ratio to native, the first-launch set-up time the shim logs under GPUPROBE_LOG=1 (sum of its
# timed "probes:"/"module N:" lines), and for (a) exits = entries per kernel (from the JSON).
# Output: $OUT/apps.tsv, $OUT/apps.md (paste into bench/RESULTS.md), $OUT/apps-progress.log, and
# $OUT/apps-logs.tgz: the logs (apps/build/, apps/<program>/<config>.{out,diff,json}), which stay
# in $WORK/logs/apps too (APPS_LOGS=DIR: DIR/apps).
#
# usage: BUILD=$PWD/build-gpu tests/gpu/apps.sh   (also from run-all.sh with APPS=1)
# One 10-minute device call, prebuilt here (build machine):
#   SUBSET=quick tests/gpu/stage_corpora.sh && APPS_BUILD_ONLY=1 SUBSET=quick \
#     APPS_WORK=$PWD/.carry/apps-work BUILD=$PWD/build-gpu tests/gpu/apps.sh
#   then on the GPU machine, carrying build-gpu, .carry/corpora and .carry/apps-work:
#   BUILD=$PWD/build-gpu APPS_WORK=$PWD/.carry/apps-work SUBSET=quick MAX_SECONDS=480 tests/gpu/apps.sh
# options (environment):
#   SUBSET=N | A:B | "name,glob*" | quick | regressions   part of the corpus: the first N, a
#                     slice, names, presets (apps_tool.py PRESETS; quick fits one 10-minute call)
#   MAX_SECONDS=S     overall budget: no program starts after S seconds (build included); the
#                     running one is cut short ("not run"); the table is still written (0: none)
#   APPS_TIMEOUT=120  per-run limit (s); after native, each run gets min(APPS_TIMEOUT,
#                     max(APPS_MIN_TIMEOUT=60, APPS_TIMEOUT_FACTOR=10 x native))
#   APPS_CONFIGS="native shim a-fresh ..."   which configurations (native is always run first)
#   SANITIZER=1       add compute-sanitizer memcheck (config memcheck)
#   APPS_SLOW=1       include the five tensor-core GEMMs (minutes of host-side checking each)
#   APPS_JOBS=N       parallel builds (default: nproc); APPS_REBUILD=1 rebuilds what was built
#   APPS_WORK=DIR     builds and caches (default $root/build-apps-work: kept between calls on a
#                     warm machine, so a second call does not build again)
#   APPS_NATIVE_FAIL=run   also run the other configurations of programs that fail natively
#                     (default: skip them, as they are not counted)
#   APPS_BUILD_ONLY=1 build and stop (no GPU needed; .o files deleted): prebuild a SUBSET on the
#                     build machine into APPS_WORK=$PWD/.carry/apps-work, carry .carry/apps-work
#                     (and .carry/corpora), and pass the same APPS_WORK on the GPU machine
#   APPS_DRY=1        no GPU needed: the same pipeline on whatever CORPORA holds (the ctest gives
#                     it fake programs); device "dry run"
#   APPS_WARMUP=0     no untimed native run before the timed ones (default: one, see below)
# Exit 77 (SKIP) without a GPU or without the staged corpus; 1 when a program that passes
# natively fails, differs, or breaks a probe check in some configuration; 0 otherwise.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/gpu
tool=$here/apps_tool.py
if [ -z "${BUILD:-}" ]; then
	for b in "$root/build" "$root"/build-*; do
		[ -x "$b/bin/gpuprobe" ] && [ -e "$b/lib/libcuda.so.1" ] && { BUILD=$b; break; }
	done
fi
BUILD=$(realpath -m "${BUILD:-$root/build}")   # absolute: runs start in each program's folder
CORPORA=$(realpath -m "${CORPORA:-$root/.carry/corpora}")
OUT=${OUT:-$(mktemp -d)}
WORK=$(realpath -m "${APPS_WORK:-$root/build-apps-work}")
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
DRY=${APPS_DRY:-0}
T_MAX=${APPS_TIMEOUT:-120}
T_MIN=${APPS_MIN_TIMEOUT:-60}
T_FACTOR=${APPS_TIMEOUT_FACTOR:-10}
MAX_SECONDS=${MAX_SECONDS:-0}
JOBS=${APPS_JOBS:-$(nproc)}
CONFIGS=${APPS_CONFIGS:-shim a-fresh a-cached b-fresh b-cached c-fresh c-cached d-fresh d-cached}
[ "${SANITIZER:-0}" = 1 ] && CONFIGS="$CONFIGS memcheck"
CONFIGS=$(echo native $(echo " $CONFIGS " | sed 's/ native / /g'))   # native first, once
for c in $CONFIGS; do
	case $c in native | shim | memcheck | [abcd]-fresh | [abcd]-cached) ;;
	*) echo "apps.sh: unknown configuration '$c' in APPS_CONFIGS"; exit 2 ;;
	esac
done
us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }   # microseconds now (no python: runs are many)
T0=$(us)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# Logs (one folder per program, build/) go to APPS_LOGS/apps, default $WORK/logs/apps, not under
# $OUT: the device tool brings back at most 8 files from $OUT, so $OUT holds only apps.tsv (written
# row by row, so it survives a kill), apps.md, apps-device.txt, apps-progress.log and apps-logs.tgz.
L=$(realpath -m "${APPS_LOGS:-$WORK/logs}")/apps
rm -rf "$L"
mkdir -p "$L/build"
: >"$OUT/apps-progress.log"
progress() { echo "$*" | tee -a "$L/progress.log" "$OUT/apps-progress.log"; }

# Native runs must not meet the shim: no $BUILD/lib on LD_LIBRARY_PATH, no probe settings from the
# caller (GPUPROBE_INLINE, _PRECOMPILE, _REAL_LIBCUDA and the like are kept, and named in the table).
LD_LIBRARY_PATH=$(echo "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -vxF -e "$BUILD/lib" -e "$(realpath -m "$BUILD/lib")" | paste -sd:)
# The toolkit's libraries (NVRTC, nvJitLink, cuBLAS ... that samples link) for every run alike.
for c in "$(dirname "$NVCC")/../lib64" "$(dirname "$NVCC")/../targets/x86_64-linux/lib"; do
	[ -d "$c" ] && { LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(realpath "$c"); break; }
done
[ -n "$LD_LIBRARY_PATH" ] && export LD_LIBRARY_PATH || unset LD_LIBRARY_PATH
unset GPUPROBE_PROBES GPUPROBE_CONFIG GPUPROBE_JSON GPUPROBE_DUMP_DIR GPUPROBE_SHIM GPUPROBE_INTERVAL LD_AUDIT
genv=$(env | grep '^GPUPROBE_' | sort | tr '\n' ' ')

# ---- inputs ---------------------------------------------------------------------------------
GP=$BUILD/bin/gpuprobe
if [ ! -x "$GP" ] || [ ! -e "$BUILD/lib/libcuda.so.1" ]; then
	echo "apps.sh: no $GP or $BUILD/lib/libcuda.so.1 (set BUILD to a tests/gpu/prepare.sh build)"
	exit 2
fi
if [ ! -d "$CORPORA/cuda-samples" ] && [ ! -d "$CORPORA/app-regressions" ]; then
	echo "apps.sh: SKIP: no corpus in CORPORA=$CORPORA (on the build machine: tests/gpu/stage_corpora.sh, then carry .carry/corpora)"
	exit 77
fi
declare -A PROBE=([a]=entry_exit_hash [b]=memcount [c]=bb_insns [d]=block_ring)
for k in a b c d; do
	case " $CONFIGS " in *" $k-"*)
		f=$CORPORA/probes/${PROBE[$k]}.bpf.o
		[ -f "$f" ] || { echo "apps.sh: SKIP: no $f (tests/gpu/stage_corpora.sh builds the probes)"; exit 77; }
	esac
done
command -v python3 >/dev/null || { echo "apps.sh: SKIP: no python3"; exit 77; }
echo "apps.sh: BUILD=$BUILD CORPORA=$CORPORA OUT=$OUT WORK=$WORK"
python3 "$tool" list "$CORPORA" "${SUBSET:-}" $([ "${APPS_SLOW:-0}" = 1 ] && echo --slow) >"$L/programs.tsv" || exit 2
nprog=$(wc -l <"$L/programs.tsv")
echo "apps.sh: $nprog programs; configurations: $CONFIGS"

BUILD_ONLY=${APPS_BUILD_ONLY:-0}
if [ "$BUILD_ONLY" = 1 ]; then
	[ -x "$NVCC" ] || { echo "apps.sh: no nvcc at $NVCC (set NVCC)"; exit 2; }
	echo "build only (APPS_BUILD_ONLY=1), $(uname -n)" >"$L/device.txt"
elif [ "$DRY" = 1 ]; then
	echo "dry run (APPS_DRY=1, no GPU), $(uname -n)" >"$L/device.txt"
else
	if ! nvidia-smi -L >/dev/null 2>&1; then
		echo "apps.sh: SKIP: no NVIDIA GPU or driver here (nvidia-smi -L failed); inputs found: $GP, $nprog programs in $CORPORA, probes in $CORPORA/probes (APPS_DRY=1 runs the pipeline without a GPU)"
		exit 77
	fi
	[ -x "$NVCC" ] || { echo "apps.sh: no nvcc at $NVCC (set NVCC)"; exit 2; }
	{
		printf '%s, driver %s' "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
			"$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
		printf ', CUDA %s, %s UTC' "$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')" \
			"$(date -u '+%Y-%m-%d %H:%M')"
		# the tree that was built: HEAD, and whether it had changes not committed yet
		printf ', gpuprobe %s%s%s\n' "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" \
			"$(git -C "$root" diff --quiet HEAD -- 2>/dev/null || echo ' with uncommitted changes')" \
			"${genv:+ (environment: $genv)}"
	} >"$L/device.txt"
	nvidia-smi >"$L/nvidia-smi.txt" 2>&1
fi
cat "$L/device.txt"
export NVCC COMMON=$CORPORA/cuda-samples/Common

# ---- build: every selected program once, in parallel ----------------------------------------
# build_one NAME: a writable copy of its source in $WORK/progs/NAME, built there by its build
# command (programs.tsv); the stamp .gp-built says it is done (kept between calls on a warm
# machine; APPS_REBUILD=1 redoes it). Status line in $L/build/NAME.status.
build_one() {
	local name=$1 d=$WORK/progs/$1 log=$L/build/$1.log t0=${EPOCHREALTIME/./} rc src cmd s
	src=$(awk -F'\t' -v n="$name" '$1 == n {print $3; exit}' "$L/programs.tsv")
	cmd=$(awk -F'\t' -v n="$name" '$1 == n {print $4; exit}' "$L/programs.tsv")
	if [ "${APPS_REBUILD:-0}" != 1 ] && [ -f "$d/.gp-built" ]; then
		echo "$name	ok	0	(built before)" >"$L/build/$name.status"
		return 0
	fi
	rm -rf "$d" && mkdir -p "$(dirname "$d")" && cp -r "$src" "$d" || { echo "$name	failed	0	copy" >"$L/build/$name.status"; return 0; }
	(cd "$d" && timeout "${APPS_BUILD_TIMEOUT:-900}" bash -c "$cmd") >"$log" 2>&1
	rc=$?
	s=$(( (10#${EPOCHREALTIME/./} - 10#$t0) / 100000 )); s=$((s / 10)).$((s % 10))
	if [ $rc = 0 ]; then
		echo "$cmd" >"$d/.gp-built"
		echo "$name	ok	$s	" >"$L/build/$name.status"
	else
		echo "$name	failed	$s	exit $rc: $(tail -n 3 "$log" | tr '\t\n' '  ' | cut -c1-200)" >"$L/build/$name.status"
	fi
}
export -f build_one
export WORK L
mkdir -p "$WORK/progs"
progress "== build: $nprog programs, $JOBS at a time ($(date -u +%T))"
tb=$(us)
rm -f "$L"/build/*.status
cut -f1 "$L/programs.tsv" | xargs -P "$JOBS" -n 1 bash -c 'build_one "$1"' _
cat "$L"/build/*.status 2>/dev/null | sort >"$L/build.tsv"
nfail=$(awk -F'\t' '$2 != "ok"' "$L/build.tsv" | wc -l)
progress "== build done in $((($(us) - tb) / 1000000)) s: $((nprog - nfail)) built, $nfail failed$(awk -F'\t' '$2 != "ok" {printf " %s", $1}' "$L/build.tsv")"

if [ "$BUILD_ONLY" = 1 ]; then   # prebuilt here, carried: object files are not needed to run
	find "$WORK/progs" -name '*.o' -delete
	du -sh "$WORK/progs"
	echo "apps.sh: built into $WORK/progs; carry it and set APPS_WORK to its folder on the GPU machine"
	[ "$nfail" = 0 ]
	exit
fi

# ---- runs -----------------------------------------------------------------------------------
elapsed() { echo $((($(us) - T0) / 1000000)); }
TSV=$OUT/apps.tsv
printf 'program\tconfig\tverdict\tsame_as_native\twall_s\tratio\tfirst_launch_ms\tcheck\tnotes\n' >"$TSV"
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$TSV"; }
# keep a log small: the first and last 8 KiB
trim() { local f=$1; [ -f "$f" ] || return 0; local n=$(stat -c %s "$f"); [ "$n" -le 16384 ] && return 0
	{ head -c 8192 "$f"; printf '\n[... %d bytes left out ...]\n' $((n - 16384)); tail -c 8192 "$f"; } >"$f.t" && mv "$f.t" "$f"; }
SHIMLIB="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
failures=0
stopped=0
while IFS=$'\t' read -r -u 3 name kind src bcmd rcmd rule; do
	d=$WORK/progs/$name
	P=$L/$name
	mkdir -p "$P"
	if ! grep -q "^$name	ok	" "$L/build.tsv"; then
		row "$name" native "BUILD FAILED" - "" "" "" "-" "$(grep "^$name	" "$L/build.tsv" | cut -f4 | head -1)"
		progress "$name: BUILD FAILED (see apps/build/$name.log)"
		continue
	fi
	if [ "$MAX_SECONDS" != 0 ] && [ "$(elapsed)" -ge "$MAX_SECONDS" ]; then
		[ $stopped = 0 ] && progress "== budget: MAX_SECONDS=$MAX_SECONDS spent; no further program starts"
		stopped=1
		continue
	fi
	native_wall="" native_ok=0 native_same=yes warm_rc=0
	# One untimed native run first (APPS_WARMUP=0: none): the page cache holds the program and its
	# libraries and the driver's JIT cache its PTX before anything is timed, and its output, masked,
	# must equal the timed native run's (else apps_mask.sed misses something this program prints).
	if [ "${APPS_WARMUP:-1}" != 0 ]; then
		mkdir -p "$WORK/cache/$name/base/cuda"
		(cd "$d" && GP_L="" CUDA_CACHE_PATH=$WORK/cache/$name/base/cuda exec timeout -k 10 "$T_MAX" \
			bash -c "$rcmd") >"$P/warmup.out" 2>&1 </dev/null
		warm_rc=$?
	fi
	for cfg in $CONFIGS; do
		now=$(elapsed)
		if [ "$cfg" != native ] && [ "$MAX_SECONDS" != 0 ] && [ "$now" -ge "$MAX_SECONDS" ]; then
			row "$name" "$cfg" "not run" - "" "" "" "-" "budget (MAX_SECONDS) spent"
			continue
		fi
		if [ "$cfg" = native ] && { [ $warm_rc = 124 ] || [ $warm_rc = 137 ]; }; then
			row "$name" native TIMEOUT - "" "" "" "-" "the untimed first run took over ${T_MAX} s"
			progress "$name: TIMEOUT natively (first, untimed run over ${T_MAX} s)"
			continue
		fi
		if [ "$cfg" != native ] && [ $native_ok = 0 ] && [ "${APPS_NATIVE_FAIL:-skip}" != run ]; then
			row "$name" "$cfg" "not run" - "" "" "" "-" "fails natively"
			continue
		fi
		# per-run limit
		t=$T_MAX
		if [ "$cfg" != native ] && [ -n "$native_wall" ]; then
			t=$(awk -v m="$T_MAX" -v n="$T_MIN" -v f="$T_FACTOR" -v w="$native_wall" \
				'BEGIN {t = f * w; if (t < n) t = n; if (t > m) t = m; printf "%d", t}')
		fi
		if [ "$MAX_SECONDS" != 0 ]; then
			left=$((MAX_SECONDS + ${APPS_GRACE:-30} - now))
			[ "$left" -lt "$t" ] && t=$((left > 5 ? left : 5))
		fi
		probe=${cfg%%-*} pass=${cfg#*-}
		cache=$WORK/cache/$name/$cfg
		json=""
		case $cfg in
		native) launcher="" cache=$WORK/cache/$name/base ;;
		shim) launcher="env LD_LIBRARY_PATH=$SHIMLIB" cache=$WORK/cache/$name/base ;;
		memcheck) launcher="$CS --tool memcheck" cache=$WORK/cache/$name/base ;;
		[abcd]-fresh | [abcd]-cached)
			cache=$WORK/cache/$name/$probe
			json=$P/$cfg.json
			rm -f "$json"
			launcher="env LD_LIBRARY_PATH=$SHIMLIB $GP run --json $json -p $CORPORA/probes/${PROBE[$probe]}.bpf.o --" ;;
		*) echo "apps.sh: unknown configuration $cfg"; exit 2 ;;
		esac
		[ "$pass" = fresh ] && rm -rf "$cache"
		mkdir -p "$cache/cuda" "$cache/gpuprobe"
		o=$P/$cfg.out
		if [ "$pass" = cached ] && ! [[ " $CONFIGS " == *" $probe-fresh "* ]]; then
			# a cached run without its fresh run: an untimed run fills the caches first (a
			# "cached" run on empty caches was a fresh one, session 4's first corpus runs)
			(cd "$d" && GP_L=$launcher CUDA_CACHE_PATH=$cache/cuda GPUPROBE_CACHE_DIR=$cache/gpuprobe \
				exec timeout -k 10 "$t" bash -c "$rcmd") >"$P/$cfg.prime.out" 2>&1 </dev/null
		fi
		t1=$(us)
		(cd "$d" && GP_L=$launcher CUDA_CACHE_PATH=$cache/cuda GPUPROBE_CACHE_DIR=$cache/gpuprobe \
			GPUPROBE_LOG=1 exec timeout -k 10 "$t" bash -c "$rcmd") >"$o" 2>&1 </dev/null
		rc=$?
		wall=$(awk -v a="$t1" -v b="$(us)" 'BEGIN {printf "%.3f", (b - a) / 1e6}')
		[ $rc = 124 ] && echo "apps.sh: killed after the ${t} s limit" >>"$o"
		IFS=$'\037' read -r verdict same fl check notes < <(python3 "$tool" analyze --cfg "$cfg" \
			--rule "$rule" --rc $rc --out "$o" --diff "$P/$cfg.diff" \
			--native "$([ "$cfg" = native ] && echo "$P/warmup.out" || echo "$P/native.out")" \
			--json "$json")
		ratio=""
		if [ "$cfg" = native ]; then
			native_wall=$wall native_same=$same
			[ "$verdict" = PASS ] && native_ok=1
		elif [ -n "$native_wall" ]; then
			ratio=$(awk -v a="$wall" -v b="$native_wall" 'BEGIN {printf "%.3f", a / (b > 0.001 ? b : 0.001)}')
		fi
		row "$name" "$cfg" "$verdict" "$same" "$wall" "$ratio" "$fl" "$check" "$notes"
		progress "$(printf '%-30s %-9s %-22s same=%-3s %7s s %7s x  setup %s ms  %s  %s' "$name" "$cfg" \
			"$verdict" "$same" "$wall" "${ratio:--}" "$fl" "$check" "${notes:0:120}")"
		if [ $native_ok = 1 ] && [ "$cfg" != native ] && [ "$cfg" != memcheck ]; then
			# (an output that differs counts only where native's own two runs agreed)
			if [ "$verdict" != PASS ] || { [ "$same" = no ] && [ "$native_same" != no ]; } ||
				[[ "$check" == EXITS* ]]; then
				failures=$((failures + 1))
			fi
		fi
		# (d)'s JSON holds one line per block: keep the counts (in the table), not the file
		[ "$probe" = d ] && rm -f "$json"
		# native's output stays whole until every configuration was compared with it (trimmed
		# before, a program printing over 16 KiB, jitLto's 4096 lines, differed in every one)
		[ "$cfg" = native ] || trim "$o"
		[ "$cfg" = native ] && trim "$P/warmup.out"
		[ -n "$json" ] && trim "$json"
	done
	trim "$P/native.out"
	# the caches of the probe runs are done with (fresh ones are made anew); native's JIT cache stays
	[ "${APPS_KEEP_CACHE:-0}" = 1 ] || rm -rf "$WORK/cache/$name/"[abcd]
done 3<"$L/programs.tsv"

# ---- table ----------------------------------------------------------------------------------
echo
python3 "$tool" table "$OUT/apps.md" "$TSV" --device "$L/device.txt"   # prints the summary; the matrix is in apps.md
cp "$L/device.txt" "$OUT/apps-device.txt"
tar -C "$(dirname "$L")" -czf "$OUT/apps-logs.tgz" apps
progress "logs: $(du -sh "$L" | cut -f1) in $L, $(du -h "$OUT/apps-logs.tgz" | cut -f1) in apps-logs.tgz"
echo "apps.sh: $(elapsed) s; $OUT/apps.tsv, $OUT/apps.md, $OUT/apps-logs.tgz ($(du -h "$OUT/apps-logs.tgz" | cut -f1))"
if [ $failures != 0 ]; then
	echo "apps.sh: FAIL: $failures runs of programs that pass natively failed, differed from native or broke a probe check"
	exit 1
fi
echo "apps.sh: PASS: every run of a program that passes natively passed, with native's output"
exit 0
