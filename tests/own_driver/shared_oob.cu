// A kernel that reaches outside its block's shared memory (an index below zero, and one far past
// the end, from the input so nvcc cannot see them) on the own driver with GPUPROBE_SHARED_CHECK=1
// (shared_oob.env): on a GPU that is an illegal address; on PoCL the access goes wherever it
// points, 4 GiB past the window for index -1 read as unsigned (cuda-samples' radixSortThrust was
// killed by signal 11 so). Checked, the access goes to a sink past the window, the launch fails
// with cudaErrorIllegalAddress and one line of the shim's, and every later call returns that
// error, as on a GPU. A first launch within bounds is exact.
#include <cstdio>

__global__ void scatter(const int *idx, int *out)
{
	__shared__ int s[64];
	s[threadIdx.x] = 0;
	__syncthreads();
	s[idx[threadIdx.x]] = threadIdx.x + 1;
	__syncthreads();
	out[threadIdx.x] = s[threadIdx.x];
}

int main()
{
	int h[64], *di, *dout;
	cudaMalloc(&di, sizeof(h));
	cudaMalloc(&dout, sizeof(h));
	for (int i = 0; i < 64; i++)
		h[i] = 63 - i;
	cudaMemcpy(di, h, sizeof(h), cudaMemcpyHostToDevice);
	scatter<<<1, 64>>>(di, dout);
	cudaError_t sync = cudaDeviceSynchronize();
	cudaMemcpy(h, dout, sizeof(h), cudaMemcpyDeviceToHost);
	int bad = 0;
	for (int i = 0; i < 64; i++)
		bad += h[i] != 64 - i;
	printf("in bounds: sync %s, %d of 64 wrong\n", cudaGetErrorName(sync), bad);

	h[5] = -1;
	h[9] = 1 << 28;
	cudaMemcpy(di, h, sizeof(h), cudaMemcpyHostToDevice);
	scatter<<<1, 64>>>(di, dout);
	cudaError_t launch = cudaGetLastError();
	sync = cudaDeviceSynchronize();
	printf("out of bounds: launch %s, sync %s\n", cudaGetErrorName(launch), cudaGetErrorName(sync));
	printf("then: cudaMalloc %s\n", cudaGetErrorName(cudaMalloc(&di, 16)));
	return 0;
}
