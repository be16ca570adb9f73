// The app the examples watch: vectorAdd (bpftime's examples probe its mangled name
// _Z9vectorAddPKfS0_Pf) on G blocks of 32 threads, and a kernel with a data-dependent branch
// (odd lanes take one path, even lanes the other) for the divergence example.
// usage: vec_add [G]   (default 4)
#include <cstdio>
#include <cstdlib>

__global__ void vectorAdd(const float *A, const float *B, float *C)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	C[i] = A[i] + B[i];
}

__global__ void oddEven(float *C)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = C[i];
	if (threadIdx.x & 1) {
		for (int k = 0; k < 2 + (int)v % 3; k++)   /* a data-dependent loop: a real branch */
			v = v * 0.75f + 1.0f;
	} else {
		v *= 0.5f;
	}
	C[i] = v;
}

int main(int argc, char **argv)
{
	int G = argc > 1 ? atoi(argv[1]) : 4;
	int n = G * 32;
	float *a, *b, *c;
	cudaMallocManaged(&a, n * sizeof(float));
	cudaMallocManaged(&b, n * sizeof(float));
	cudaMallocManaged(&c, n * sizeof(float));
	for (int i = 0; i < n; i++) {
		a[i] = i;
		b[i] = 2 * i;
	}
	vectorAdd<<<G, 32>>>(a, b, c);
	oddEven<<<G, 32>>>(c);
	cudaDeviceSynchronize();
	double s = 0;
	for (int i = 0; i < n; i++)
		s += c[i];
	printf("vec_add: G=%d n=%d sum=%.1f\n", G, n, s);
	return 0;
}
