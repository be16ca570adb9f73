/* cuGetProcAddress in the own driver: a name and a CUDA version give the export that version's
 * headers meant (cuMemAlloc at 3020 and later: cuMemAlloc_v2), and with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM its _ptds/_ptsz form. The answer is the shim's
 * own export of that name (never an own_* function directly), so the interception layer stays
 * on the path as with the real driver. */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN
#include "shim/log.h"

#include <stdio.h>
#include <string.h>

/* The CUDA version in which each versioned name appeared, where it is later than the name's
 * first version and the signature changed (a caller asking for an older version gets the older
 * form). Versioned names not listed here are taken at any version. */
static const struct { const char *name; int since; } since[] = {
	{"cuCtxCreate_v3", 11040},
	{"cuCtxCreate_v4", 12050},
	{"cuStreamGetCaptureInfo_v2", 11030},
	{"cuStreamGetCaptureInfo_v3", 12030},
	{"cuEventElapsedTime_v2", 12080},
	{"cuGraphAddNode_v2", 12030},
	{"cuGraphNodeSetParams_v2", 12030},
	{"cuGraphGetEdges_v2", 12030},
	{"cuGraphNodeGetDependencies_v2", 12030},
	{"cuGraphNodeGetDependentNodes_v2", 12030},
	{"cuGraphAddDependencies_v2", 12030},
	{"cuGraphRemoveDependencies_v2", 12030},
	{"cuStreamUpdateCaptureDependencies_v2", 12030},
	{"cuStreamBeginCapture_v2", 10010},
	{"cuCtxGetDevice_v2", 13000},
	{"cuCtxSynchronize_v2", 13000},
	{"cuMemcpyBatchAsync_v2", 13000},
	{"cuMemcpy3DBatchAsync_v2", 13000},
	{"cuMemPrefetchAsync_v2", 12020},
	{"cuMemAdvise_v2", 12020},
	{"cuDeviceGetUuid_v2", 11040},
	{"cuGraphExecUpdate_v2", 12000},
	{"cuGraphKernelNodeGetParams_v2", 12000},
	{"cuGraphKernelNodeSetParams_v2", 12000},
	{"cuGraphExecKernelNodeSetParams_v2", 12000},
	{"cuGraphAddKernelNode_v2", 12000},
	{"cuGetProcAddress_v2", 12000},
	{"cuIpcOpenMemHandle_v2", 11000},
	{"cuDevicePrimaryCtxRelease_v2", 11000},
	{"cuDevicePrimaryCtxReset_v2", 11000},
	{"cuDevicePrimaryCtxSetFlags_v2", 11000},
	{"cuGraphInstantiateWithParams", 12000},
	{"cuLinkCreate_v2", 6050},
	{"cuLinkAddData_v2", 6050},
	{"cuLinkAddFile_v2", 6050},
	{"cuMemHostRegister_v2", 6050},
	{"cuGraphicsResourceSetMapFlags_v2", 6050},
};

static int since_of(const char *name)
{
	for (size_t i = 0; i < sizeof(since) / sizeof(since[0]); i++)
		if (!strcmp(since[i].name, name))
			return since[i].since;
	return 0;
}

static int resolve(const char *symbol, int version, unsigned long long flags, int *too_old)
{
	char name[256];
	int best = -1;
	*too_old = 0;
	for (int v = 1; v <= 9; v++) {
		if (v == 1)
			snprintf(name, sizeof(name), "%s", symbol);
		else
			snprintf(name, sizeof(name), "%s_v%d", symbol, v);
		int id = shim_fn_lookup(name);
		if (id < 0)
			continue;
		if (version >= since_of(name))
			best = id;
		else if (best < 0)
			*too_old = 1;
	}
	if (best < 0 || !(flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
		return best;
	const char *base = shim_fn_names[best];
	static const char *const suffix[] = {"_ptds", "_ptsz"};
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s%s", base, suffix[i]);
		int id = shim_fn_lookup(name);
		if (id >= 0)
			return id;
	}
	return best;
}

CUresult own_getproc(const char *symbol, void **pfn, int version, cuuint64_t flags,
		     CUdriverProcAddressQueryResult *status)
{
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	int too_old;
	int id = resolve(symbol, version, flags, &too_old);
	if (id < 0) {
		*pfn = NULL;
		if (status)
			*status = too_old ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		shim_log("own driver: cuGetProcAddress(%s, %d, %#llx): not found", symbol, version,
			 (unsigned long long)flags);
		return CUDA_ERROR_NOT_FOUND;
	}
	*pfn = shim_fn_exports[id];
	if (shim_log_enabled && !__atomic_load_n(&shim_real_fn[id], __ATOMIC_RELAXED))
		shim_log("own driver: cuGetProcAddress(%s, %d, %#llx): %s, not implemented", symbol, version,
			 (unsigned long long)flags, shim_fn_names[id]);
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

CUresult own_cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *status)
{
	return own_getproc(symbol, pfn, version, flags, status);
}

CUresult own_cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return own_getproc(symbol, pfn, version, flags, NULL);
}
