// The smallest module worth reading: a C kernel and a C++ template kernel (mangled name).
template <int N> __global__ void fill(int *p) { p[threadIdx.x] = N; }
template __global__ void fill<3>(int *);
extern "C" __global__ void tiny(float *x) { x[threadIdx.x] *= 2.0f; }
