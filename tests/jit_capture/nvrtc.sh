#!/usr/bin/env bash
# NVRTC and nvJitLink interposed (tools/jit_nvrtc.c, tools/jit_nvjitlink.c): nvrtc_app loads
# both by name, compiles a kernel to a cubin with NVRTC and links its PTX with nvJitLink. Through
# build/lib's stand-ins every call returns what the real libraries return, the cubins are byte
# for byte the real ones', and each cubin's SHA-256 keys a record of its PTX with the options.
# usage: nvrtc.sh NVRTC_APP STANDIN_DIR REAL_LIB_DIR [AUDIT_MODULE]
set -u
app=$1 ours=$2 realdir=$3 audit=${4:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }
unset GPUPROBE_LOG GPUPROBE_REAL_NVRTC GPUPROBE_REAL_NVJITLINK
# the stand-ins alone in a directory of their own (build/lib also holds the libcuda.so.1 shim)
mkdir -p "$tmp/lib" "$tmp/real" "$tmp/ours" "$tmp/abs" "$tmp/abs2"
ln -s "$ours/libnvrtc.so.13" "$ours/libnvJitLink.so.13" "$tmp/lib/"

LD_LIBRARY_PATH=$realdir "$app" "$tmp/real" >"$tmp/real.out" 2>&1 ||
	{ bad "the program with the real libraries"; cat "$tmp/real.out"; exit 1; }
GPUPROBE_CACHE_DIR=$tmp/cache LD_LIBRARY_PATH=$tmp/lib:$realdir "$app" "$tmp/ours" >"$tmp/ours.out" 2>"$tmp/ours.err"
check "every call returns what the real libraries return" "$(cat "$tmp/real.out")" "$(cat "$tmp/ours.out")"
check "nothing on stderr" "" "$(cat "$tmp/ours.err")"
cmp -s "$tmp/real/nvrtc.cubin" "$tmp/ours/nvrtc.cubin" && ok "NVRTC's cubin is the real one's" || bad "NVRTC's cubin differs"
cmp -s "$tmp/real/jitlink.cubin" "$tmp/ours/jitlink.cubin" && ok "nvJitLink's cubin is the real one's" || bad "nvJitLink's cubin differs"

key=$(sha256sum "$tmp/ours/nvrtc.cubin" | cut -c1-64)
rec=$tmp/cache/$key.jitptx
check "NVRTC: the record's fields" "source nvrtc
arch sm_90
opt -1
maxrregcount 40
lineinfo 1
debug 0
relocatable 0
options -arch=sm_90 -lineinfo --maxrregcount=40" "$(sed -n '2,9p' "$rec" 2>&1)"
cmp -s <(sed '1,/^$/d' "$rec") "$tmp/ours/nvrtc.ptx" && ok "NVRTC: the record holds the program's PTX" ||
	bad "NVRTC: the record's PTX is not the program's"
key=$(sha256sum "$tmp/ours/jitlink.cubin" | cut -c1-64)
rec=$tmp/cache/$key.jitptx
check "nvJitLink: the record's fields" "source nvJitLink
arch sm_90
opt 3
maxrregcount 48" "$(sed -n '2,5p' "$rec" 2>&1)"
cmp -s <(sed '1,/^$/d' "$rec") "$tmp/ours/nvrtc.ptx" && ok "nvJitLink: the record holds the linked PTX" ||
	bad "nvJitLink: the record's PTX is not the input"
