#!/usr/bin/env bash
# Device printf through SPIR-V: nvcc's vprintf calls (data/printf.case) print on PoCL what CUDA
# prints, with every conversion (%d %s %f %lld %c %p).
# usage: printf.sh SPIRV_CONFORMANCE DATA_DIR
set -u
out=$("$1" "$2/printf.case" 2>/dev/null)
rc=$?
[ $rc -eq 77 ] && { echo "$out"; exit 77; }
fail=0
for t in 0 1; do
	if printf '%s\n' "$out" | grep -q "^thread $t of hi: n=5 d=2.500000 15 x lit 0x[0-9a-f]*$"; then
		echo "PASS thread $t printed"
	else
		echo "FAIL thread $t: no line 'thread $t of hi: n=5 d=2.500000 15 x lit 0x...' in:"; printf '%s\n' "$out"; fail=1
	fi
done
exit $fail
