// Function pointers and virtual calls: indirect calls with .callprototype.
typedef float (*unop)(float);
__device__ float sq(float x) { return x * x; }
__device__ float neg(float x) { return -x; }
__device__ float half(float x) { return x * 0.5f; }
__device__ unop table[3] = {sq, neg, half};
struct Shape { __device__ virtual float area() const = 0; __device__ virtual ~Shape() {} };
struct Sq : Shape { float s; __device__ Sq(float s) : s(s) {} __device__ float area() const override { return s * s; } };
struct Circ : Shape { float r; __device__ Circ(float r) : r(r) {} __device__ float area() const override { return 3.14159f * r * r; } };
typedef int (*binop)(int, int, double);
__device__ int f2(int a, int b, double c) { return a * b + (int)c; }
__global__ void indirect(float *out, int sel, binop b)
{
	float v = out[threadIdx.x];
	v = table[(threadIdx.x + sel) % 3](v);
	Shape *s;
	if (threadIdx.x & 1) s = new Sq(v); else s = new Circ(v);
	v += s->area();
	delete s;
	binop bb = sel ? b : f2;
	out[threadIdx.x] = v + bb(sel, threadIdx.x, 2.0);
}
