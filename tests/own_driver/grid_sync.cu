// Cooperative groups' grid sync on the own driver. cg::this_grid().sync() checks its workspace
// (%envreg1/2) with `@p bra; trap;` first: where the workspace was a module variable, PoCL
// computed its address as 0 in some threads after a thread-dependent branch (the `if` of
// `after_branch` below) and the launch failed with cudaErrorIllegalInstruction, though no thread
// misbehaved. Then cuda::barrier arrive/wait (an mbarrier) in the block, as simpleAWBarrier uses
// them after its grid sync. Each line: the kernel, the launch's error, what it computed, and how
// many of its threads wrote a wrong value.
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cstdio>
namespace cg = cooperative_groups;

__global__ void plain(int *out)
{
	cg::this_grid().sync();
	out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

// every block adds its number + 1 before the sync; after it, every thread reads the total
__global__ void after_branch(int *out, int *total)
{
	if (threadIdx.x == 0)
		atomicAdd(total, blockIdx.x + 1);
	cg::this_grid().sync();
	out[blockIdx.x * blockDim.x + threadIdx.x] = *total;
}

__global__ void arrive_wait(int *out)
{
#pragma nv_diag_suppress static_var_with_dynamic_init
	__shared__ cuda::barrier<cuda::thread_scope_block> bar;
	__shared__ int v[256];
	if (threadIdx.x == 0)
		init(&bar, blockDim.x);
	__syncthreads();
	v[threadIdx.x] = threadIdx.x;
	auto token = bar.arrive();
	bar.wait(std::move(token));
	out[threadIdx.x] = v[(threadIdx.x + 1) % blockDim.x];
}

static int check(const char *what, cudaError_t e, const int *d, int n, int (*want)(int))
{
	int h[1024], bad = 0;
	cudaError_t s = cudaDeviceSynchronize();
	cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
	for (int i = 0; i < n; i++)
		bad += h[i] != want(i);
	printf("%s: launch %s, sync %s, %d of %d wrong\n", what, cudaGetErrorString(e), cudaGetErrorString(s), bad, n);
	return bad || e != cudaSuccess || s != cudaSuccess;
}
static int one(int) { return 1; }
static int total2(int) { return 1 + 2; }
static int next128(int i) { return (i + 1) % 128; }

int main()
{
	int *d, *t, fail = 0;
	cudaMalloc(&d, 4096);
	cudaMalloc(&t, 4);
	cudaMemset(t, 0, 4);
	void *a1[] = {&d}, *a2[] = {&d, &t};
	fail |= check("plain, 2 blocks of 64", cudaLaunchCooperativeKernel((void *)plain, 2, 64, a1, 0, 0), d, 128, one);
	fail |= check("after_branch, 2 blocks of 32",
		      cudaLaunchCooperativeKernel((void *)after_branch, 2, 32, a2, 0, 0), d, 64, total2);
	arrive_wait<<<1, 128>>>(d);
	fail |= check("arrive_wait, 1 block of 128", cudaGetLastError(), d, 128, next128);
	return fail;
}
