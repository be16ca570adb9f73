/* The own driver's launches (cuLaunchKernel, cuLaunchKernelEx and their _ptsz forms; the
 * runtime's own launch entry goes through own_launch too) and occupancy queries. A kernel is
 * built at its first launch (own_module.c); arguments come as kernelParams (one pointer per
 * parameter) or as one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER) laid out by the PTX's offsets. */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN
#include "shim/own_module.h"
#include "shim/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DYN_SHARED 49152u

CUresult own_launch(CUfunction fn, const unsigned grid[3], const unsigned block[3], unsigned shmem, CUstream stream,
		    void **params, void **extra)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	struct own_func *f = own_func_of(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	struct own_graph *g = own_capturing(stream);   /* otherwise one queue for all (own.h) */
	if (g)
		return own_graph_add_launch(g, fn, grid, block, shmem, params, extra);
	unsigned threads = block[0] * block[1] * block[2];
	if (!threads || !grid[0] || !grid[1] || !grid[2])
		return CUDA_ERROR_INVALID_VALUE;
	if (threads > 1024 || (f->maxntid && threads > f->maxntid))
		return CUDA_ERROR_INVALID_VALUE;
	unsigned want = shmem > DEFAULT_DYN_SHARED ? shmem : 0;
	if (f->max_dyn_shared > DEFAULT_DYN_SHARED && f->max_dyn_shared > want)
		want = f->max_dyn_shared;
	if (own_func_build(f, want) < 0)
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	unsigned built = f->dyn_shared ? f->dyn_shared : DEFAULT_DYN_SHARED;
	if (shmem > built) {
		shim_msg("own driver: kernel %s: %u bytes of dynamic shared memory asked, built with %u", f->name, shmem,
			 built);
		return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	}
	struct gp_bk_arg stack_args[32], *args = stack_args;
	if (f->nparams > 32 && !(args = calloc(f->nparams, sizeof(*args))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	const char *buf = NULL;
	size_t buflen = 0;
	if (!params && extra) {
		for (void **e = extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
			if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER)
				buf = e[1];
			else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE)
				buflen = *(size_t *)e[1];
		}
	}
	for (unsigned i = 0; i < f->nparams; i++) {
		args[i].size = f->params[i].size;
		if (params)
			args[i].data = params[i];
		else if (buf && f->params[i].offset + f->params[i].size <= buflen)
			args[i].data = buf + f->params[i].offset;
		else {
			rc = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
	}
	char err[512];
	int r = own.ops->launch(own.bk, own.queue, f->k, grid, block, args, f->nparams, err, sizeof(err));
	if (r < 0) {
		shim_msg("own driver: launch of %s failed: %s", f->name, err);
		rc = r == -E2BIG ? CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES : CUDA_ERROR_LAUNCH_FAILED;
	} else if (f->mod->launches && __atomic_load_n(&own.launch_queue, __ATOMIC_ACQUIRE)) {
		rc = own_device_launches_run(f->mod);   /* after it, what it launched (dynamic parallelism) */
	}
out:
	if (args != stack_args)
		free(args);
	return rc;
}

CUresult own_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			    unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
	const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
	return own_launch(f, g, b, shmem, s, params, extra);
}

static CUresult cooperative(CUfunction f, const unsigned g[3], const unsigned b[3], unsigned shmem, CUstream s,
			    void **params, void **extra);

/* Blocks per cluster a launch configuration asks for (1 without the attribute). */
static unsigned long long cluster_blocks(const CUlaunchConfig *c)
{
	unsigned long long n = 1;
	for (unsigned i = 0; i < c->numAttrs; i++)
		if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
			unsigned x = c->attrs[i].value.clusterDim.x, y = c->attrs[i].value.clusterDim.y,
				 z = c->attrs[i].value.clusterDim.z;
			n = (unsigned long long)(x ? x : 1) * (y ? y : 1) * (z ? z : 1);
		}
	return n;
}

CUresult own_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	int coop = 0;
	for (unsigned i = 0; i < c->numAttrs; i++)
		if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && c->attrs[i].value.cooperative)
			coop = 1;
	/* The lowering runs every grid as one-block clusters (%cluster_nctarank is 1): a kernel
	 * written for bigger clusters (distributed shared memory, cluster barriers) would run wrong,
	 * so it does not run; cuOccupancyMaxActiveClusters answers 0 for such clusters beforehand. */
	if (cluster_blocks(c) > 1) {
		struct own_func *of = own_func_of(f);
		shim_msg("own driver: launch of %s with clusters of %llu blocks refused: clusters of more than one "
			 "block (thread block clusters) are not supported", of ? of->name : "?", cluster_blocks(c));
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	}
	const unsigned g[3] = {c->gridDimX, c->gridDimY, c->gridDimZ}, b[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
	if (coop)
		return cooperative(f, g, b, c->sharedMemBytes, c->hStream, params, extra);
	return own_launch(f, g, b, c->sharedMemBytes, c->hStream, params, extra);
}

