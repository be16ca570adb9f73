// A 2D stencil: shared-memory tile with halo, constant-memory weights, boundary handling.
__constant__ float w5[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
template <int R> __global__ void stencil(const float *in, float *out, int nx, int ny)
{
	__shared__ float tile[16 + 2 * R][16 + 2 * R];
	int gx = blockIdx.x * 16 + threadIdx.x, gy = blockIdx.y * 16 + threadIdx.y;
	for (int dy = threadIdx.y; dy < 16 + 2 * R; dy += 16)
		for (int dx = threadIdx.x; dx < 16 + 2 * R; dx += 16) {
			int x = min(max(blockIdx.x * 16 + dx - R, 0), nx - 1);
			int y = min(max(blockIdx.y * 16 + dy - R, 0), ny - 1);
			tile[dy][dx] = in[y * nx + x];
		}
	__syncthreads();
	if (gx >= nx || gy >= ny) return;
	float s = 0;
#pragma unroll
	for (int k = -R; k <= R; k++)
		s += w5[k + 2] * (tile[threadIdx.y + R][threadIdx.x + R + k] + tile[threadIdx.y + R + k][threadIdx.x + R]);
	out[gy * nx + gx] = s;
}
template __global__ void stencil<1>(const float *, float *, int, int);
template __global__ void stencil<2>(const float *, float *, int, int);
