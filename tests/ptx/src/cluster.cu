// archs: sm_90 sm_100
// Thread block clusters: cluster dims, distributed shared memory, cluster barriers.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) cluster_hist(const int *in, int *out, int n)
{
	__shared__ int local[64];
	cg::cluster_group cluster = cg::this_cluster();
	unsigned rank = cluster.block_rank();
	if (threadIdx.x < 64) local[threadIdx.x] = 0;
	cluster.sync();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		int v = in[i];
		int *dst = cluster.map_shared_rank(local, (v & 1));
		atomicAdd(dst + (v & 63), 1);
	}
	cluster.sync();
	if (threadIdx.x < 64) atomicAdd(&out[threadIdx.x], local[threadIdx.x] + (int)rank + (int)cluster.num_blocks());
}
__global__ void __launch_bounds__(128, 1, 4) cluster_bounds(float *p)
{
	cg::cluster_group cluster = cg::this_cluster();
	p[threadIdx.x] += cluster.dim_blocks().x;
	cluster.sync();
}
