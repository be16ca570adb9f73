// Dynamic parallelism on the own driver (nvcc -rdc=true, libcudadevrt): kernels that launch
// kernels. Each line says what CUDA promises and whether it held:
//   tree        a binary tree of launches three levels deep, each child on a stream of its own:
//               all 15 nodes ran, each with its own arguments;
//   order       three launches into the block's stream run in the order they were made;
//   shared      a child with a grid, a block and dynamic shared memory of its own;
//   by_value    structures of different sizes and alignments passed by value to children, from
//               successive launches of one kernel (their parameter blocks reuse names);
//   errors      cudaGetLastError() in device code after the launches: cudaSuccess.
#include <cstdio>

struct Box {
	int base;
	short scale;
	double add;
	char tag[5];
};

struct Pair {
	long long a, b;
};

__global__ void tree(int *out, int depth, int idx)
{
	out[idx] = idx * 10 + depth;
	if (depth < 3) {
		cudaStream_t s;
		cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
		tree<<<1, 2, 0, s>>>(out, depth + 1, 2 * idx + 1 + threadIdx.x);
		cudaStreamDestroy(s);
	}
}

__global__ void append(int *log, int *pos, int k)
{
	log[atomicAdd(pos, 1)] = k;
}

__global__ void order(int *log, int *pos)
{
	for (int k = 0; k < 3; k++)
		append<<<1, 1>>>(log, pos, k);
}

__global__ void shared_sum(const int *in, int *out)
{
	extern __shared__ int part[];
	part[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
	__syncthreads();
	if (threadIdx.x == 0) {
		int s = 0;
		for (int i = 0; i < blockDim.x; i++)
			s += part[i];
		out[blockIdx.x] = s;
	}
}

__global__ void shared_parent(const int *in, int *out)
{
	shared_sum<<<dim3(2, 1, 1), dim3(64, 1, 1), 64 * sizeof(int)>>>(in, out);
}

__global__ void take_box(double *out, Box b)
{
	out[0] = b.base * b.scale + b.add + b.tag[4];
}

__global__ void take_pair(long long *out, int k, Pair p)
{
	out[k] = p.a * 1000 + p.b;
}

__global__ void by_value(double *d, long long *l, int *err)
{
	Box b = {7, 3, 0.5, {1, 2, 3, 4, 9}};
	take_box<<<1, 1>>>(d, b);
	take_pair<<<1, 1>>>(l, 0, Pair{4, 5});
	take_pair<<<1, 1>>>(l, 1, Pair{6, 7});
	*err = (int)cudaGetLastError();
}

int main()
{
	int *out, *log, *pos, *in, *sums, *err;
	double *d;
	long long *l;
	cudaMallocManaged(&out, 15 * sizeof(int));
	cudaMallocManaged(&log, 3 * sizeof(int));
	cudaMallocManaged(&pos, sizeof(int));
	cudaMallocManaged(&in, 128 * sizeof(int));
	cudaMallocManaged(&sums, 2 * sizeof(int));
	cudaMallocManaged(&d, sizeof(double));
	cudaMallocManaged(&l, 2 * sizeof(long long));
	cudaMallocManaged(&err, sizeof(int));
	for (int i = 0; i < 15; i++)
		out[i] = -1;
	*pos = 0;
	for (int i = 0; i < 128; i++)
		in[i] = i;
	*err = -1;

	tree<<<1, 2>>>(out, 0, 0);
	order<<<1, 1>>>(log, pos);
	shared_parent<<<1, 1>>>(in, sums);
	by_value<<<1, 1>>>(d, l, err);
	cudaError_t e = cudaDeviceSynchronize();
	printf("launches: %s\n", cudaGetErrorString(e));

	int nodes = 0;
	for (int i = 0; i < 15; i++) {
		int depth = i == 0 ? 0 : i < 3 ? 1 : i < 7 ? 2 : 3;
		nodes += out[i] == i * 10 + depth;
	}
	printf("tree: %d of 15 nodes\n", nodes);
	printf("order: %d %d %d\n", log[0], log[1], log[2]);
	printf("shared: %d %d\n", sums[0], sums[1]);
	printf("by_value: %.1f %lld %lld\n", *d, l[0], l[1]);
	printf("errors: %d\n", *err);
	return 0;
}
