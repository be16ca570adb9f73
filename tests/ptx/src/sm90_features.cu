// archs: sm_90 sm_100
// Hopper-and-later device features: programmatic dependent launch, cluster special registers,
// fences with scopes, red.async-free release/acquire atomics through libcu++.
#include <cuda/atomic>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void pdl(float *p, cuda::atomic<int, cuda::thread_scope_device> *flag)
{
	cudaGridDependencySynchronize();
	p[threadIdx.x] *= 2;
	flag->fetch_add(1, cuda::memory_order_release);
	while (flag->load(cuda::memory_order_acquire) < 2) {}
	cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
	cudaTriggerProgrammaticLaunchCompletion();
	unsigned cid, nc;
	asm("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
	asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(nc));
	p[threadIdx.x + 1] = (float)(cid + nc + cg::this_grid().block_rank());
}
