/* Host API probes in the shim (probes_host.h): the probe set's host programs around driver
 * calls: every launch path through the launch watch (intercept_launch.c), and here the
 * synchronisations and the plain copies between host and device. A program that faults says so
 * once and the call goes on. */
#include "shim/probes_host.h"
#include "shim/copier.h"
#include "shim/forward.h"
#include "shim/intercept.h"
#include "shim/log.h"

#include "shim/registry.h"

#include "maps/config.h"
#include "nvidia/host.h"
#include "ptx-frontend/demangle.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int shim_host_probes_active;
static struct gp_nv_host *host;
static int fault_said;
static const struct gp_config *filter;   /* the kernel filter launches obey, or NULL */

static void print_line(void *user, const char *line)
{
	(void)user;
	if (shim_copier_line(line))   /* under gpuprobe run: printed by gpuprobe (copier.h) */
		shim_msg("%s", line);
}

static void log_line(void *user, const char *line)
{
	(void)user;
	shim_log("%s", line);
}

/* A launched function's name, for host probes' kernel_hash (the launch path records every
 * handle it sees before host probes run: intercept_launch.c). Lock-free. */
static const char *launched_name(const void *f)
{
	const struct shim_kernel *k = registry_get(REGISTRY_KERNELS, f);
	return k ? k->name : NULL;
}

/* Whether the configuration's kernel filter selects the launched function f: decided once per
 * handle (the demangling allocates) and kept in a small table; a handle whose name is unknown,
 * or that the table has no room for, is decided again at each launch. */
#define SEL_SLOTS 4096
static struct { const void *f; int sel; } selected[SEL_SLOTS];
static pthread_mutex_t selected_lock = PTHREAD_MUTEX_INITIALIZER;

static int launch_selected(const void *f)
{
	unsigned h = (unsigned)(((uintptr_t)f >> 4) * 2654435761u) % SEL_SLOTS;
	pthread_mutex_lock(&selected_lock);
	for (unsigned i = 0; i < 8; i++) {
		unsigned k = (h + i) % SEL_SLOTS;
		if (selected[k].f == f) {
			int sel = selected[k].sel;
			pthread_mutex_unlock(&selected_lock);
			return sel;
		}
	}
	pthread_mutex_unlock(&selected_lock);
	const char *name = launched_name(f);
	if (!name)
		return 1;   /* nothing to match: as a kernel the filter cannot name, it runs */
	char *dm = demangle(name);
	int sel = gp_config__kernel_selected(filter, -1, name, dm);
	free(dm);
	pthread_mutex_lock(&selected_lock);
	for (unsigned i = 0; i < 8; i++) {
		unsigned k = (h + i) % SEL_SLOTS;
		if (!selected[k].f) {
			selected[k].f = f;
			selected[k].sel = sel;
			break;
		}
	}
	pthread_mutex_unlock(&selected_lock);
	return sel;
}

void shim_host_probes_init(struct gp_nv_probes *ps, const struct gp_config *cfg)
{
	char err[512];
	if (gp_nv_host__open(ps, &host, err, sizeof(err))) {
		shim_msg("%s; host probes disabled", err);
		return;
	}
	if (!host)
		return;
	filter = cfg;
	gp_nv_host__set_kernel_name(host, launched_name);
	gp_nv_host__notes(host, log_line, NULL);   /* bpftime-style uprobes: where they run */
	__atomic_store_n(&shim_launch_watch, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&shim_host_probes_active, 1, __ATOMIC_RELEASE);
}

void shim_host_probes_call(int exit, const char *api, const uint64_t *args, unsigned nargs,
			   int result)
{
	char err[512];
	if (!host || !gp_nv_host__wants(host, exit, api))
		return;
	if (filter && nargs && !strncmp(api, "cuLaunch", 8) &&
	    !launch_selected((const void *)(uintptr_t)args[0]))
		return;
	if (gp_nv_host__run(host, exit, api, args, nargs, result, print_line, NULL, err,
			    sizeof(err)) < 0 &&
	    !__atomic_exchange_n(&fault_said, 1, __ATOMIC_RELAXED))
		shim_msg("%s (said once)", err);
}

#define U(x) ((uint64_t)(uintptr_t)(x))
#define HOST_ACTIVE() __builtin_expect(__atomic_load_n(&shim_host_probes_active, __ATOMIC_RELAXED), 0)

/* name(params): probes around the real call when active, else a tail call. */
#define HOSTED(name, params, hargs, ...)                                                   \
	CUresult name params                                                               \
	{                                                                                  \
		if (!HOST_ACTIVE())                                                        \
			SHIM_TAILCALL(name, __VA_ARGS__);                                  \
		uint64_t a_[] = hargs;                                                     \
		unsigned n_ = (unsigned)(sizeof(a_) / sizeof(a_[0]));                      \
		shim_host_probes_call(0, #name, a_, n_, 0);                                \
		shim_fnty_##name *real_ = SHIM_REAL(name);                                 \
		CUresult rc_ = real_ ? real_(__VA_ARGS__) : CUDA_ERROR_NOT_SUPPORTED;       \
		shim_host_probes_call(1, #name, a_, n_, (int)rc_);                         \
		return rc_;                                                                \
	}

#define A(...) {__VA_ARGS__}
HOSTED(cuCtxSynchronize, (void), A(0), )
HOSTED(cuStreamSynchronize, (CUstream s), A(U(s)), s)
HOSTED(cuMemcpyHtoD_v2, (CUdeviceptr d, const void *s, size_t n), A(d, U(s), n), d, s, n)
HOSTED(cuMemcpyDtoH_v2, (void *d, CUdeviceptr s, size_t n), A(U(d), s, n), d, s, n)
HOSTED(cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n), A(d, s, n), d, s, n)
HOSTED(cuMemcpyHtoDAsync_v2, (CUdeviceptr d, const void *s, size_t n, CUstream st),
       A(d, U(s), n, U(st)), d, s, n, st)
HOSTED(cuMemcpyDtoHAsync_v2, (void *d, CUdeviceptr s, size_t n, CUstream st),
       A(U(d), s, n, U(st)), d, s, n, st)
HOSTED(cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n), A(d, s, n), d, s, n)
HOSTED(cuMemcpyAsync, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st),
       A(d, s, n, U(st)), d, s, n, st)
