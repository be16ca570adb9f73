#!/usr/bin/env bash
# The fatbin fuzz target, built on its own (clang, libFuzzer, ASan, UBSan: only the fatbin sources,
# so another area's half-written code cannot stop it), run over every regression input once and
# then for FUZZ_SECONDS (default 20) from the committed seeds. scripts/fuzz.sh runs the full set.
# Usage: fuzz_smoke.sh WORKDIR    (exit 77: no clang with libFuzzer, skipped)
set -uo pipefail
work=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CLANG=${FUZZ_CC:-clang}
mkdir -p "$work"
if ! command -v "$CLANG" >/dev/null ||
	! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
		"$CLANG" -x c -fsanitize=fuzzer - -o "$work/probe" 2>/dev/null; then
	echo "SKIP: no clang with libFuzzer ($CLANG)"
	exit 77
fi
bin=$work/fuzz_fatbin
"$CLANG" -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
	-I"$root" -I"$root/include" "$root/fuzz/fatbin_fuzz.c" "$root"/ptx-frontend/fatbin_*.c \
	"$root/ptx-frontend/module_image.c" -lzstd -llz4 -o "$bin" || { echo "FAIL: fuzz target does not build"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$bin" "$here"/regressions/* "$here"/fuzz-seeds/fatbin/* >"$work/regressions.log" 2>&1 ||
	{ echo "FAIL: a regression or seed input crashes:"; grep -E 'ERROR|SUMMARY|Running' "$work/regressions.log" | tail; exit 1; }
mkdir -p "$work/corpus" "$work/artifacts"
if ! "$bin" -max_total_time="${FUZZ_SECONDS:-20}" -rss_limit_mb=2048 -timeout=20 -artifact_prefix="$work/artifacts/" \
	-print_final_stats=1 "$work/corpus" "$here/fuzz-seeds/fatbin" >"$work/fuzz.log" 2>&1; then
	echo "FAIL: fuzzing found a crash (inputs in $work/artifacts; add each to tests/fatbin/regressions):"
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$work/fuzz.log" | head
	exit 1
fi
echo "fuzz_fatbin: $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work/fuzz.log" | grep -oE '[0-9]+$') runs, no crash"
