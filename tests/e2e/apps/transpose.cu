// Blocks of 64 threads (two warps) that move 512 values through shared memory twice, each
// move fenced by __syncthreads, the pattern of fft-cuda's transposes. Every output depends on
// values written by other warps of the block, so a warp that passes a barrier before a lane of
// another warp has written (a warp left split by a probe: bar.sync counts a warp as arrived when
// its first lanes arrive) shows as wrong values in that block. Checked against the host.
// usage: transpose [blocks]   prints "transpose: PASS" or the first wrong element and FAIL
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void transpose_blocks(const float *in, float *out)
{
	__shared__ float t[8 * 8 * 9];
	int tid = threadIdx.x, hi = tid >> 3, lo = tid & 7;
	const float *src = in + blockIdx.x * 512;
	float d[8];
	for (int i = 0; i < 8; i++)
		d[i] = src[tid + i * 64];
	for (int i = 0; i < 8; i++)
		t[hi * 8 + lo + i * 66] = d[i];
	__syncthreads();
	for (int i = 0; i < 8; i++)
		d[i] = t[lo * 66 + hi + i * 8];
	__syncthreads();
	for (int i = 0; i < 8; i++)
		t[hi * 8 + lo + i * 72] = d[i] * 2.0f + 1.0f;
	__syncthreads();
	for (int i = 0; i < 8; i++)
		d[i] = t[hi * 72 + lo + i * 8];
	for (int i = 0; i < 8; i++)
		out[blockIdx.x * 512 + tid + i * 64] = d[i];
}

// The same index arithmetic on the host, one block at a time.
static void reference(const float *in, float *out, int blocks)
{
	std::vector<float> t(8 * 8 * 9);
	for (int b = 0; b < blocks; b++) {
		float d[64][8];
		for (int tid = 0; tid < 64; tid++)
			for (int i = 0; i < 8; i++)
				d[tid][i] = in[b * 512 + tid + i * 64];
		for (int tid = 0; tid < 64; tid++)
			for (int i = 0; i < 8; i++)
				t[(tid >> 3) * 8 + (tid & 7) + i * 66] = d[tid][i];
		for (int tid = 0; tid < 64; tid++)
			for (int i = 0; i < 8; i++)
				d[tid][i] = t[(tid & 7) * 66 + (tid >> 3) + i * 8];
		for (int tid = 0; tid < 64; tid++)
			for (int i = 0; i < 8; i++)
				t[(tid >> 3) * 8 + (tid & 7) + i * 72] = d[tid][i] * 2.0f + 1.0f;
		for (int tid = 0; tid < 64; tid++)
			for (int i = 0; i < 8; i++)
				out[b * 512 + tid + i * 64] = t[(tid >> 3) * 72 + (tid & 7) + i * 8];
	}
}

int main(int argc, char **argv)
{
	int blocks = argc > 1 ? atoi(argv[1]) : 4096;
	size_t n = (size_t)blocks * 512;
	std::vector<float> in(n), out(n), ref(n);
	for (size_t i = 0; i < n; i++)
		in[i] = (float)((i * 2654435761u) % 1000003) / 1000.0f;
	reference(in.data(), ref.data(), blocks);
	float *din, *dout;
	if (cudaMalloc(&din, n * 4) || cudaMalloc(&dout, n * 4)) {
		printf("transpose: cudaMalloc failed\n");
		return 2;
	}
	cudaMemcpy(din, in.data(), n * 4, cudaMemcpyHostToDevice);
	int bad = 0;
	for (int round = 0; round < 3; round++) {
		cudaMemset(dout, 0, n * 4);
		transpose_blocks<<<blocks, 64>>>(din, dout);
		cudaError_t e = cudaDeviceSynchronize();
		if (e != cudaSuccess) {
			printf("transpose: %s\n", cudaGetErrorString(e));
			return 2;
		}
		cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost);
		for (size_t i = 0; i < n; i++)
			if (out[i] != ref[i]) {
				if (!bad)
					printf("transpose: round %d element %zu (block %zu): %g, expected %g\n",
					       round, i, i / 512, out[i], ref[i]);
				bad++;
			}
	}
	printf("transpose: %d wrong of %zu\n", bad, 3 * n);
	printf("transpose: %s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
