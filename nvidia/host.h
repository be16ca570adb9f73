/* Host API probes (host/entry/<glob>, host/exit/<glob>): the verified host programs of a probe
 * set, run by the host interpreter (ebpf/interp.h) around driver API calls, on the same maps
 * as the device programs.
 *
 * Map access: map helpers are taken over (gp_interp_env.helper) and go through gp_map_inst
 * (maps/maps.h), so device-resident maps are read and written with copies through the map
 * allocator (cuMemcpy on the GPU): bpf_map_lookup_elem copies the value into a scratch buffer
 * the program may read and write, and a value the program changed is written back when the
 * program returns (BPF_ANY). Runs are serialized by one lock. A device kernel adding to the
 * same value while a host program holds its copy loses its adds (host probes are meant for
 * per-launch bookkeeping: timestamps, counts the device does not touch at the same time).
 * Per-CPU and per-thread maps: the program sees copy 0.
 * bpftime's uprobe/uretprobe programs (ebpf/object.h, gp_uprobe_abi) run here too, with r1 at a
 * struct gp_bpftime_regs filled from the same arguments. */
#ifndef GPUPROBE_NVIDIA_HOST_H
#define GPUPROBE_NVIDIA_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "nvidia/probes.h"

struct gp_nv_host;

/* The host programs of ps (NULL in *out and 0 when there are none). */
int gp_nv_host__open(struct gp_nv_probes *ps, struct gp_nv_host **out, char *err, size_t errlen);
void gp_nv_host__close(struct gp_nv_host *h);

/* 1 when some program of h attaches to api at that side (exit 0: entry, 1: exit). api is the
 * driver's name as called (e.g. "cuLaunchKernel_ptsz"); globs also match it without a _v2,
 * _v3, _ptsz or _ptds suffix. */
int gp_nv_host__wants(const struct gp_nv_host *h, int exit, const char *api);

/* How gp_host_ctx.kernel_hash is found for launches (cuLaunch*): name(args[0]) is the
 * launched function's (mangled) name, or NULL when unknown (then kernel_hash is 0). Without it
 * kernel_hash is 0. */
void gp_nv_host__set_kernel_name(struct gp_nv_host *h, const char *(*name)(const void *handle));

/* One line to line() per bpftime-style uprobe/uretprobe program of h: the driver calls it runs
 * at, that the binary path of its section is ignored, and its register layout. Returns the
 * number of lines (the shim logs them with GPUPROBE_LOG=1). */
int gp_nv_host__notes(const struct gp_nv_host *h, void (*line)(void *user, const char *text),
		      void *user);

/* Run every program of h attached to api at that side, with args[0..nargs) (at most 8 kept)
 * and, at exit, the call's result. bpf_printk lines go to print (NULL: stderr). Returns the
 * number of programs run, or a negative errno with one line in err (a program that faults stops;
 * the others still run). */
int gp_nv_host__run(struct gp_nv_host *h, int exit, const char *api, const uint64_t *args,
		    unsigned nargs, int result, void (*print)(void *user, const char *line),
		    void *print_user, char *err, size_t errlen);

#endif
