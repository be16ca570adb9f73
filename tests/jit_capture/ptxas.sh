#!/usr/bin/env bash
# gpuprobe-ptxas (tools/ptxas_wrapper.c) against the real ptxas, on every PTX file of the test
# tree: the same cubin byte for byte, the same exit status, stdout and stderr (a bad PTX included),
# and, for each successful compile, a record in the cache (0600, in a 0700 directory) holding the
# input PTX and the options that decide code, keyed by the cubin's SHA-256.
# usage: ptxas.sh GPUPROBE_PTXAS REAL_PTXAS SOURCE_DIR
set -u
wrap=$1 real=$2 src=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0 n=0 recs=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }
export GPUPROBE_CACHE_DIR=$tmp/cache GPUPROBE_REAL_PTXAS=$real
unset GPUPROBE_LOG

# compare NAME PTX ARGS...: both compilers in directories of their own, same relative names
compare() {
	local name=$1 ptx=$2
	shift 2
	mkdir -p "$tmp/r/$name" "$tmp/w/$name"
	cp "$ptx" "$tmp/r/$name/in.ptx"
	cp "$ptx" "$tmp/w/$name/in.ptx"
	(cd "$tmp/r/$name" && "$real" "$@" in.ptx -o out.cubin >out.txt 2>err.txt; echo $? >rc)
	(cd "$tmp/w/$name" && "$wrap" "$@" in.ptx -o out.cubin >out.txt 2>err.txt; echo $? >rc)
	local same=1
	# -v prints each compile's time: the one thing two runs may not share
	for f in rc out.txt err.txt; do
		cmp -s <(sed -E 's/Compile time = [0-9.]+ ms/Compile time = T ms/' "$tmp/r/$name/$f") \
			<(sed -E 's/Compile time = [0-9.]+ ms/Compile time = T ms/' "$tmp/w/$name/$f") ||
			{ same=0; echo "--- $name: $f differs"; diff "$tmp/r/$name/$f" "$tmp/w/$name/$f" | head -5; }
	done
	if [ -e "$tmp/r/$name/out.cubin" ] || [ -e "$tmp/w/$name/out.cubin" ]; then
		cmp -s "$tmp/r/$name/out.cubin" "$tmp/w/$name/out.cubin" || { same=0; echo "--- $name: cubins differ"; }
	fi
	n=$((n + 1))
	[ $same = 1 ] || bad "$name: gpuprobe-ptxas differs from ptxas"
	if [ "$(cat "$tmp/w/$name/rc")" = 0 ]; then
		local key rec
		key=$(sha256sum "$tmp/w/$name/out.cubin" | cut -c1-64)
		rec=$GPUPROBE_CACHE_DIR/$key.jitptx
		if [ -f "$rec" ] && cmp -s <(sed '1,/^$/d' "$rec") "$ptx"; then
			recs=$((recs + 1))
		else
			# the recorded PTX is the input less trailing NULs
			if [ -f "$rec" ] && cmp -s <(sed '1,/^$/d' "$rec") <(tr -d '\000' <"$ptx"); then
				recs=$((recs + 1))
			else
				bad "$name: no record of its PTX under the cubin's SHA-256 ($rec)"
			fi
		fi
	fi
}

ncompiled=0
while IFS= read -r f; do
	name=$(echo "${f#$src/}" | tr '/' '_')
	target=$(grep -a -m1 -oE '^[[:space:]]*\.target[[:space:]]+sm_[0-9]+[af]?' "$f" | grep -oE 'sm_[0-9]+[af]?')
	[ -n "$target" ] || target=sm_90
	compare "$name" "$f" -arch="$target"
	[ "$(cat "$tmp/w/$name/rc")" = 0 ] && ncompiled=$((ncompiled + 1))
done < <(find "$src/tests" -name '*.ptx' -not -path '*/build*' | sort)
echo "compared $n PTX files ($ncompiled compile), $recs records"
[ "$ncompiled" -ge 10 ] && ok "at least 10 of the tree's PTX files compile" || bad "only $ncompiled compiled"
check "one record per successful compile" "$ncompiled" "$recs"

