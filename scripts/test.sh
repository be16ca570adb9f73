#!/usr/bin/env bash
# Run every test: (1) ctest on build/ (GPU tests skip, saying so, where no GPU is present);
# (2) the same tests, less those labelled "slow" or "no_asan" (third-party libraries that do not
# load under ASan), under AddressSanitizer and UndefinedBehaviorSanitizer
# in build-asan/; (3) every libFuzzer target for FUZZ_SECONDS (default 30) under ASan/UBSan.
# Usage: scripts/test.sh [ctest options]      env: GPUPROBE_TEST_STAGES="main asan fuzz"
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d build ] || { echo "test.sh: build/ missing: run scripts/build.sh first" >&2; exit 2; }
stages=${GPUPROBE_TEST_STAGES:-main asan fuzz}
jobs=$(nproc)
status=0
declare -a summary

run_stage() {
	local name=$1; shift
	local start=$SECONDS
	echo "=== test.sh: $name"
	if "$@"; then
		summary+=("$name: passed ($((SECONDS - start)) s)")
	else
		summary+=("$name: FAILED ($((SECONDS - start)) s)")
		status=1
	fi
}

counts=$(mktemp)
trap 'rm -f "$counts"' EXIT
# ctest's "N% tests passed, F tests failed out of T" of each stage, summed in the last line.
tally() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in *"tests failed out of"*) printf '%s\n' "$line" >>"$counts" ;; esac
	done
}

main_tests() {
	(cd build && ctest --output-on-failure -j"$jobs" --timeout 1800 "$@") | tally
	return "${PIPESTATUS[0]}"
}

asan_tests() {
	cmake -S . -B build-asan -DGPUPROBE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null &&
		cmake --build build-asan -j"$jobs" >build-asan.log 2>&1 ||
		{ echo "test.sh: the ASan/UBSan build failed (build-asan.log):"; grep -m20 error build-asan.log; return 1; }
	(cd build-asan && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j"$jobs" -LE 'slow|no_asan' --timeout 900) | tally
	return "${PIPESTATUS[0]}"
}

for s in $stages; do
	case $s in
	main) run_stage "tests (build/)" main_tests "$@" ;;
	asan) run_stage "tests under ASan/UBSan (build-asan/, label slow excluded)" asan_tests ;;
	fuzz) run_stage "fuzzers (${FUZZ_SECONDS:-30} s each, ASan/UBSan)" scripts/fuzz.sh ;;
	*) echo "test.sh: unknown stage '$s'" >&2; exit 2 ;;
	esac
done
echo
printf '%s\n' "${summary[@]}"
# "100% tests passed, 0 tests failed out of 73": sum the failed and total counts of all stages.
read -r total failed < <(awk '{ for (i = 1; i < NF; i++) if ($(i+1) == "tests" && $(i+2) == "failed") f += $i;
	t += $NF } END { print t + 0, f + 0 }' "$counts")
echo "$((total - failed)) passed, $failed failed"
exit $status
