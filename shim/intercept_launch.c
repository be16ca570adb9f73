/* Interception of every launch path: direct launches (and their _ptsz forms), cooperative and
 * legacy launches, and kernel nodes of CUDA graphs. The fast path adds one relaxed load and a
 * predictable branch to a forwarded call: no lock, no allocation. */
#include "shim/intercept.h"
#include "shim/lazy.h"
#include "shim/lazy_internal.h"
#include "shim/log.h"
#include "shim/probes_host.h"

#include <stdlib.h>
#include <string.h>

int shim_launch_watch;

__attribute__((constructor)) static void shim_launch_env(void)
{
	/* Per-kernel instrumentation (lazy.h) picks the function of every launch. */
	int lazy = shim_lazy_env();
	shim_launch_watch = shim_log_enabled || lazy;
}

__attribute__((noinline, cold)) void shim_launch_slow(const void *f, const char *api)
{
	struct shim_kernel *k = registry_get(REGISTRY_KERNELS, f);
	if (!k) {
		/* A handle the shim never saw being looked up (e.g. one obtained through a path the
		 * driver keeps private). Ask the driver its name once; this allocation happens at
		 * most once per such handle, and only while launches are watched. */
		const char *name = NULL;
		shim_fnty_cuFuncGetName *fn = SHIM_REAL(cuFuncGetName);
		shim_fnty_cuKernelGetName *kn = SHIM_REAL(cuKernelGetName);
		if (!(fn && fn((const char **)&name, (CUfunction)f) == CUDA_SUCCESS) &&
		    !(kn && kn((const char **)&name, (CUkernel)f) == CUDA_SUCCESS))
			name = NULL;
		shim_kernel_record(f, NULL, name, 0);
		k = registry_get(REGISTRY_KERNELS, f);
		if (!k)
			return;
	}
	/* Read first: every launch passes here while launches are watched, and an exchange
	 * would make each of them write the record's cache line. */
	if (__atomic_load_n(&k->launched, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&k->launched, 1, __ATOMIC_RELAXED))
		return;
	if (k->module)
		shim_log("first launch of %s (module %u, PTX %s) via %s", k->name ? k->name : "?",
			 k->module->seq, k->has_ptx ? "present" : "absent", api);
	else
		shim_log("first launch of %s (module not seen by the shim) via %s",
			 k->name ? k->name : "?", api);
}

