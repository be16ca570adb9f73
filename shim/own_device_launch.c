/* Dynamic parallelism on the own driver: the launches a kernel made on the device wait in the
 * device launch queue (spirv/spirv.h, spirv/lower_launch.c) until the kernel has finished; then
 * each runs, in the order they were made, and the launches it made run before the next one
 * (own_launch calls back here for it): a child grid and its descendants finish before its next
 * sibling starts, which is what launches into one stream promise, and a parent grid is complete
 * only when its children are, as in CUDA. Children may run in this order on the GPU as well:
 * CUDA 12's device runtime gives a parent no way to wait for them. A device-side cudaMemcpyAsync
 * waits in the queue as well and is made in its place. */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN
#include "shim/own_module.h"
#include "shim/log.h"
#include "spirv/spirv.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 24   /* CUDA's limit on nesting */

static __thread unsigned depth;

CUresult own_device_launches_run(struct own_module *m)
{
	uint8_t *q = (uint8_t *)(uintptr_t)__atomic_load_n(&own.launch_queue, __ATOMIC_ACQUIRE);
	if (!q)
		return CUDA_SUCCESS;
	char err[256];
	if (own.ops->queue_finish(own.bk, own.queue, err, sizeof(err)) < 0) {
		shim_msg("own driver: waiting for a kernel that launches kernels: %s", err);
		return CUDA_ERROR_LAUNCH_FAILED;
	}
	CUresult rc = own_ready();   /* a trap or failed assert in it */
	if (rc)
		return rc;
	uint32_t used = __atomic_exchange_n((uint32_t *)q, 0, __ATOMIC_ACQ_REL);
	uint32_t refused = __atomic_exchange_n((uint32_t *)(q + 4), 0, __ATOMIC_ACQ_REL);
	uint32_t room = SPIRV_LAUNCH_QUEUE_BYTES - SPIRV_LAUNCH_QUEUE_HEAD;
	if (used > room)   /* takes past the end were refused and counted */
		used = room - room % SPIRV_LAUNCH_RECORD;
	if (refused)
		shim_msg("own driver: %u device launch(es) refused: the launch queue holds %u pending launches",
			 refused, room / SPIRV_LAUNCH_RECORD);
	if (!used)
		return refused ? CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES : CUDA_SUCCESS;
	if (depth >= MAX_DEPTH) {
		shim_msg("own driver: device launches nested deeper than %u", MAX_DEPTH);
		return CUDA_ERROR_LAUNCH_FAILED;
	}
	/* the children's own launches reuse the queue: take this generation out first */
	uint8_t *recs = malloc(used);
	if (!recs)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(recs, q + SPIRV_LAUNCH_QUEUE_HEAD, used);
	depth++;
	for (uint32_t off = 0; off + SPIRV_LAUNCH_RECORD <= used && rc == CUDA_SUCCESS; off += SPIRV_LAUNCH_RECORD) {
		const uint8_t *r = recs + off;
		uint64_t token;
		uint32_t dims[7], made;
		memcpy(&token, r, 8);
		memcpy(dims, r + 8, sizeof(dims));
		memcpy(&made, r + 36, 4);
		if (made != 1)
			continue;   /* a parameter buffer taken, never launched */
		if (token == 0) {   /* a device-side cudaMemcpyAsync, in its place among the launches */
			uint64_t cp[3];
			memcpy(cp, r + SPIRV_LAUNCH_PARAMS, sizeof(cp));
			rc = own_cuMemcpy((CUdeviceptr)cp[0], (CUdeviceptr)cp[1], (size_t)cp[2]);
			if (rc)
				shim_msg("own driver: a device-side cudaMemcpyAsync of %llu bytes failed (%d)",
					 (unsigned long long)cp[2], (int)rc);
			continue;
		}
		struct own_func *f = own_func_by_token(m, token);
		if (!f) {
			shim_msg("own driver: a device launch names no kernel of the loaded modules (%#llx)",
				 (unsigned long long)token);
			rc = CUDA_ERROR_INVALID_HANDLE;
			break;
		}
		size_t size = SPIRV_LAUNCH_PARAM_BYTES;
		void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)(r + SPIRV_LAUNCH_PARAMS),
				 CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
		rc = own_launch((CUfunction)f, dims, dims + 3, dims[6], NULL, NULL, extra);
		if (rc)
			shim_msg("own driver: device launch of %s <<<(%u, %u, %u), (%u, %u, %u), %u>>> failed (%d)", f->name,
				 dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6], (int)rc);
	}
	depth--;
	free(recs);
	return rc;
}
