#!/usr/bin/env bash
# Builds this folder's probes into BUILD/bpftime-maps (for tests/gpu/bpftime_maps.sh on the GPU
# machine, which has no clang; tests/gpu/prepare.sh calls it). usage: build.sh BUILD
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1")/bpftime-maps
clang=${CLANG:-$(command -v clang || command -v clang-14)}
mkdir -p "$out/vmlinux"
cp "$here/../../../examples/vmlinux_min.h" "$out/vmlinux/vmlinux.h"
for p in gpu_array gpu_hash host_maps kernel_shared special_sections; do
	"$clang" -target bpf -O2 -g -D__TARGET_ARCH_x86 -I/usr/include/x86_64-linux-gnu -I"$out/vmlinux" \
		-c "$here/$p.bpf.c" -o "$out/$p.bpf.o"
done
cp "$here/checks.sh" "$out/"
