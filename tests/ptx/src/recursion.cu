// Recursion: the stack frame (%SP/%SPL), local arrays, mutual recursion.
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ int odd(int n);
__device__ int even(int n) { return n == 0 ? 1 : odd(n - 1); }
__device__ int odd(int n) { return n == 0 ? 0 : even(n - 1); }
__device__ int sum_local(int n) { int a[16]; for (int i = 0; i < 16; i++) a[i] = i * n; return n > 0 ? a[n & 15] + sum_local(n - 1) : 0; }
__global__ void rec(int *out) { int t = threadIdx.x; out[t] = fib(t & 15) + even(t) + sum_local(t & 7); }
