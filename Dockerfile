# gpuprobe in a container (docs/container.md). Two final stages:
#
#   cuda    (the default): NVIDIA's CUDA runtime image with gpuprobe in /opt/gpuprobe and its
#           libcuda.so.1 first on LD_LIBRARY_PATH, ahead of the driver the NVIDIA container
#           toolkit mounts (GPUPROBE_REAL_LIBCUDA names that driver). Probes come from a mounted
#           directory (/probes: every *.bpf.o in it, or /probes/config.yaml) or GPUPROBE_CONFIG.
#   debian  Debian 12 with gpuprobe in /opt/gpuprobe; built in CI without a registry
#           (scripts/container.sh: the base root filesystem made with mmdebstrap, this file built
#           by buildah with chroot isolation and vfs storage).
#
# Build it with scripts/container.sh, which prepares the context this file expects: the source
# tree and cuda/include (the CUDA 13 headers gpuprobe compiles against; they are not Debian
# packages). `scripts/container.sh --docker` builds the cuda stage with docker instead.
#
# BASE is Debian 12: debian:12 from a registry, or the mmdebstrap root filesystem imported as
# localhost/gpuprobe-debian12-base, in which the packages below are installed already.
ARG BASE=docker.io/library/debian:12
ARG CUDA_RUNTIME=docker.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04

FROM ${BASE} AS build
# What gpuprobe builds with (scripts/build.sh's list; scripts/container.sh reads this line).
# scripts/container.sh passes scripts/build.sh's list; this default is for a plain docker build.
ARG BUILD_PACKAGES="build-essential cmake pkg-config clang llvm libbpf-dev libelf-dev zlib1g-dev libzstd-dev liblz4-dev bpftool libjson-c-dev libyaml-dev libmicrohttpd-dev python3 spirv-headers spirv-tools llvm-spirv-15 pocl-opencl-icd ocl-icd-opencl-dev opencl-headers protobuf-c-compiler libprotobuf-c-dev protobuf-compiler clinfo"
RUN set -e; missing=; for p in $BUILD_PACKAGES; do \
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"; \
    done; \
    if [ -n "$missing" ]; then apt-get update -q && \
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing && \
      rm -rf /var/lib/apt/lists/*; fi
COPY cuda/include /usr/local/cuda/include
COPY src /src
# gpuprobe, the shim and what the no-GPU tests below run (the whole tree needs nvcc, which is
# not a Debian package).
ARG JOBS=2
ARG TARGETS="gpuprobe shim gpuprobe-audit test_maps_host test_maps_config test_config_limits test_config_escape verifier_unit ebpf_loader_test ebpf_interp_test e2e_host_test"
RUN cmake -S /src -B /src/build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && \
    cmake --build /src/build -j"$JOBS" --target $TARGETS
# /opt/gpuprobe: bin/gpuprobe, lib/ (the shim libcuda.so.1, gpuprobe's stand-ins for NVIDIA's JIT
# libraries, the LD_AUDIT module, the tools), include/gpuprobe (for probe authors), examples/.
# lib/ also holds the libraries the shim and gpuprobe load that an application's image may lack
# (libbpf, libelf, json-c, libyaml, the OpenCL loader, ...: every one ldd names but the C library's,
# libstdc++, libgcc_s, zlib, zstd and lz4, which every distribution's base image has): the shim
# finds them beside itself ($ORIGIN), so that lib/ can be copied into any image built on a C
# library at least as new as Debian 12's (glibc 2.36). runtime-packages.txt names their packages.
RUN set -e; o=/opt/gpuprobe; mkdir -p $o/bin $o/lib $o/include $o/examples; \
    cp /src/build/bin/gpuprobe $o/bin/; \
    for f in /src/build/lib/*.so*; do cp -P "$f" $o/lib/; done; \
    for d in /src/build/lib/gpuprobe-*; do [ -d "$d" ] && cp -a "$d" $o/lib/; done; \
    cp -r /src/include/gpuprobe $o/include/; \
    (/src/examples/build.sh /src/build >/dev/null 2>&1 || true); \
    for f in /src/build/examples/*.bpf.o /src/build/examples/config.yaml; do [ -e "$f" ] && cp "$f" $o/examples/; done; \
    for e in /src/examples/*/; do cp -r "$e" $o/examples/; done; \
    for b in $o/bin/gpuprobe $o/lib/libcuda.so.1; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | \
      sort -u >/tmp/deps; \
    while read -r name f; do \
      (dpkg -S "$f" 2>/dev/null || dpkg -S "$(realpath "$f")" 2>/dev/null || dpkg -S "${f#/usr}" 2>/dev/null) | cut -d: -f1; \
      case $name in libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++*|libgcc_s*|libz.so*|libzstd*|liblz4*) ;; \
        *) [ -e "$o/lib/$name" ] || cp -L "$f" "$o/lib/$name" ;; esac; \
    done </tmp/deps | sort -u >$o/runtime-packages.txt

# The no-GPU tests, in the build tree (a failing test fails the image).
FROM build AS test
ARG TESTS="^(maps_host|maps_config|config_limits|config_escape|verifier_unit|verifier_prog_.*|ebpf_loader|ebpf_interp|e2e.host_probes)$"
RUN cd /src/build && ctest -R "$TESTS" --output-on-failure

FROM ${BASE} AS debian
# From the test stage: the image exists only when the tests passed.
COPY --from=test /opt/gpuprobe /opt/gpuprobe
# The packages of the libraries gpuprobe and the shim load (found by ldd in the build stage), and
# PoCL, with which the shim is a driver of its own where there is no NVIDIA driver.
ARG RUNTIME_PACKAGES="ocl-icd-libopencl1 pocl-opencl-icd"
RUN set -e; missing=; for p in $(cat /opt/gpuprobe/runtime-packages.txt) $RUNTIME_PACKAGES; do \
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"; \
    done; \
    if [ -n "$missing" ]; then apt-get update -q && \
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing && \
      rm -rf /var/lib/apt/lists/*; fi
COPY src/scripts/container-entry.sh /opt/gpuprobe/bin/gpuprobe-entry
ENV PATH=/opt/gpuprobe/bin:$PATH
# Without NVIDIA's driver the shim is a driver of its own over PoCL (GPUPROBE_BACKEND=opencl).
RUN gpuprobe --help >/dev/null && for p in /opt/gpuprobe/examples/*.bpf.o; do [ ! -e "$p" ] || gpuprobe verify "$p" >/dev/null; done
ENTRYPOINT ["/opt/gpuprobe/bin/gpuprobe-entry"]
CMD ["gpuprobe", "--help"]

FROM ${CUDA_RUNTIME} AS cuda
COPY --from=build /opt/gpuprobe /opt/gpuprobe
COPY src/scripts/container-entry.sh /opt/gpuprobe/bin/gpuprobe-entry
# The NVIDIA container toolkit mounts the driver's libcuda.so.1 here (Ubuntu's multiarch folder);
# the shim loads it by this absolute path, never through LD_LIBRARY_PATH.
ENV PATH=/opt/gpuprobe/bin:$PATH \
    LD_LIBRARY_PATH=/opt/gpuprobe/lib:$LD_LIBRARY_PATH \
    GPUPROBE_REAL_LIBCUDA=/usr/lib/x86_64-linux-gnu/libcuda.so.1 \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
ENTRYPOINT ["/opt/gpuprobe/bin/gpuprobe-entry"]
CMD ["gpuprobe", "--help"]
