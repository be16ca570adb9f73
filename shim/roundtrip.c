/* GPUPROBE_ROUNDTRIP=1 (and no probes): every module with PTX for this GPU is parsed, printed
 * again and loaded from that PTX, with no probe spliced in. It measures what the pipeline itself
 * costs (the driver JIT of our printed PTX against nvcc's SASS): the zero-probe round trip of
 * bench/overhead. Any failure loads the module as given. */
#include "shim/roundtrip.h"
#include "shim/forward.h"
#include "shim/log.h"
#include "common/env.h"

#include "ptx-frontend/fatbin.h"
#include "ptx-frontend/ir.h"

#include <stdlib.h>
#include <string.h>

int shim_roundtrip_enabled;

__attribute__((constructor)) static void roundtrip_env(void)
{
	shim_roundtrip_enabled = gp_env_flag(GP_VAR_ROUNDTRIP);
}

/* Compute capability of the current context's device (e.g. 90), 0 when unknown. */
static unsigned current_sm(void)
{
	CUdevice dev;
	int major = 0, minor = 0;
	if (SHIM_REAL(cuCtxGetDevice)(&dev) != CUDA_SUCCESS ||
	    SHIM_REAL(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
					    dev) != CUDA_SUCCESS ||
	    SHIM_REAL(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
					    dev) != CUDA_SUCCESS)
		return 0;
	return (unsigned)(major * 10 + minor);
}

int shim_roundtrip_transform(struct shim_image *img, const struct shim_module *m)
{
	char err[512] = "";
	void *payload = NULL;
	const char *ptx = NULL;
	size_t len = 0;
	if (!img->data)
		return 0;
	if (img->kind == MODULE_IMAGE_PTX) {
		ptx = img->data;
		len = strlen(ptx);
	} else if (img->kind == MODULE_IMAGE_FATBIN || img->kind == MODULE_IMAGE_WRAPPER) {
		struct fatbin *fb = NULL;
		unsigned sm = current_sm();
		if (!sm || fatbin__open_mem(img->data, img->size, &fb, err, sizeof(err)))
			return 0;
		const struct fatbin_entry *e = fatbin__best_ptx(fb, sm);
		int rc = e ? fatbin__entry_data(e, &payload, &len, err, sizeof(err)) : -1;
		fatbin__close(fb);
		if (rc)
			return 0;
		ptx = payload;
	} else {
		return 0;
	}
	ir_module *mod = ptx_parse(ptx, len, err, sizeof(err));
	free(payload);
	if (!mod) {
		shim_msg("module %u: round trip: PTX not parsed (%s); loaded unchanged", m->seq, err);
		return 0;
	}
	size_t out_len = 0;
	char *out = ptx_print(mod, &out_len);
	ir_module_free(mod);
	if (!out)
		return 0;
	free(img->owned);
	img->owned = out;
	img->data = out;
	img->size = out_len + 1;
	img->kind = MODULE_IMAGE_PTX;
	shim_log("module %u: round trip (parsed and printed PTX, no probes)", m->seq);
	return 1;
}
