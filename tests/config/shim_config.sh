#!/usr/bin/env bash
# The configuration inside the application (issue 12): the shim parses GPUPROBE_CONFIG at the
# first module load, so a broken or hostile file must leave the application running as it would
# without probes, with one line, fast. Over tests/shim_jit's fake driver, with tests/proc's app
# (it loads a PTX module through the shim and exits 0). A repeated `kernels:` crashed the release
# shim (SIGSEGV); 100,000 nested '[' stalled the first module load 12.8 s.
# usage: shim_config.sh APP SHIM FAKE_DRIVER PTX
set -u
app=$1 shim=$2 fake=$3 ptx=$4
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
# case NAME WANT_LINE: the app with GPUPROBE_CONFIG=$tmp/NAME.yaml exits 0 within 5 s, and its
# stderr has exactly one line starting "gpuprobe: " + WANT_LINE
case_() {
	local name=$1 want=$2 start end rc n
	chmod 600 "$tmp/$name.yaml"
	start=$(date +%s%N)
	env GPUPROBE_REAL_LIBCUDA="$fake" GPUPROBE_CONFIG="$tmp/$name.yaml" GPUPROBE_PROBES= \
		GPUPROBE_CACHE=0 timeout -s KILL 20 "$app" "$shim" "$ptx" plain >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	end=$(date +%s%N)
	n=$(grep -cxF "gpuprobe: $want" "$tmp/$name.err")
	if [ "$rc" = 0 ] && [ "$n" = 1 ] && [ $(((end - start) / 1000000)) -lt 5000 ]; then
		echo "ok   $name: exit 0 in $(((end - start) / 1000000)) ms, one line"
	else
		echo "FAIL $name: exit $rc in $(((end - start) / 1000000)) ms, $n matching lines; stderr:"
		head -c 2000 "$tmp/$name.err"
		fails=$((fails + 1))
	fi
}
printf 'probes:\n  - path: a.bpf.o\n    kernels: [x]\n    kernels: [y, z, w, v]\n' >"$tmp/repeated.yaml"
case_ repeated "$tmp/repeated.yaml:4:5: key 'kernels' repeated (first at line 3, column 5): YAML keys are unique; probes disabled"
printf 'kernels:\n  include: [a]\n  include: [b, c, d, e, f, g, h]\n' >"$tmp/include.yaml"
case_ include "$tmp/include.yaml:3:3: key 'include' repeated (first at line 2, column 3): YAML keys are unique; probes disabled"
head -c 100000 /dev/zero | tr '\0' '[' >"$tmp/deep.yaml"
case_ deep "$tmp/deep.yaml:1:33: nested more than 32 levels deep (the limit for a probe configuration); probes disabled"
truncate -s 100M "$tmp/big.yaml"
case_ big "$tmp/big.yaml: larger than the 1048576-byte limit for a probe configuration; probes disabled"
printf '"\\e]0;owned\\a": 1\n' >"$tmp/escape.yaml"
case_ escape "$tmp/escape.yaml:1:1: unknown section '\\x1b]0;owned\\x07' (expected probes, kernels, maps, output, limits); probes disabled"
[ $fails = 0 ] && echo PASS || { echo "FAIL: $fails case(s)"; exit 1; }
