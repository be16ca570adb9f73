#!/bin/bash
# Builds, on the build machine (no GPU needed), every input the GPU tests of every area need into
# one directory BUILD, so that the GPU machine (no clang, no libbpf) builds nothing. Use BUILD=build:
# every tests/gpu/*.sh falls back to ./build, so the lead carries `build` and runs there
#   BUILD=$PWD/build BENCH_BUILD=$PWD/build tests/gpu/run-all.sh
# (run-all.sh also calls this script with no argument: it then says SKIP and exits 77).
# What it makes (each area's own build step, nothing duplicated here):
#   cmake Release build of gpuprobe, the shim (lib/libcuda.so.1), the audit library, the maps
#   GPU runner, the lowering GPU runner and its inputs (targets lower_gpu_inputs, lower_gpu_stack), the SPIR-V
#   conformance runner and e2e app, launch_latency; graphs.sh's graph_app (gpu-graphs/) and probe
#   (tests/shim/capture.bpf.o);
#   tests/e2e/build.sh (probe objects, pattern, cub_algos, CuPy script; libbpf/json-c/yaml in lib/);
#   examples/build.sh (example probes and apps into BUILD/examples);
#   tests/maps/bpftime/build.sh (bpftime's map types' probes into BUILD/bpftime-maps);
#   tests/gpu/apps/build.sh BUILD/gpu-apps (the shim's GPU apps);
#   bench/overhead/build.sh BUILD (the overhead benchmark's workloads and probes);
#   tests/gpu/capture/build.sh BUILD/capture (capture.sh's app and lossy/lossless memory traces);
#   tests/trace_replay/build.sh BUILD/trace-replay (trace_replay.sh: patterns, cuda-samples'
#   vectorAdd, the warp-record probes; bench/overhead/memtrace.sh uses bench/overhead's build);
#   tests/gpu/amdgpu_prepare.sh BUILD (LLVM-lowered modules for amdgpu.sh and amdgpu_bench.sh).
# Object files are deleted at the end so the directory stays under the 64 MiB carry limit; the
# size is printed. usage: tests/gpu/prepare.sh BUILD
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# = 1 ] || { echo "prepare.sh: SKIP: build-machine step (usage: tests/gpu/prepare.sh BUILD)"; exit 77; }
B=$(realpath -m "$1")
mkdir -p "$B/lib"
cmake -S "$root" -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
# Targets one at a time: an area whose target is absent or broken is reported, the rest still built.
for t in gpuprobe shim gpuprobe-audit gpu_maps_run lower_gpu_run lower_gpu_inputs lower_gpu_stack \
	spirv_conformance spirv_e2e spirv_e2e_app launch_latency shim_graph_app shim_capture_probe \
	gpu_first_kernel gpu_jit_nvrtc_launch gpu_jit_probes capture_bench consume_bench; do
	cmake --build "$B" --target "$t" -j2 >"$B/prepare-$t.log" 2>&1 ||
		echo "prepare.sh: target $t failed (see $B/prepare-$t.log)"
done
bash "$root/tests/e2e/build.sh" "$B"
bash "$root/examples/build.sh" "$B"
bash "$root/tests/maps/bpftime/build.sh" "$B"   # bpftime_maps.sh's probes (BUILD/bpftime-maps)
bash "$root/tests/gpu/apps/build.sh" "$B/gpu-apps"
bash "$root/bench/overhead/build.sh" "$B"
bash "$root/tests/gpu/capture/build.sh" "$B/capture" ||   # capture.sh: cap_app, memory-trace probes
	echo "prepare.sh: tests/gpu/capture/build.sh failed (capture.sh will SKIP)"
bash "$root/tests/trace_replay/build.sh" "$B/trace-replay" ||   # trace_replay.sh: patterns, vectorAdd
	echo "prepare.sh: tests/trace_replay/build.sh failed (trace_replay.sh will SKIP)"
# amdgpu.sh / amdgpu_bench.sh: modules lowered through LLVM 19 (BUILD/llvm-cache) and the bench
# programs; says SKIP where this build has no LLVM 19
bash "$root/tests/gpu/amdgpu_prepare.sh" "$B" || true
# fork.sh's entry+exit counter (BUILD/probes/entry_exit_hash.bpf.o)
src=$root/../shared/corpora/app-regressions/probes/entry_exit_hash.bpf.c
[ -e "$src" ] || src=/work/shared/corpora/app-regressions/probes/entry_exit_hash.bpf.c
clang=$(command -v clang || command -v clang-14 || true)
if [ -e "$src" ] && [ -n "$clang" ]; then
	mkdir -p "$B/probes"
	"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" -c "$src" \
		-o "$B/probes/entry_exit_hash.bpf.o" || echo "prepare.sh: entry_exit_hash.bpf.o failed"
else
	echo "prepare.sh: no $src or no clang: fork.sh needs PROBE=entry_exit_hash.bpf.o"
fi
for l in libbpf.so.1 libjson-c.so.5 libyaml-0.so.2 libmicrohttpd.so.12; do   # libmicrohttpd: --metrics; Ubuntu may lack it
	[ -e "$B/lib/$l" ] || cp -L "/usr/lib/x86_64-linux-gnu/$l" "$B/lib/" 2>/dev/null ||
		cp -L "/lib/x86_64-linux-gnu/$l" "$B/lib/"
done
find "$B" -name '*.o' -path '*CMakeFiles*' -delete
find "$B" -name '*.a' -delete
du -sh "$B"
rel=$(realpath --relative-to="$root" "$B")
echo "prepare.sh: carry $rel; on the GPU machine: BUILD=\$PWD/$rel BENCH_BUILD=\$PWD/$rel tests/gpu/run-all.sh"
