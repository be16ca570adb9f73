/* Host API probes in the shim (probes_host.h): the probe set's host programs around driver
 * calls: every launch path through the launch watch (intercept_launch.c), and here the
 * synchronisations and the plain copies between host and device. A program that faults says so
 * once and the call goes on. */
#include "shim/probes_host.h"
#include "shim/forward.h"
#include "shim/intercept.h"
#include "shim/log.h"

#include "nvidia/host.h"

int shim_host_probes_active;
static struct gp_nv_host *host;
static int fault_said;

static void print_line(void *user, const char *line)
{
	(void)user;
	shim_msg("%s", line);
}

static void log_line(void *user, const char *line)
{
	(void)user;
	shim_log("%s", line);
}

void shim_host_probes_init(struct gp_nv_probes *ps)
{
	char err[512];
	if (gp_nv_host__open(ps, &host, err, sizeof(err))) {
		shim_msg("%s; host probes disabled", err);
		return;
	}
	if (!host)
		return;
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
