// Integer and bit intrinsics, 64-bit arithmetic, SIMD video intrinsics, special registers.
__global__ void ints(const unsigned *a, unsigned long long *b, int *o)
{
	unsigned x = a[threadIdx.x], y = a[threadIdx.x + 1];
	unsigned long long z = b[threadIdx.x];
	int r = __popc(x) + __clz(y) + __ffs(x) + __popcll(z) + __clzll(z) + (int)__brev(x) + (int)__byte_perm(x, y, 0x5410) +
		(int)__funnelshift_l(x, y, 5) + (int)__funnelshift_rc(x, y, 7) + (int)__sad(x, y, 3u) + (int)__umulhi(x, y) +
		(int)__umul64hi(z, z) + __mul24((int)x, (int)y) + __dp4a((int)x, (int)y, 1) + __dp2a_lo((int)x, (int)y, 2);
	r += (int)(z / (x | 1)) + (int)(z % (y | 1)) + (int)(((long long)z) / -3);
	r += (int)__vadd2(x, y) + (int)__vabsdiffu4(x, y) + (int)__vcmpgtu2(x, y) + (int)__vsub4(x, y) + (int)__vmaxs2(x, y);
	r += (int)__fns(x, 0, 3);
	unsigned long long t0 = clock64();
	unsigned long long gt;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt));
	__nanosleep(100);
	o[threadIdx.x] = r + (int)(clock64() - t0) + (int)gt + (int)clock();
	if (r == 12345) __trap();
	if (r == 54321) __brkpt();
}
