// A sum reduction as CUDA programs write it (bench/spirv_kernel/run.sh): each block of 256
// threads sums 512 floats, a shared-memory tree down to 64 values, then warp 0 alone finishes
// with shuffles. reduce.cl is the same sum as OpenCL C writes it without sub-groups.
extern "C" __global__ void reduce(const float *in, float *out, int n)
{
	__shared__ float s[256];
	unsigned t = threadIdx.x, i = blockIdx.x * 512 + t;
	float v = (i < n ? in[i] : 0.0f) + (i + 256 < n ? in[i + 256] : 0.0f);
	s[t] = v;
	__syncthreads();
	for (unsigned k = 128; k > 32; k >>= 1) {
		if (t < k)
			s[t] = v = v + s[t + k];
		__syncthreads();
	}
	if (t < 32) {
		v += s[t + 32];
		for (int o = 16; o > 0; o >>= 1)
			v += __shfl_down_sync(0xffffffffu, v, o);
	}
	if (t == 0)
		out[blockIdx.x] = v;
}