#define REAL_OR_FAIL(name, var)                                  \
	shim_fnty_##name *var = SHIM_REAL(name);                 \
	if (!var)                                                \
		return shim_unavailable(SHIM_FN_##name)

/* Each hot launch entry is two tail calls: the watched variant (out of line, only while
 * launches are watched) or straight to the driver. The watched variant launches the function
 * per-kernel instrumentation picks (the application's handle when nothing is instrumented), and
 * once more with the application's handle when the instrumented one fails to launch (lazy.h).
 * Host probes see the application's handle. */
#define WATCHED_LAUNCH(name, params, f, hargs, block, smem, ...)                               \
	static __attribute__((noipa, cold)) CUresult name##_watched params                    \
	{                                                                                     \
		shim_launch_slow(f, #name);                                                   \
		uint64_t a_[] = hargs;                                                        \
		CUfunction app_ = f;                                                          \
		if (shim_lazy_enabled)                                                        \
			f = shim_lazy_pick(app_, (block), (smem));                            \
		CUresult rc_ = launch_call(#name, a_, SHIM_REAL(name), SHIM_FN_##name, __VA_ARGS__); \
		if (f != app_ && shim_lazy_failed(app_, f, rc_)) {                            \
			f = app_;                                                             \
			CUresult again_ = launch_call(#name, a_, SHIM_REAL(name), SHIM_FN_##name, \
						      __VA_ARGS__);                           \
			shim_lazy_retried(app_, rc_, again_);                                 \
			rc_ = again_;                                                         \
		}                                                                             \
		return rc_;                                                                   \
	}                                                                                     \
	CUresult name params                                                                  \
	{                                                                                     \
		if (__builtin_expect(__atomic_load_n(&shim_launch_watch, __ATOMIC_RELAXED), 0)) \
			return name##_watched(__VA_ARGS__);                                   \
		SHIM_TAILCALL(name, __VA_ARGS__);                                             \
	}

#define PARAMS_KERNEL                                                                         \
	(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,   \
	 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,              \
	 unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
#define ARGS_KERNEL f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, \
	sharedMemBytes, hStream, kernelParams, extra
#define PARAMS_KERNEL_EX (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
#define ARGS_KERNEL_EX config, f, kernelParams, extra
#define PARAMS_COOP                                                                           \
	(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,   \
	 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,              \
	 unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
#define ARGS_COOP f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, \
	sharedMemBytes, hStream, kernelParams

/* Host probes see every launch's arguments the same way (nvidia/host.h): the function, grid
 * x/y/z, block x/y/z, shared bytes (cuLaunchKernelEx's config unpacked). */
#define HARGS_KERNEL {(uint64_t)(uintptr_t)f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, \
	blockDimZ, sharedMemBytes}
#define HARGS_KERNEL_EX {(uint64_t)(uintptr_t)f, config ? config->gridDimX : 0,                   \
	config ? config->gridDimY : 0, config ? config->gridDimZ : 0, config ? config->blockDimX : 0, \
	config ? config->blockDimY : 0, config ? config->blockDimZ : 0,                           \
	config ? config->sharedMemBytes : 0}

/* The call, with host probes around it while they are active. */
#define launch_call(api, a, real, id, ...)                                                   \
	(__atomic_load_n(&shim_host_probes_active, __ATOMIC_RELAXED)                          \
		 ? launch_hosted(api, a, real, __VA_ARGS__)                                   \
		 : (real) ? (real)(__VA_ARGS__) : shim_unavailable(id))

/* Entry probes, the call, exit probes with its result. */
#define launch_hosted(api, a, real, ...)                                                     \
	({                                                                                    \
		shim_host_probes_call(0, api, a, 8, 0);                                       \
		CUresult rc_ = (real) ? (real)(__VA_ARGS__) : CUDA_ERROR_NOT_SUPPORTED;       \
		shim_host_probes_call(1, api, a, 8, (int)rc_);                                \
		rc_;                                                                          \
	})

#define BLOCK_KERNEL (blockDimX * blockDimY * blockDimZ)
#define BLOCK_EX (config ? config->blockDimX * config->blockDimY * config->blockDimZ : 0)
#define SMEM_EX (config ? config->sharedMemBytes : 0)

WATCHED_LAUNCH(cuLaunchKernel, PARAMS_KERNEL, f, HARGS_KERNEL, BLOCK_KERNEL, sharedMemBytes,
	       ARGS_KERNEL)
WATCHED_LAUNCH(cuLaunchKernel_ptsz, PARAMS_KERNEL, f, HARGS_KERNEL, BLOCK_KERNEL, sharedMemBytes,
	       ARGS_KERNEL)
WATCHED_LAUNCH(cuLaunchKernelEx, PARAMS_KERNEL_EX, f, HARGS_KERNEL_EX, BLOCK_EX, SMEM_EX,
	       ARGS_KERNEL_EX)
WATCHED_LAUNCH(cuLaunchKernelEx_ptsz, PARAMS_KERNEL_EX, f, HARGS_KERNEL_EX, BLOCK_EX, SMEM_EX,
	       ARGS_KERNEL_EX)
WATCHED_LAUNCH(cuLaunchCooperativeKernel, PARAMS_COOP, f, HARGS_KERNEL, BLOCK_KERNEL,
	       sharedMemBytes, ARGS_COOP)
WATCHED_LAUNCH(cuLaunchCooperativeKernel_ptsz, PARAMS_COOP, f, HARGS_KERNEL, BLOCK_KERNEL,
	       sharedMemBytes, ARGS_COOP)

CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *launchParamsList,
					      unsigned int numDevices, unsigned int flags)
{
	for (unsigned i = 0; launchParamsList && i < numDevices; i++)
		shim_launch_seen(launchParamsList[i].function, __func__);
	REAL_OR_FAIL(cuLaunchCooperativeKernelMultiDevice, real);
	return real(launchParamsList, numDevices, flags);
}

CUresult cuLaunch(CUfunction f)
{
	shim_launch_seen(f, __func__);
	REAL_OR_FAIL(cuLaunch, real);
	return real(f);
}

CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height)
{
	shim_launch_seen(f, __func__);
	REAL_OR_FAIL(cuLaunchGrid, real);
	return real(f, grid_width, grid_height);
}

CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream)
{
	shim_launch_seen(f, __func__);
	REAL_OR_FAIL(cuLaunchGridAsync, real);
	return real(f, grid_width, grid_height, hStream);
}

