#!/usr/bin/env bash
# The shim's dynamic symbol table is exactly the generated export list, the list covers the
# forms the driver exports (_v2, _ptds/_ptsz, legacy names), and it equals the CUDA toolkit's
# own libcuda stub's exports (cuda.h, cudaProfiler.h) plus the graphics-interop entry points
# (cudaGL.h, cudaEGL.h, cudaVDPAU.h) when the stub is present.
# usage: exports.sh SHIM GENERATED_LIST [STUB]
set -u
shim=$1 list=$2 stub=${3:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

nm -D --defined-only "$shim" | awk '{print $3}' | sort >"$tmp/shim"
sort "$list" >"$tmp/list"
diff "$tmp/list" "$tmp/shim" >"$tmp/diff" || { cat "$tmp/diff"; fail "dynamic symbols differ from the generated list"; }
n=$(wc -l <"$tmp/shim")
[ "$n" -ge 600 ] || fail "only $n exports"
echo "ok $n exports, exactly the generated list"

for s in cuInit cuGetProcAddress cuGetProcAddress_v2 cuMemcpyHtoD cuMemcpyHtoD_v2 \
         cuMemcpyHtoD_v2_ptds cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx_ptsz \
         cuCtxCreate_v4 cuStreamGetCaptureInfo_v3_ptsz cuGraphInstantiateWithFlags \
         cuGetExportTable cuLibraryLoadData cuProfilerStart cuGLInit cuGLMapBufferObject_v2_ptds \
         cuGraphicsGLRegisterBuffer cuEGLStreamConsumerConnect cuVDPAUCtxCreate_v2; do
  grep -qx "$s" "$tmp/shim" || fail "missing $s"
done
echo "ok _v2/_v3/_v4, _ptds/_ptsz and legacy names present"

# Nothing but cu* names: no helper of the shim or of the libraries linked into it leaks.
grep -v '^cu' "$tmp/shim" && fail "non-cu symbols exported"
readelf -d "$shim" | grep -q 'Library soname: \[libcuda.so.1\]' || fail "SONAME is not libcuda.so.1"
readelf -d "$shim" | grep -q 'R.*PATH.*\[\$ORIGIN\]' || fail "no \$ORIGIN run path"
echo "ok SONAME libcuda.so.1, RUNPATH \$ORIGIN, only cu* symbols"

if [ -n "$stub" ] && [ -e "$stub" ]; then
  nm -D --defined-only "$stub" | awk '{print $3}' | grep '^cu' | sort >"$tmp/stub"
  comm -23 "$tmp/stub" "$tmp/shim" >"$tmp/missing"
  [ -s "$tmp/missing" ] && { cat "$tmp/missing"; fail "exports of $stub missing from the shim"; }
  comm -13 "$tmp/stub" "$tmp/shim" >"$tmp/extra"
  grep -Ev 'GL|EGL|Egl|VDPAU' "$tmp/extra" && fail "exports beyond $stub that are not graphics interop"
  echo "ok the $(wc -l <"$tmp/stub") exports of $stub, plus $(wc -l <"$tmp/extra") graphics-interop ones"
fi
