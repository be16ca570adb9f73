// nvcc: -rdc=true
// ptxas: -c
// Dynamic parallelism: kernels launching kernels (needs relocatable device code).
__global__ void child(int *p, int depth) { p[threadIdx.x] += depth; }
__global__ void parent(int *p, int depth)
{
	if (threadIdx.x == 0 && depth < 3) {
		child<<<1, 32>>>(p, depth);
		parent<<<1, 1, 0, cudaStreamTailLaunch>>>(p, depth + 1);
	}
}