/* --- graph kernel nodes: the kernel is named when the node is made or changed; the node gets
 * the function per-kernel instrumentation picks for its block (a copy of the parameters) --- */

static const CUDA_KERNEL_NODE_PARAMS_v1 *node_v1(const CUDA_KERNEL_NODE_PARAMS_v1 *p,
						 CUDA_KERNEL_NODE_PARAMS_v1 *copy, const char *api)
{
	if (!p)
		return p;
	shim_launch_seen(p->func, api);
	if (!shim_lazy_enabled)
		return p;
	*copy = *p;
	copy->func = shim_lazy_pick(p->func, p->blockDimX * p->blockDimY * p->blockDimZ,
				    p->sharedMemBytes);
	return copy;
}

/* v2 and v3 (CUgraphNodeParams' kernel) have one layout: func, or kern when func is NULL. */
static const CUDA_KERNEL_NODE_PARAMS *node_v2(const CUDA_KERNEL_NODE_PARAMS *p,
					      CUDA_KERNEL_NODE_PARAMS *copy, const char *api)
{
	if (!p)
		return p;
	CUfunction f = p->func ? p->func : (CUfunction)p->kern;
	shim_launch_seen(f, api);
	if (!shim_lazy_enabled)
		return p;
	CUfunction use = shim_lazy_pick(f, p->blockDimX * p->blockDimY * p->blockDimZ,
					p->sharedMemBytes);
	if (use == f)
		return p;
	*copy = *p;
	copy->func = use;   /* func set: kern and ctx are ignored */
	return copy;
}

static CUgraphNodeParams *node_generic(CUgraphNodeParams *p, CUgraphNodeParams *copy,
				       const char *api)
{
	if (!p || p->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return p;
	CUDA_KERNEL_NODE_PARAMS k;
	const CUDA_KERNEL_NODE_PARAMS *use = node_v2((const CUDA_KERNEL_NODE_PARAMS *)&p->kernel, &k,
						     api);
	if (use == (const CUDA_KERNEL_NODE_PARAMS *)&p->kernel)
		return p;
	*copy = *p;
	memcpy(&copy->kernel, use, sizeof(copy->kernel));
	return copy;
}

_Static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS) == sizeof(((CUgraphNodeParams *)0)->kernel),
	       "kernel node parameters v2 and v3 differ");

CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
			      const CUgraphNode *dependencies, size_t numDependencies,
			      const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS_v1 c;
	nodeParams = node_v1(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphAddKernelNode, real);
	return real(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
				 const CUgraphNode *dependencies, size_t numDependencies,
				 const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS c;
	nodeParams = node_v2(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphAddKernelNode_v2, real);
	return real(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS_v1 c;
	nodeParams = node_v1(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphKernelNodeSetParams, real);
	return real(hNode, nodeParams);
}

CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS c;
	nodeParams = node_v2(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphKernelNodeSetParams_v2, real);
	return real(hNode, nodeParams);
}

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
					const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS_v1 c;
	nodeParams = node_v1(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphExecKernelNodeSetParams, real);
	return real(hGraphExec, hNode, nodeParams);
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
					   const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	CUDA_KERNEL_NODE_PARAMS c;
	nodeParams = node_v2(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphExecKernelNodeSetParams_v2, real);
	return real(hGraphExec, hNode, nodeParams);
}

CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			size_t numDependencies, CUgraphNodeParams *nodeParams)
{
	CUgraphNodeParams c;
	nodeParams = node_generic(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphAddNode, real);
	return real(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
			   const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
			   size_t numDependencies, CUgraphNodeParams *nodeParams)
{
	CUgraphNodeParams c;
	nodeParams = node_generic(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphAddNode_v2, real);
	return real(phGraphNode, hGraph, dependencies, dependencyData, numDependencies, nodeParams);
}

CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
	CUgraphNodeParams c;
	nodeParams = node_generic(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphNodeSetParams, real);
	return real(hNode, nodeParams);
}

CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
				  CUgraphNodeParams *nodeParams)
{
	CUgraphNodeParams c;
	nodeParams = node_generic(nodeParams, &c, __func__);
	REAL_OR_FAIL(cuGraphExecNodeSetParams, real);
	return real(hGraphExec, hNode, nodeParams);
}
