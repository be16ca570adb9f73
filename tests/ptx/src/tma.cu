// archs: sm_90 sm_100
// Asynchronous bulk copies and mbarriers (TMA-style), through libcu++'s cuda::ptx wrappers and
// raw PTX.
#include <cuda/barrier>
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;
__global__ void bulk_copy(const int4 *gsrc, int4 *gdst)
{
	__shared__ alignas(128) int4 buf[256];
	__shared__ uint64_t bar;
	if (threadIdx.x == 0) {
		ptx::mbarrier_init(&bar, 1);
		ptx::fence_proxy_async(ptx::space_shared);
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, buf, gsrc, sizeof(buf), &bar);
		ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, sizeof(buf));
	}
	while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {}
	buf[threadIdx.x].x += 1;
	ptx::fence_proxy_async(ptx::space_shared);
	__syncthreads();
	if (threadIdx.x == 0) {
		ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, gdst, buf, sizeof(buf));
		ptx::cp_async_bulk_commit_group();
		ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
	}
}
__global__ void barrier_api(float *data)
{
	__shared__ cuda::barrier<cuda::thread_scope_block> b;
	if (threadIdx.x == 0) init(&b, blockDim.x);
	__syncthreads();
	data[threadIdx.x] *= 2;
	auto token = b.arrive();
	b.wait(std::move(token));
	data[threadIdx.x] += 1;
}