cmp -s "$tmp/real/lto.cubin" "$tmp/ours/lto.cubin" && ok "nvJitLink -lto: the cubin is the real one's" || bad "nvJitLink -lto: the cubin differs"
rec3=$tmp/cache/$(sha256sum "$tmp/ours/lto.cubin" | cut -c1-64).jitptx
check "nvJitLink -lto: the record's fields" "source nvJitLink
arch sm_90" "$(sed -n '2,3p' "$rec3" 2>&1)"
# the PTX of the linked program (the same inputs linked again with -ptx): the kernel, for sm_90
check "nvJitLink -lto: the record holds the linked program's PTX" ".target sm_90
.visible .entry scale(" "$(sed '1,/^$/d' "$rec3" 2>/dev/null | grep -E '^\.target|^\.visible \.entry' | sed 's/(.*/(/')"
check "three records" 3 "$(ls "$tmp/cache" | wc -l)"
check "records 0600" 600 "$(stat -c %a "$rec")"

# The real library named explicitly; a wrong name is one line and the calls fail (no crash).
GPUPROBE_REAL_NVRTC=$realdir/libnvrtc.so.13 GPUPROBE_CACHE_DIR=$tmp/cache2 \
	LD_LIBRARY_PATH=$tmp/lib:$realdir "$app" "$tmp/ours" >"$tmp/named.out" 2>&1
check "GPUPROBE_REAL_NVRTC: the same calls" "$(cat "$tmp/real.out")" "$(cat "$tmp/named.out")"
GPUPROBE_REAL_NVRTC=$tmp/nonexistent.so LD_LIBRARY_PATH=$tmp/lib:$realdir "$app" "$tmp/ours" \
	>"$tmp/none.out" 2>"$tmp/none.err"
check "GPUPROBE_REAL_NVRTC missing: one line" 1 "$(grep -c '^gpuprobe: GPUPROBE_REAL_NVRTC=' "$tmp/none.err")"
grep -q "nvrtcCreateProgram 11" "$tmp/none.out" && ok "GPUPROBE_REAL_NVRTC missing: calls fail with NVRTC_ERROR_INTERNAL_ERROR" ||
	{ bad "GPUPROBE_REAL_NVRTC missing: the calls"; cat "$tmp/none.out"; }

# A cache nobody else may write to refuses: the compile is NVRTC's all the same.
mkdir -p "$tmp/open" && chmod 777 "$tmp/open"
GPUPROBE_CACHE_DIR=$tmp/open LD_LIBRARY_PATH=$tmp/lib:$realdir "$app" "$tmp/ours" >"$tmp/open.out" 2>"$tmp/open.err"
check "unusable cache: the same calls, silent" "$(cat "$tmp/real.out")" "$(cat "$tmp/open.out" "$tmp/open.err")"

# Loaded by absolute path (as PyTorch and CuPy load a Python package's copy): under gpuprobe
# run's LD_AUDIT module the loads go to the stand-ins all the same.
if [ -n "$audit" ] && [ -e "$audit" ]; then
	GPUPROBE_CACHE_DIR=$tmp/cache3 LD_AUDIT=$audit GPUPROBE_SHIM=$ours/libcuda.so.1 \
		"$app" "$tmp/abs" "$realdir" >"$tmp/abs.out" 2>"$tmp/abs.err"
	check "absolute path under LD_AUDIT: the same calls" "$(cat "$tmp/real.out")" "$(cat "$tmp/abs.out")"
	check "absolute path under LD_AUDIT: all three recorded" 3 "$(ls "$tmp/cache3" 2>/dev/null | wc -l)"
	check "absolute path under LD_AUDIT: NVRTC's record" \
		"$(sed -n '2,9p' "$tmp/cache/$(sha256sum "$tmp/ours/nvrtc.cubin" | cut -c1-64).jitptx")" \
		"$(sed -n '2,9p' "$tmp/cache3/$(sha256sum "$tmp/abs/nvrtc.cubin" | cut -c1-64).jitptx" 2>&1)"
	GPUPROBE_CACHE_DIR=$tmp/cache4 "$app" "$tmp/abs2" "$realdir" >/dev/null 2>&1
	check "absolute path without the audit module: the real library, no record" 0 "$(ls "$tmp/cache4" 2>/dev/null | wc -l)"
fi

echo "$fails failures"
[ $fails = 0 ]
