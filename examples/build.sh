#!/bin/bash
# Builds the examples into BUILD/examples: each probe object (clang -target bpf, with vmlinux.h
# from the running kernel's BTF when there is one, else examples/vmlinux_min.h) and the app
# (nvcc -arch=sm_90: SASS and PTX), and config.yaml beside them. usage: examples/build.sh BUILD_DIR
set -eu
src=$(cd "$(dirname "$0")" && pwd)
out=$(cd "$1" && pwd)/examples
mkdir -p "$out/include"
if [ -r /sys/kernel/btf/vmlinux ] && command -v bpftool >/dev/null; then
	bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$out/include/vmlinux.h"
else
	cp "$src/vmlinux_min.h" "$out/include/vmlinux.h"
fi
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
for p in "$src"/*/*.bpf.c; do
	"$CLANG" -target bpf -O2 -g -D__TARGET_ARCH_x86 -I/usr/include/x86_64-linux-gnu \
		-I"$src/../include" -I"$out/include" -c "$p" -o "$out/$(basename "$p" .c).o"
done
# the example configuration names the objects as they land here (umask 022: gpuprobe refuses a
# configuration others may write)
install -m 0644 "$src/config.yaml" "$out/config.yaml"
/usr/local/cuda/bin/nvcc -arch=sm_90 -o "$out/vec_add" "$src/apps/vec_add.cu"
/usr/local/cuda/bin/nvcc -arch=sm_90 -o "$out/coalescing" "$src/apps/coalescing.cu"
/usr/local/cuda/bin/nvcc -arch=sm_90 -o "$out/bank_conflicts" "$src/apps/bank_conflicts.cu"
