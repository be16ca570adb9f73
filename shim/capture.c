/* The shim's own driver calls run with stream capture relaxed (capture.h). */
#include "shim/capture.h"
#include "shim/forward.h"

void shim_relax(struct shim_relaxed *r)
{
	shim_fnty_cuThreadExchangeStreamCaptureMode *x = SHIM_REAL(cuThreadExchangeStreamCaptureMode);
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	r->swapped = x && x(&m) == CUDA_SUCCESS;
	r->mode = (int)m;
}

void shim_unrelax(const struct shim_relaxed *r)
{
	if (!r->swapped)
		return;
	shim_fnty_cuThreadExchangeStreamCaptureMode *x = SHIM_REAL(cuThreadExchangeStreamCaptureMode);
	CUstreamCaptureMode m = (CUstreamCaptureMode)r->mode;
	x(&m);
}
