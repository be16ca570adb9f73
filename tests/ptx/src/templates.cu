// Templates: one kernel body instantiated for several types and compile-time sizes.
#include <cstdint>
template <typename T, int UNROLL> __global__ void scale(T *p, T f, int n)
{
	int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
	for (int u = 0; u < UNROLL; u++)
		if (base + u < n)
			p[base + u] = p[base + u] * f;
}
template <typename T> struct Pair { T a, b; };
template <typename T> __global__ void swap_pairs(Pair<T> *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) { T t = p[i].a; p[i].a = p[i].b; p[i].b = t; }
}
template __global__ void scale<float, 1>(float *, float, int);
template __global__ void scale<float, 4>(float *, float, int);
template __global__ void scale<double, 2>(double *, double, int);
template __global__ void scale<int8_t, 8>(int8_t *, int8_t, int);
template __global__ void scale<uint64_t, 4>(uint64_t *, uint64_t, int);
template __global__ void scale<short, 3>(short *, short, int);
template __global__ void swap_pairs<char>(Pair<char> *, int);
template __global__ void swap_pairs<double>(Pair<double> *, int);
