// CUDA graphs as graphExecution (HeCBench) uses them, for tests/gpu/graphs.sh (issue 11): the
// stream is captured in global mode and the first launch of every kernel happens inside the
// capture, so CUDA's lazy loading loads the module (and gpuprobe sets its probes up) there.
// Then a graph built node by node (cudaGraphAddKernelNode) and plain stream launches. Every
// result is checked on the host; the last lines give the number of threads each kernel ran,
// which an entry probe must count exactly.
// usage: graph_app   (exit 1 at the first CUDA error, naming it; the original crashed instead)
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                     \
	do {                                                                            \
		cudaError_t e_ = (call);                                                \
		if (e_ != cudaSuccess) {                                                \
			printf("FAIL %s: %s\n", #call, cudaGetErrorName(e_));           \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

extern "C" __global__ void scale(float *x, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= s;
}

extern "C" __global__ void add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

enum { N = 4000, G = 16, B = 256, ROUNDS = 50, REPLAYS = 3, NODE_LAUNCHES = 4, STREAM_ROUNDS = 5 };
static float hx[N], hy[N];

static int check(const char *what, float factor)
{
	int bad = 0;
	double sum = 0;
	for (int i = 0; i < N; i++) {
		sum += hy[i];
		bad += hy[i] != hx[i] * factor;
	}
	printf("%s: sum %.1f, %s\n", what, sum, bad ? "FAIL" : "PASS");
	return bad != 0;
}

int main()
{
	float *x, *y, *z;
	int n = N, fails = 0;
	for (int i = 0; i < N; i++)
		hx[i] = (float)(i % 61) * 0.25f;
	CHECK(cudaMalloc(&x, sizeof(hx)));
	CHECK(cudaMalloc(&y, sizeof(hx)));
	CHECK(cudaMalloc(&z, sizeof(hx)));
	cudaStream_t s;
	CHECK(cudaStreamCreate(&s));

	// 1. Captured in global mode: y = x + x after ROUNDS scalings by 1 (each launch counts).
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CHECK(cudaMemcpyAsync(x, hx, sizeof(hx), cudaMemcpyHostToDevice, s));
	for (int r = 0; r < ROUNDS; r++) {
		CHECK(cudaMemsetAsync(y, 0, sizeof(hx), s));
		scale<<<G, B, 0, s>>>(x, 1.0f, n);
		CHECK(cudaGetLastError());
		add<<<G, B, 0, s>>>(x, x, y, n);
		CHECK(cudaGetLastError());
	}
	CHECK(cudaMemcpyAsync(hy, y, sizeof(hy), cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamEndCapture(s, &graph));
	CHECK(cudaGraphInstantiate(&exec, graph, 0));
	for (int r = 0; r < REPLAYS; r++) {
		for (int i = 0; i < N; i++)
			hy[i] = -1;
		CHECK(cudaGraphLaunch(exec, s));
		CHECK(cudaStreamSynchronize(s));
		char what[64];
		snprintf(what, sizeof(what), "captured graph, replay %d", r);
		fails += check(what, 2.0f);
	}

	// 2. A graph built node by node: z *= 3, launched NODE_LAUNCHES times.
	cudaGraph_t g2;
	cudaGraphExec_t e2;
	cudaGraphNode_t node;
	float three = 3.0f;
	void *args[] = {&z, &three, &n};
	cudaKernelNodeParams p = {};
	p.func = (void *)scale;
	p.gridDim = dim3(G);
	p.blockDim = dim3(B);
	p.kernelParams = args;
	CHECK(cudaGraphCreate(&g2, 0));
	CHECK(cudaGraphAddKernelNode(&node, g2, NULL, 0, &p));
	CHECK(cudaGraphInstantiate(&e2, g2, 0));
	CHECK(cudaMemcpyAsync(z, hx, sizeof(hx), cudaMemcpyHostToDevice, s));
	for (int r = 0; r < NODE_LAUNCHES; r++)
		CHECK(cudaGraphLaunch(e2, s));
	CHECK(cudaMemcpyAsync(hy, z, sizeof(hy), cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamSynchronize(s));
	fails += check("built graph", 81.0f);

	// 3. The same kernels launched into the stream.
	CHECK(cudaMemcpyAsync(x, hx, sizeof(hx), cudaMemcpyHostToDevice, s));
	for (int r = 0; r < STREAM_ROUNDS; r++) {
		scale<<<G, B, 0, s>>>(x, 1.0f, n);
		add<<<G, B, 0, s>>>(x, x, y, n);
	}
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpyAsync(hy, y, sizeof(hy), cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamSynchronize(s));
	fails += check("stream", 2.0f);

	CHECK(cudaGraphExecDestroy(e2));
	CHECK(cudaGraphDestroy(g2));
	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(graph));
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaFree(z));
	long t = (long)G * B;
	printf("threads scale %ld\n", t * (REPLAYS * ROUNDS + NODE_LAUNCHES + STREAM_ROUNDS));
	printf("threads add %ld\n", t * (REPLAYS * ROUNDS + STREAM_ROUNDS));
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
