// Asynchronous global-to-shared copies (cp.async on sm_80+, plain copies before).
#include <cuda_pipeline.h>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
__global__ void pipeline(const float4 *in, float4 *out, int n)
{
	__shared__ float4 s[2][128];
	int t = threadIdx.x;
	__pipeline_memcpy_async(&s[0][t], &in[t], sizeof(float4));
	__pipeline_commit();
	__pipeline_memcpy_async(&s[1][t], &in[t + 128], sizeof(float4));
	__pipeline_commit();
	__pipeline_wait_prior(1);
	float4 a = s[0][t];
	__pipeline_wait_prior(0);
	float4 b = s[1][t];
	out[t] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
__global__ void cg_memcpy(const int *in, int *out)
{
	__shared__ int s[512];
	cg::thread_block tb = cg::this_thread_block();
	cg::memcpy_async(tb, s, in, sizeof(s));
	cg::wait(tb);
	out[threadIdx.x] = s[511 - threadIdx.x];
}
