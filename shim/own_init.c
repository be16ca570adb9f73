/* The own driver's start (which backend, the table's slots), initialization and versions, the
 * one line per function it does not implement. */
#include "shim/own.h"
#include "amdgpu/backend_hip.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN
#include "shim/log.h"
#include "common/env.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct own_state own;
int own_is_active;

/* One bit per export: its "not implemented" line was said. */
static unsigned char said[(SHIM_FN_COUNT + 7) / 8];

CUresult own_unsupported(int id, const char *name)
{
	if (id >= 0) {
		unsigned char bit = (unsigned char)(1u << (id % 8));
		if (__atomic_fetch_or(&said[id / 8], bit, __ATOMIC_RELAXED) & bit)
			return CUDA_ERROR_NOT_SUPPORTED;
	}
	shim_msg("%s is not implemented by gpuprobe's own driver (%s backend): CUDA_ERROR_NOT_SUPPORTED", name,
		 own.ops ? own.ops->name : "no");
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult own_err(int e)
{
	switch (e) {
	case 0: return CUDA_SUCCESS;
	case -ENOMEM: return CUDA_ERROR_OUT_OF_MEMORY;
	case -EINVAL: return CUDA_ERROR_INVALID_VALUE;
	case -E2BIG: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	case -ENOENT: return CUDA_ERROR_NOT_FOUND;
	case -ENODEV: return CUDA_ERROR_NO_DEVICE;
	case -ENOTSUP: return CUDA_ERROR_NOT_SUPPORTED;
	default: return CUDA_ERROR_UNKNOWN;
	}
}

uint64_t own_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Kernels on a CPU backend (PoCL) run on the backend's worker threads, whose stacks are the
 * device's per-thread stacks: recursive device functions (cudaLimitStackSize) and our larger
 * frames need more than glibc's 8 MiB default. Threads created from now on (the backend's
 * workers among them) get at least OWN_THREAD_STACK of address space; pages are only used when
 * touched. */
#define OWN_THREAD_STACK (256ul << 20)
static void thread_stacks(void)
{
	pthread_attr_t a;
	size_t sz = 0;
	if (pthread_getattr_default_np(&a) != 0)
		return;
	if (pthread_attr_getstacksize(&a, &sz) == 0 && sz < OWN_THREAD_STACK &&
	    pthread_attr_setstacksize(&a, OWN_THREAD_STACK) == 0)
		pthread_setattr_default_np(&a);
	pthread_attr_destroy(&a);
}

int own_install(int found_real)
{
	int choice = gp_env_choice(GP_VAR_BACKEND);   /* auto|nvidia|opencl|levelzero */
	if (choice == 1 || (choice == 0 && found_real))
		return 0;
	thread_stacks();
	const struct gp_bk_ops *ops = choice == 4 ? &gp_bk_hip : choice == 3 ? &gp_bk_levelzero : &gp_bk_opencl;
	char err[512] = "";
	gp_bk *bk = NULL;
	int r = ops->open(&bk, err, sizeof(err));
	if (r < 0 && choice == 0)
		return 0;       /* no NVIDIA driver and no other device: driver.c says so */
	own.ops = ops;
	own.bk = r < 0 ? NULL : bk;
	if (own.bk) {
		ops->info(bk, &own.info);
		if (ops->queue_create(bk, &own.queue, err, sizeof(err)) < 0) {
			shim_msg("gpuprobe's own driver: %s; every CUDA call fails", err);
			ops->close(bk);
			own.bk = NULL;
		} else if (ops->mem_alloc(bk, 64, GP_BK_MEM_HOST, &own.trap_word, NULL, 0) == 0) {
			memset((void *)(uintptr_t)own.trap_word, 0, 64);
			own.grid_workspace = own.trap_word + 16;
			own.clock_word = own.trap_word + 32;
		} else {
			own.trap_word = own.grid_workspace = own.clock_word = 0;
		}
	} else {
		shim_msg("GPUPROBE_BACKEND=%s: %s; every CUDA call fails (cuInit returns CUDA_ERROR_NO_DEVICE)",
			 ops->name, err);
	}
	own.primary.magic = OWN_MAGIC_CTX;
	own.primary.primary = 1;
	own.primary.id = 1;
	pthread_mutex_init(&own.primary.lock, NULL);
	for (size_t i = 0; i < own_nfns; i++) {
		int id = shim_fn_lookup(own_fns[i].name);
		if (id >= 0)
			__atomic_store_n(&shim_real_fn[id], own_fns[i].fn, __ATOMIC_RELEASE);
		else
			shim_msg("own driver: %s is no export (own_table.c)", own_fns[i].name);
	}
	__atomic_store_n(&own_is_active, 1, __ATOMIC_RELEASE);
	if (own.bk)
		shim_log("own driver: %s backend on %s (%s)%s", ops->name, own.info.name, own.info.route,
			 choice == 0 ? "; no NVIDIA driver found" : "");
	return 1;
}

