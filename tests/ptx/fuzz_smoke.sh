#!/usr/bin/env bash
# The PTX fuzz target (fuzz/ptx_fuzz.c), built on its own with clang, libFuzzer, ASan and UBSan
# from the PTX sources only (so another area's half-written code cannot stop it), run over every
# regression input and seed once, then for FUZZ_SECONDS (default 20) from the seeds.
# scripts/fuzz.sh runs the full set. Usage: fuzz_smoke.sh WORKDIR  (exit 77: no clang/libFuzzer)
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
bin=$work/fuzz_ptx
src=(ir.c ir_semantics.c ptx_lex.c ptx_parse.c ptx_print.c)
"$CLANG" -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
	-I"$root" "$root/fuzz/ptx_fuzz.c" "${src[@]/#/$root/ptx-frontend/}" -o "$bin" ||
	{ echo "FAIL: fuzz target does not build"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$bin" "$here"/regressions/* "$here"/fuzz-seeds/ptx/* >"$work/regressions.log" 2>&1 ||
	{ echo "FAIL: a regression or seed input fails:"; grep -E 'ERROR|SUMMARY|Running|differs|parse|fixed' "$work/regressions.log" | tail; exit 1; }
mkdir -p "$work/corpus" "$work/artifacts"
if ! "$bin" -max_total_time="${FUZZ_SECONDS:-20}" -max_len=16384 -rss_limit_mb=2048 -timeout=20 \
	-artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus" "$here/fuzz-seeds/ptx" >"$work/fuzz.log" 2>&1; then
	echo "FAIL: fuzzing found a failing input (in $work/artifacts; add each to tests/ptx/regressions):"
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written|differs|does not parse|fixed point' "$work/fuzz.log" | head
	exit 1
fi
echo "fuzz_ptx: $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work/fuzz.log" | grep -oE '[0-9]+$') runs, no failure"
# Linking two units (fuzz/ptx_link_fuzz.c: the input split at its first NUL): the seeds, whose
# halves seldom parse, and the test's two-unit seed, then FUZZ_SECONDS / 2
link=$work/fuzz_ptx_link
"$CLANG" -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
	-I"$root" "$root/fuzz/ptx_link_fuzz.c" "${src[@]/#/$root/ptx-frontend/}" "$root/ptx-frontend/link.c" \
	"$root"/ptx-frontend/fatbin_*.c "$root/ptx-frontend/module_image.c" -lzstd -llz4 -o "$link" ||
	{ echo "FAIL: the link fuzz target does not build"; exit 1; }
mkdir -p "$work/link-corpus"
if ! "$link" -max_total_time="$(( ${FUZZ_SECONDS:-20} / 2 ))" -max_len=16384 -rss_limit_mb=2048 -timeout=20 \
	-artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/link-corpus" "$here/fuzz-seeds/link" >"$work/link.log" 2>&1; then
	echo "FAIL: link fuzzing found a failing input (in $work/artifacts):"
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written|does not parse|without a message' "$work/link.log" | head
	exit 1
fi
echo "fuzz_ptx_link: $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work/link.log" | grep -oE '[0-9]+$') runs, no failure"
