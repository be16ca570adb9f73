/* Host API probes in the shim (nvidia/host.h runs them): the launch wrappers' watched path and
 * the wrappers below call shim_host_probes_call around the driver call when
 * shim_host_probes_active is set. The fast path stays one relaxed load and a branch. */
#ifndef GPUPROBE_SHIM_PROBES_HOST_H
#define GPUPROBE_SHIM_PROBES_HOST_H

#include <stdint.h>

struct gp_nv_probes;
struct gp_config;

extern int shim_host_probes_active;

/* After the probe set opened: take its host programs (turns on the launch watch). cfg (may be
 * NULL; kept): its kernel filter (kernels: include/exclude, gpuprobe run -k) applies to launches
 * as to device code: a launch of a kernel it leaves out runs no host program. */
void shim_host_probes_init(struct gp_nv_probes *ps, const struct gp_config *cfg);

/* Run the programs on api at entry (exit 0) or exit (1, with the call's result). */
void shim_host_probes_call(int exit, const char *api, const uint64_t *args, unsigned nargs,
			   int result);

#endif