/* ---- initialization and versions ---- */

CUresult own_cuInit(unsigned int flags)
{
	(void)flags;
	if (!own.bk)
		return CUDA_ERROR_NO_DEVICE;
	own.initialized = 1;
	return CUDA_SUCCESS;
}

CUresult own_cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = CUDA_VERSION;   /* the API the shim was built against */
	return CUDA_SUCCESS;
}

/* A kernel's failed assert or trap (spirv_options.trap_word) makes the context unusable, as on
 * NVIDIA: every later call returns the error. */
CUresult own_trapped(CUresult rc)
{
	CUresult s = __atomic_load_n(&own.sticky, __ATOMIC_RELAXED);
	if (s)
		return s;
	uint32_t w = own.trap_word ? __atomic_load_n((uint32_t *)(uintptr_t)own.trap_word, __ATOMIC_ACQUIRE) : 0;
	if (!w)
		return rc;
	/* 1: assert, 2: trap, 3: a shared-memory access outside the block's window (spirv/lower_util.c),
	 * 4: a recursive call, which OpenCL cannot make (spirv/lower_recursion.c) */
	static const struct { CUresult rc; const char *what, *name; } why[] = {
		[1] = {CUDA_ERROR_ASSERT, "failed a device-side assert()", "CUDA_ERROR_ASSERT"},
		[2] = {CUDA_ERROR_ILLEGAL_INSTRUCTION, "executed trap", "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
		[3] = {CUDA_ERROR_ILLEGAL_ADDRESS, "accessed shared memory outside its block's window (the access was dropped)",
		       "CUDA_ERROR_ILLEGAL_ADDRESS"},
		[4] = {CUDA_ERROR_LAUNCH_FAILED, "reached a recursive call, which OpenCL cannot make (the call was not made; "
		       "GPUPROBE_LOG=1 names it)", "CUDA_ERROR_LAUNCH_FAILED"},
	};
	unsigned k = w < sizeof(why) / sizeof(why[0]) && why[w].what ? w : 2;
	s = why[k].rc;
	CUresult none = CUDA_SUCCESS;
	if (__atomic_compare_exchange_n(&own.sticky, &none, s, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		shim_msg("own driver: a kernel %s; the context is unusable from now on (%s)", why[k].what, why[k].name);
	return s;
}

CUresult own_ready(void)
{
	if (!own.initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	return own_trapped(CUDA_SUCCESS);
}

/* ---- error names (cuda.h's enum; the ones an application is likely to meet) ---- */

static const struct { CUresult e; const char *name, *text; } errs[] = {
#define E(n, t) {n, #n, t}
	E(CUDA_SUCCESS, "no error"),
	E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
	E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
	E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	E(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
	E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
	E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
	E(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
	E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
	E(CUDA_ERROR_NOT_READY, "device not ready"),
	E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
	E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
	E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
	E(CUDA_ERROR_INVALID_PC, "invalid program counter"),
	E(CUDA_ERROR_ASSERT, "device-side assert triggered"),
	E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
	E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
	E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices"),
	E(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context is already current"),
	E(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context active"),
	E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
	E(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch"),
	E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
	E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain"),
	E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda driver combination"),
	E(CUDA_ERROR_UNKNOWN, "unknown error"),
#undef E
};

CUresult own_cuGetErrorName(CUresult error, const char **s)
{
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (errs[i].e == error) {
			if (s)
				*s = errs[i].name;
			return CUDA_SUCCESS;
		}
	if (s)
		*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult own_cuGetErrorString(CUresult error, const char **s)
{
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (errs[i].e == error) {
			if (s)
				*s = errs[i].text;
			return CUDA_SUCCESS;
		}
	if (s)
		*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
