/* gpuprobe: the driver API functions host probes see, by number: what struct gp_host_ctx's
 * api_id holds. Declare a map key as gp_api_id_t (gpuprobe/output.h) and `gpuprobe run` prints the
 * function's name instead of the number:
 *
 *   __type(key, gp_api_id_t);   ...   gp_count(&calls, ctx->api_id);   ->   @calls[cuLaunchKernel]: 4
 *
 * The numbers are a stable list, only ever appended to (a probe compiled today keeps meaning the
 * same function). Names are the base names: cuLaunchKernel_ptsz, cuMemcpyHtoD_v2 and the like have
 * the id of cuLaunchKernel, cuMemcpyHtoD. 0: a function not in the list. */
#ifndef GPUPROBE_API_H
#define GPUPROBE_API_H

#define GP_API_LIST(X)                                                                     \
	X(1, cuLaunchKernel) X(2, cuLaunchKernelEx) X(3, cuLaunchCooperativeKernel)           \
	X(4, cuCtxSynchronize) X(5, cuStreamSynchronize) X(6, cuMemcpy) X(7, cuMemcpyAsync)   \
	X(8, cuMemcpyHtoD) X(9, cuMemcpyDtoH) X(10, cuMemcpyDtoD) X(11, cuMemcpyHtoDAsync)    \
	X(12, cuMemcpyDtoHAsync)

enum gp_api {
	GP_API_UNKNOWN = 0,
#define GP_API_ENUM_(id, name) GP_API_##name = id,
	GP_API_LIST(GP_API_ENUM_)
#undef GP_API_ENUM_
};

#if !defined(__bpf__) && !defined(__BPF__)
#include <string.h>

/* The name of api id, or NULL (host C: the output and the host probe runner). */
static inline const char *gp_api_name(unsigned id)
{
	switch (id) {
#define GP_API_CASE_(id, name) case id: return #name;
	GP_API_LIST(GP_API_CASE_)
#undef GP_API_CASE_
	}
	return NULL;
}

/* The id of a base name (suffixes _v2, _ptsz ... already removed), 0 when not in the list. */
static inline unsigned gp_api_id(const char *base)
{
#define GP_API_CMP_(id, name) if (!strcmp(base, #name)) return id;
	GP_API_LIST(GP_API_CMP_)
#undef GP_API_CMP_
	return 0;
}
#endif

#endif
