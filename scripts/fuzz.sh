#!/usr/bin/env bash
# Build every libFuzzer target (fuzz/<name>_fuzz.c -> fuzz_<name>) with clang, ASan and UBSan into
# build-fuzz/, then run each for FUZZ_SECONDS (default 30) on a working corpus seeded from
# tests/*/fuzz-seeds/<name>/ (and fuzz/<name>.dict as its dictionary, where there is one).
# Crashing inputs land in build-fuzz/fuzz-artifacts/<name>/; turn
# each into a regression test in that area's tests. Exits non-zero if any target fails to build
# or crashes.
# Usage: scripts/fuzz.sh [NAME...]   (default: every target)   env: FUZZ_SECONDS, CC, CXX
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
export CC=${CC:-clang} CXX=${CXX:-clang++}

if (($#)); then
	names=("$@")
else
	names=()
	for src in fuzz/*_fuzz.c; do
		[ -e "$src" ] || continue
		n=${src##*/}
		names+=("${n%_fuzz.c}")
	done
fi
if ((${#names[@]} == 0)); then
	echo "fuzz.sh: no fuzz targets (fuzz/*_fuzz.c)"
	exit 0
fi

cmake -S . -B build-fuzz -DGPUPROBE_FUZZ=ON -DGPUPROBE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
	{ echo "fuzz.sh: cmake configure failed"; exit 1; }

declare -A result
failed=0
targets=$(cmake --build build-fuzz --target help 2>/dev/null)
for name in "${names[@]}"; do
	if ! grep -q "fuzz_$name\b" <<<"$targets"; then   # e.g. amdgpu_lower without LLVM 19
		echo "fuzz.sh: fuzz_$name is not configured here (its library is not built); skipped"
		result[$name]="skipped (not configured)"
		continue
	fi
	if ! cmake --build build-fuzz --target "fuzz_$name" -j"$(nproc)" >"build-fuzz/fuzz_$name.build.log" 2>&1; then
		echo "fuzz.sh: fuzz_$name does not build (build-fuzz/fuzz_$name.build.log):"
		grep -m5 -E 'error' "build-fuzz/fuzz_$name.build.log"
		result[$name]="BUILD FAILED"
		failed=1
		continue
	fi
	corpus=build-fuzz/fuzz-corpus/$name
	artifacts=build-fuzz/fuzz-artifacts/$name/
	mkdir -p "$corpus" "$artifacts"
	seeds=()
	for d in tests/*/fuzz-seeds/"$name"; do
		[ -d "$d" ] && seeds+=("$d")
	done
	dict=()
	[ -f "fuzz/$name.dict" ] && dict=(-dict="fuzz/$name.dict")
	echo "fuzz.sh: fuzz_$name for ${FUZZ_SECONDS}s (seeds: ${seeds[*]:-none}${dict:+; ${dict[*]}})"
	# New inputs go to the first corpus directory only: the committed seeds stay untouched.
	if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"build-fuzz/bin/fuzz_$name" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=20 \
		-artifact_prefix="$artifacts" "${dict[@]}" -print_final_stats=1 "$corpus" "${seeds[@]}" \
		>"build-fuzz/fuzz_$name.log" 2>&1; then
		result[$name]="ok ($(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "build-fuzz/fuzz_$name.log" | grep -oE '[0-9]+$') runs)"
	else
		echo "fuzz.sh: fuzz_$name FAILED; log build-fuzz/fuzz_$name.log, inputs in $artifacts"
		grep -m10 -E 'ERROR|SUMMARY|runtime error|Test unit written' "build-fuzz/fuzz_$name.log"
		result[$name]="CRASH"
		failed=1
	fi
done
echo
printf '%-20s %s\n' target result
for name in "${names[@]}"; do printf '%-20s %s\n' "$name" "${result[$name]}"; done
exit $failed
