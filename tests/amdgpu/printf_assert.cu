// CUDA's device printf and assert, for tests/amdgpu/cli.sh (amdgpu/printf.c): each argument kind
// vprintf's buffer packs (int, long long, double, char, a literal string, a pointer), a width
// and a precision from the arguments, and an assert.
#include <cstdio>
#include <cassert>
__global__ void report(const char *name, int n, double d)
{
	printf("n=%d ll=%lld d=%.3f c=%c s=%s p=%p w=%*d\n", n, (long long)n * 3, d, 'x', "lit", name, 5, n);
	assert(n >= 0);
	if (n > 1000)
		printf("big\n");
}
