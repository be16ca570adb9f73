// Probe sites in loops and branches that part of a block leaves: a loop whose trip count is each
// thread's own (a grid-stride loop's shape), a break on data, threads that return early. The
// probes' warp collectives there (a site's activemask, a counter's aggregation) must not become
// block barriers some threads never reach: on PoCL that made curand_init, probed, an empty
// function. The program checks its own results and prints how many thread entries, global loads
// and global stores its kernels make (computed here on the host from the same data), which
// tests/own_driver/probes.sh compares with entry_exit.bpf.c's counters under gpuprobe run.
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void own_trips(const int *in, const int *trips, int *out, int n)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	int k = trips[t];                       // a load per thread
	int acc = 0;
	for (int i = 0; i < k; i++) {
		int v = in[(t * 7 + i * 13) % n];   // a load per iteration
		acc += v;
		if (v & 1)
			out[(t + i) % n] = v;           // a store on odd values
	}
	out[n + t] = acc;                       // a store per thread
}

__global__ void early_out(const int *in, int *out, int n)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t % 3 == 0)
		return;
	int acc = 0;
	for (int i = 0; i < 16; i++) {
		int v = in[(t + i * 5) % n];         // a load per iteration until a negative value
		if (v < 0)
			break;
		acc += v;
	}
	out[2 * n + t] = acc;                   // a store per thread that did not return
}

int main()
{
	const int blocks = 8, threads = 96, n = blocks * threads;
	std::vector<int> in(n), trips(n), out(3 * n, 0);
	srand(7);
	for (int i = 0; i < n; i++) {
		in[i] = rand() % 1000 - 50;
		trips[i] = rand() % 10;
	}
	int *d_in, *d_trips, *d_out;
	cudaMalloc(&d_in, n * sizeof(int));
	cudaMalloc(&d_trips, n * sizeof(int));
	cudaMalloc(&d_out, 3 * n * sizeof(int));
	cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice);
	cudaMemcpy(d_trips, trips.data(), n * sizeof(int), cudaMemcpyHostToDevice);
	cudaMemset(d_out, 0, 3 * n * sizeof(int));
	own_trips<<<blocks, threads>>>(d_in, d_trips, d_out, n);
	early_out<<<blocks, threads>>>(d_in, d_out, n);
	cudaMemcpy(out.data(), d_out, 3 * n * sizeof(int), cudaMemcpyDeviceToHost);
	if (cudaGetLastError() != cudaSuccess) {
		printf("CUDA error\n");
		return 1;
	}

	std::vector<int> want(3 * n, 0);
	long entries = 2L * n, loads = 0, stores = 0;
	for (int t = 0; t < n; t++) {   // own_trips; odd stores race only with equal values
		int acc = 0;
		loads++;
		for (int i = 0; i < trips[t]; i++) {
			int v = in[(t * 7 + i * 13) % n];
			loads++;
			acc += v;
			if (v & 1) {
				want[(t + i) % n] = v;
				stores++;
			}
		}
		want[n + t] = acc;
		stores++;
	}
	for (int t = 0; t < n; t++) {   // early_out
		if (t % 3 == 0)
			continue;
		int acc = 0;
		for (int i = 0; i < 16; i++) {
			int v = in[(t + i * 5) % n];
			loads++;
			if (v < 0)
				break;
			acc += v;
		}
		want[2 * n + t] = acc;
		stores++;
	}
	int bad = 0;
	for (int i = n; i < 3 * n; i++)   // the odd-value slots [0, n) may hold any writer's value
		bad += out[i] != want[i];
	for (int i = 0; i < n; i++)
		bad += (want[i] != 0) != (out[i] != 0);
	printf("expected: entries %ld exits %ld loads %ld stores %ld\n", entries, entries, loads, stores);
	printf(bad ? "FAILED: %d values differ\n" : "PASSED\n", bad);
	return bad != 0;
}
