// Control flow: dense switches (jump tables, brx.idx), early exits, goto-like loops.
__device__ __noinline__ int dispatch(int op, int a, int b)
{
	switch (op) {
	case 0: return a + b;
	case 1: return a - b;
	case 2: return a * b;
	case 3: return a / (b | 1);
	case 4: return a % (b | 1);
	case 5: return a << (b & 31);
	case 6: return a >> (b & 31);
	case 7: return a & b;
	case 8: return a | b;
	case 9: return a ^ b;
	case 10: return ~a;
	case 11: return -b;
	default: return 0;
	}
}
__global__ void interp(const int *code, int *out, int n)
{
	int acc = threadIdx.x;
	for (int pc = 0; pc < n; pc++) {
		if (code[pc] < 0) return;
		acc = dispatch(code[pc], acc, pc);
	}
	out[threadIdx.x] = acc;
}
