#!/bin/bash
# Runs every GPU test script tests/gpu/*.sh (except this one) on the GPU machine, each with its
# output in $OUT/<name>.out, continuing past failures, and prints a PASS/FAIL/SKIP table.
# Each script builds or finds what it needs (see its header); exit 77 from a script is SKIP.
# apps.sh (the real-program corpus, many minutes) runs only with APPS=1; *_test.sh are ctests.
# usage: tests/gpu/run-all.sh [NAME...]   (OUT defaults to a fresh temporary directory)
#   NAME...: only these scripts (e.g. `aggregate jit_ml`), in the order given; a name with no
#   tests/gpu/NAME.sh is an error (exit 2). Without names, every script in name order.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
export OUT
mkdir -p "$OUT"
names=() results=()
failed=0
scripts=()
if [ $# -gt 0 ]; then
	for n in "$@"; do
		n=${n%.sh}
		[ -f "$dir/$n.sh" ] && [ "$n" != run-all ] ||
			{ echo "run-all.sh: no GPU test script tests/gpu/$n.sh"; exit 2; }
		scripts+=("$dir/$n.sh")
	done
else
	scripts=("$dir"/*.sh)
fi
for s in "${scripts[@]}"; do
	name=$(basename "$s" .sh)
	[ "$name" = run-all ] && continue
	case $name in *_test) continue ;; esac   # ctests of the build machine (tests/gpu/CMakeLists.txt)
	if [ "$name" = apps ] && [ "${APPS:-0}" != 1 ] && [ $# -eq 0 ]; then   # the corpus: minutes; run it apart
		names+=("$name") results+=("SKIP (APPS=1 runs it here; or tests/gpu/apps.sh alone)")
		continue
	fi
	echo "=== $name"
	start=$(date +%s)
	mkdir -p "$OUT/$name"
	OUT="$OUT/$name" bash "$s" >"$OUT/$name.out" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	tail -n 20 "$OUT/$name.out"
	case $rc in
	0) r=PASS ;;
	77) r=SKIP ;;
	*) r="FAIL (exit $rc)"; failed=1 ;;
	esac
	names+=("$name") results+=("$r ${secs}s")
done
echo
printf '%-24s %s\n' TEST RESULT
for i in "${!names[@]}"; do printf '%-24s %s\n' "${names[$i]}" "${results[$i]}"; done | tee "$OUT/summary.txt"
exit $failed
