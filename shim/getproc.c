/* cuGetProcAddress: the CUDA runtime fetches nearly every entry point through it, so it must
 * hand out the shim's exports, never the real driver's. We ask the real driver (which applies
 * the requested version and stream flags), map the address it returns back to the exported
 * name with dladdr, and return our export of that name. */
#include "shim/forward.h"
#include "shim/log.h"
#include "shim/own.h"

#include <dlfcn.h>
#include <stdint.h>

static void *ours_for(const char *symbol, void *real)
{
	Dl_info di;
	if (real && dladdr(real, &di) && di.dli_sname && di.dli_saddr == real) {
		int i = shim_fn_lookup(di.dli_sname);
		if (i >= 0)
			return shim_fn_exports[i];
		shim_log("cuGetProcAddress(%s): the driver's %s is not a shim export: passed through "
			 "unintercepted", symbol, di.dli_sname);
	} else if (real) {
		shim_log("cuGetProcAddress(%s): the driver returned an unnamed address: passed "
			 "through unintercepted", symbol);
	}
	return real;
}

/* Without a driver: hand out nothing, so the caller sees the error at once. */
static CUresult no_driver(enum shim_fn_id id, void **pfn)
{
	if (pfn)
		*pfn = NULL;
	return shim_unavailable(id);
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus)
{
	shim_fnty_cuGetProcAddress_v2 *real = SHIM_REAL(cuGetProcAddress_v2);
	if (own_active())   /* the own driver: our exports by name and version */
		return own_getproc(symbol, pfn, cudaVersion, flags, symbolStatus);
	if (!real) {
		if (symbolStatus)
			*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return no_driver(SHIM_FN_cuGetProcAddress_v2, pfn);
	}
	CUresult rc = real(symbol, pfn, cudaVersion, flags, symbolStatus);
	if (rc == CUDA_SUCCESS && pfn && symbol)
		*pfn = ours_for(symbol, *pfn);
	return rc;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	shim_fnty_cuGetProcAddress *real = SHIM_REAL(cuGetProcAddress);
	if (own_active())
		return own_getproc(symbol, pfn, cudaVersion, flags, NULL);
	if (!real)
		return no_driver(SHIM_FN_cuGetProcAddress, pfn);
	CUresult rc = real(symbol, pfn, cudaVersion, flags);
	if (rc == CUDA_SUCCESS && pfn && symbol)
		*pfn = ours_for(symbol, *pfn);
	return rc;
}