# Options: the spellings Triton and XLA use, recorded as fields.
m=$src/tests/shim_lazy/module.ptx
compare triton "$m" -lineinfo -v --fmad=true --gpu-name sm_90a -O3 --maxrregcount 64
key=$(sha256sum "$tmp/w/triton/out.cubin" | cut -c1-64)
check "triton-style line: the record's fields" "source ptxas
arch sm_90a
opt 3
maxrregcount 64
lineinfo 1
debug 0
relocatable 0
options -lineinfo -v --fmad=true --gpu-name sm_90a -O3 --maxrregcount 64 in.ptx -o out.cubin" \
	"$(sed -n '2,9p' "$GPUPROBE_CACHE_DIR/$key.jitptx")"
compare xla "$m" --warn-on-spills -arch=sm_90 -O2 -maxrregcount=32
key=$(sha256sum "$tmp/w/xla/out.cubin" | cut -c1-64)
check "xla-style line: -arch=, -O2, -maxrregcount=" "arch sm_90
opt 2
maxrregcount 32" "$(sed -n '3,5p' "$GPUPROBE_CACHE_DIR/$key.jitptx")"
check "cache directory 0700" 700 "$(stat -c %a "$GPUPROBE_CACHE_DIR")"
check "records 0600" 600 "$(stat -c %a "$GPUPROBE_CACHE_DIR/$key.jitptx")"

# A bad PTX: the same status and messages, no record.
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n' >"$tmp/bad.ptx"
before=$(ls "$GPUPROBE_CACHE_DIR" | wc -l)
compare bad "$tmp/bad.ptx" -arch=sm_90
check "bad PTX: ptxas's failure status" 255 "$(cat "$tmp/w/bad/rc")"
[ -s "$tmp/w/bad/err.txt" ] && ok "bad PTX: ptxas's message passed on" || bad "bad PTX: no message"
check "bad PTX: nothing recorded" "$before" "$(ls "$GPUPROBE_CACHE_DIR" | wc -l)"

# Recording fails (the cache directory is writable by others): the compile is still ptxas's.
mkdir -p "$tmp/open" && chmod 777 "$tmp/open"
(cd "$tmp/w/triton" && GPUPROBE_CACHE_DIR=$tmp/open "$wrap" -arch=sm_90 in.ptx -o again.cubin >o2 2>e2; echo $? >rc2)
check "unusable cache: exit 0" 0 "$(cat "$tmp/w/triton/rc2")"
check "unusable cache: nothing on stderr" "" "$(cat "$tmp/w/triton/e2")"
check "unusable cache: nothing written there" "" "$(ls "$tmp/open")"
(cd "$tmp/w/triton" && GPUPROBE_LOG=1 GPUPROBE_CACHE_DIR=$tmp/open "$wrap" -arch=sm_90 in.ptx -o again.cubin 2>e3)
grep -q "gpuprobe-ptxas: not recorded: cache directory $tmp/open: is writable by others" "$tmp/w/triton/e3" &&
	ok "unusable cache: GPUPROBE_LOG=1 says why" || { bad "unusable cache: the log line"; cat "$tmp/w/triton/e3"; }

# --version: passed through, nothing recorded; the real ptxas found on PATH, never itself.
check "--version passed through" "$("$real" --version)" "$("$wrap" --version)"
mkdir -p "$tmp/bin" && ln -s "$wrap" "$tmp/bin/ptxas"
check "a 'ptxas' link to gpuprobe-ptxas first on PATH finds the real one after it" \
	"$("$real" --version)" "$(env -u GPUPROBE_REAL_PTXAS PATH="$tmp/bin:$(dirname "$real"):$PATH" "$tmp/bin/ptxas" --version)"
check "GPUPROBE_REAL_PTXAS naming gpuprobe-ptxas itself: one line, 127" \
	"gpuprobe-ptxas: GPUPROBE_REAL_PTXAS=$tmp/bin/ptxas is not a program other than gpuprobe-ptxas
127" "$(GPUPROBE_REAL_PTXAS=$tmp/bin/ptxas "$wrap" --version 2>&1; echo $?)"

echo "$fails failures"
[ $fails = 0 ]
