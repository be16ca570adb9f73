// CUB: device-wide reductions (sum, max, arg-min, custom operator, by key).
// G-archs: sm_90 (ptxas -g on the -G build of this source takes 5-12 s of CPU per arch)
#include <cub/device/device_reduce.cuh>
struct AbsMax { __device__ float operator()(float a, float b) const { return fabsf(a) > fabsf(b) ? a : b; } };
void reduce(const float *in, float *out, int n, void *tmp, size_t &bytes, cub::KeyValuePair<int, float> *kv, const int *keys, int *uk, int *nruns)
{
	cub::DeviceReduce::Sum(tmp, bytes, in, out, n);
	cub::DeviceReduce::Max(tmp, bytes, in, out, n);
	cub::DeviceReduce::ArgMin(tmp, bytes, in, kv, n);
	cub::DeviceReduce::Reduce(tmp, bytes, in, out, n, AbsMax(), 0.f);
	cub::DeviceReduce::ReduceByKey(tmp, bytes, keys, uk, in, out, nruns, cuda::std::plus<float>(), n);
}
