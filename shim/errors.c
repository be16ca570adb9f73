/* cuGetErrorName / cuGetErrorString: forwarded, except that without a real driver they still
 * name the errors the shim itself returns, so an application's error message says what happened
 * ("CUDA_ERROR_NO_DEVICE") rather than nothing. */
#include "shim/forward.h"

#include <stddef.h>

struct own_error {
	CUresult code;
	const char *name, *text;
};

static const struct own_error own_errors[] = {
	{CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
	{CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
	 "initialization error (gpuprobe: no real CUDA driver was found)"},
	{CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
	 "no CUDA-capable device is detected (gpuprobe: no real CUDA driver was found)"},
	{CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};

static const struct own_error *own(CUresult e)
{
	for (size_t i = 0; i < sizeof(own_errors) / sizeof(own_errors[0]); i++)
		if (own_errors[i].code == e)
			return &own_errors[i];
	return NULL;
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	shim_fnty_cuGetErrorName *real = SHIM_REAL(cuGetErrorName);
	if (real)
		return real(error, pStr);
	const struct own_error *o = own(error);
	if (pStr)
		*pStr = o ? o->name : NULL;
	return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	shim_fnty_cuGetErrorString *real = SHIM_REAL(cuGetErrorString);
	if (real)
		return real(error, pStr);
	const struct own_error *o = own(error);
	if (pStr)
		*pStr = o ? o->text : NULL;
	return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
