#!/usr/bin/env bash
# gpuprobe run's environment for kernels compiled at run time (cli/cmd_run.c set_jit_env):
# TRITON_PTXAS_PATH and TRITON_PTXAS_BLACKWELL_PATH name gpuprobe-ptxas unless the user set them;
# the first ptxas on PATH (XLA's search) is gpuprobe-ptxas, which runs the real one; build/lib,
# with the NVRTC and nvJitLink stand-ins, leads LD_LIBRARY_PATH.
# usage: run_env.sh GPUPROBE
set -u
gp=$1
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }
bin=$(cd "$(dirname "$gp")" && pwd) lib=$(cd "$(dirname "$gp")/../lib" && pwd)
unset TRITON_PTXAS_PATH TRITON_PTXAS_BLACKWELL_PATH
out=$("$gp" run -- sh -c 'echo "$TRITON_PTXAS_PATH"; echo "$TRITON_PTXAS_BLACKWELL_PATH"; command -v ptxas; echo "${LD_LIBRARY_PATH%%:*}"' 2>&1)
check "Triton's ptxas, XLA's PATH, the libraries" "$bin/gpuprobe-ptxas
$bin/gpuprobe-ptxas
$lib/gpuprobe-jit/ptxas
$lib" "$out"
check "the user's TRITON_PTXAS_PATH stays" "/opt/my/ptxas" \
	"$(TRITON_PTXAS_PATH=/opt/my/ptxas "$gp" run -- sh -c 'echo "$TRITON_PTXAS_PATH"' 2>&1)"
real=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [ -x "$real" ]; then
	check "ptxas on PATH under gpuprobe run is the real one's voice" "$("$real" --version)" \
		"$(PATH=$PATH:/usr/local/cuda/bin "$gp" run -- ptxas --version 2>&1)"
fi
for l in libnvrtc.so.13 libnvJitLink.so.13; do
	[ -e "$lib/$l" ] && ok "$l in $lib" || bad "$l missing from $lib"
done
echo "$fails failures"
[ $fails = 0 ]
