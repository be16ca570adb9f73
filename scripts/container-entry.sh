#!/bin/sh
# The container's entry point (Dockerfile): picks up probes from a mounted /probes directory
# unless GPUPROBE_CONFIG or GPUPROBE_PROBES already name them, finds the mounted NVIDIA driver,
# gives gpuprobe a private runtime directory when the container has none, then runs the command.
#   /probes/config.yaml    -> GPUPROBE_CONFIG=/probes/config.yaml
#   /probes/*.bpf.o        -> GPUPROBE_PROBES=/probes/a.bpf.o:/probes/b.bpf.o
# The shim refuses probe files others may write: mount them read-only, mode 0644 or stricter.
if [ -z "${GPUPROBE_CONFIG:-}" ] && [ -z "${GPUPROBE_PROBES:-}" ] && [ -d /probes ]; then
	if [ -f /probes/config.yaml ]; then
		export GPUPROBE_CONFIG=/probes/config.yaml
	else
		list=
		for f in /probes/*.bpf.o; do
			[ -f "$f" ] && list="${list:+$list:}$f"
		done
		[ -n "$list" ] && export GPUPROBE_PROBES="$list"
	fi
fi
# The driver the NVIDIA container toolkit mounted: where the image says (Ubuntu's multiarch folder),
# else where other set-ups put it; none: unset, and the shim looks in the loader cache.
if [ -n "${GPUPROBE_REAL_LIBCUDA:-}" ] && [ ! -e "$GPUPROBE_REAL_LIBCUDA" ]; then
	for d in /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/lib64 /usr/lib/wsl/lib; do
		if [ -e "$d/libcuda.so.1" ]; then
			export GPUPROBE_REAL_LIBCUDA="$d/libcuda.so.1"
			break
		fi
	done
	[ -e "$GPUPROBE_REAL_LIBCUDA" ] || unset GPUPROBE_REAL_LIBCUDA
fi
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
	d=/tmp/gpuprobe-run-$(id -u)
	mkdir -p "$d" && chmod 700 "$d" && export XDG_RUNTIME_DIR="$d"
fi
[ $# -gt 0 ] || set -- gpuprobe --help
exec "$@"