/* ---- occupancy: a block size the device takes; blocks resident per SM ---- */

static int block_limit(struct own_func *f)
{
	int lim = 1024;
	if (f->maxntid && (int)f->maxntid < lim)
		lim = (int)f->maxntid;
	return lim;
}

/* Blocks of `threads` resident on one SM (a compute unit) at once. Where the backend knows how
 * many work-groups run at once (a CPU: one per compute unit) that many, so that a cooperative
 * launch sized by these answers really has every block running, as grid-wide sync needs;
 * otherwise as many as fit 2048 threads (at most 32), a GPU's answer. */
static unsigned resident_per_sm(unsigned threads)
{
	if (own.info.resident_groups) {
		unsigned cu = own.info.compute_units ? own.info.compute_units : 1;
		return own.info.resident_groups / cu ? own.info.resident_groups / cu : 1;
	}
	unsigned per = 2048 / (threads ? threads : 1);
	return per > 32 ? 32 : per ? per : 1;
}

CUresult own_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, CUfunction fn, int bs, size_t shmem,
								   unsigned flags)
{
	(void)shmem, (void)flags;
	struct own_func *f = own_func_of(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n || bs <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	*n = bs > block_limit(f) ? 0 : (int)resident_per_sm((unsigned)bs);
	return CUDA_SUCCESS;
}

CUresult own_cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction fn, int bs, size_t shmem)
{
	return own_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, fn, bs, shmem, 0);
}

/* Clusters of the configuration's size resident at once: one-block clusters as many as blocks
 * fit; bigger ones none (the launch refuses them, above). */
CUresult own_cuOccupancyMaxActiveClusters(int *n, CUfunction fn, const CUlaunchConfig *c)
{
	struct own_func *f = own_func_of(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n || !c)
		return CUDA_ERROR_INVALID_VALUE;
	unsigned long long threads = (unsigned long long)c->blockDimX * c->blockDimY * c->blockDimZ;
	if (!threads || threads > (unsigned long long)block_limit(f))
		return CUDA_ERROR_INVALID_VALUE;
	*n = cluster_blocks(c) > 1 ? 0 : (int)(own.info.compute_units * resident_per_sm((unsigned)threads));
	return CUDA_SUCCESS;
}

CUresult own_cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *bs, CUfunction fn,
						       CUoccupancyB2DSize b2d, size_t shmem, int limit,
						       unsigned flags)
{
	(void)b2d, (void)shmem, (void)flags;
	struct own_func *f = own_func_of(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!min_grid || !bs)
		return CUDA_ERROR_INVALID_VALUE;
	int b = block_limit(f);
	if (limit > 0 && limit < b)
		b = limit;
	*bs = b;
	*min_grid = (int)(own.info.compute_units * resident_per_sm((unsigned)b));
	return CUDA_SUCCESS;
}

CUresult own_cuOccupancyMaxPotentialBlockSize(int *min_grid, int *bs, CUfunction fn, CUoccupancyB2DSize b2d,
					      size_t shmem, int limit)
{
	return own_cuOccupancyMaxPotentialBlockSizeWithFlags(min_grid, bs, fn, b2d, shmem, limit, 0);
}

CUresult own_cuOccupancyAvailableDynamicSMemPerBlock(size_t *n, CUfunction fn, int blocks, int bs)
{
	(void)blocks, (void)bs;
	if (!own_func_of(fn))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*n = DEFAULT_DYN_SHARED;
	return CUDA_SUCCESS;
}

/* A cooperative launch: the grid must fit at once (every block resident: grid-wide sync spins
 * until all have arrived), which the occupancy answers promise. */
static CUresult cooperative(CUfunction f, const unsigned g[3], const unsigned b[3], unsigned shmem, CUstream s,
			    void **params, void **extra)
{
	unsigned long long blocks = (unsigned long long)g[0] * g[1] * g[2];
	if (blocks > (unsigned long long)resident_per_sm(b[0] * b[1] * b[2]) * own.info.compute_units)
		return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	return own_launch(f, g, b, shmem, s, params, extra);
}

CUresult own_cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				       unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
	const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
	return cooperative(f, g, b, shmem, s, params, NULL);
}
