// Thrust: sort, transform-reduce, unique, copy_if on device vectors (device code only).
// G-archs: sm_90 (ptxas -g on the -G build of this source takes 5-12 s of CPU per arch)
#include <thrust/device_vector.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>
#include <thrust/unique.h>
#include <thrust/copy.h>
#include <thrust/functional.h>
#include <thrust/sequence.h>
struct Sq { __host__ __device__ float operator()(float x) const { return x * x; } };
struct Odd { __host__ __device__ bool operator()(int x) const { return x & 1; } };
float thrust_work(thrust::device_vector<float> &f, thrust::device_vector<int> &i, thrust::device_vector<int> &o)
{
	thrust::sort(f.begin(), f.end(), thrust::greater<float>());
	thrust::sequence(i.begin(), i.end());
	thrust::sort_by_key(i.begin(), i.end(), f.begin());
	auto e = thrust::unique(i.begin(), i.end());
	thrust::copy_if(i.begin(), e, o.begin(), Odd());
	return thrust::transform_reduce(f.begin(), f.end(), Sq(), 0.f, thrust::plus<float>());
}
