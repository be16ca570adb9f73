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
mkdir -p "$work/artifacts"
# fuzz NAME BIN SEEDS SECONDS: fuzz from the seeds; exit 1 with the failure's lines
fuzz() {
	local name=$1 bin=$2 seeds=$3 secs=$4
	mkdir -p "$work/$name-corpus"
	if ! "$bin" -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048 -timeout=20 \
		-artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/$name-corpus" "$seeds" >"$work/$name.log" 2>&1; then
		echo "FAIL: $name found a failing input (in $work/artifacts; add each to tests/ptx/regressions):"
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written|differs|does not parse|fixed point|without a message' \
			"$work/$name.log" | head
		exit 1
	fi
	echo "$name: $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work/$name.log" | grep -oE '[0-9]+$') runs, no failure"
}
fuzz fuzz_ptx "$bin" "$here/fuzz-seeds/ptx" "${FUZZ_SECONDS:-20}"
# Linking two units (fuzz/ptx_link_fuzz.c: the input split at its first NUL): from the two-unit
# seed, for FUZZ_SECONDS / 2
link=$work/fuzz_ptx_link
"$CLANG" -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
	-I"$root" "$root/fuzz/ptx_link_fuzz.c" "${src[@]/#/$root/ptx-frontend/}" "$root/ptx-frontend/link.c" \
	"$root"/ptx-frontend/fatbin_*.c "$root/ptx-frontend/module_image.c" -lzstd -llz4 -o "$link" ||
	{ echo "FAIL: the link fuzz target does not build"; exit 1; }
fuzz fuzz_ptx_link "$link" "$here/fuzz-seeds/ptx_link" "$(( ${FUZZ_SECONDS:-20} / 2 ))"
