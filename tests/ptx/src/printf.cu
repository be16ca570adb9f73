// printf with many argument kinds, and assert (which calls __assertfail).
#include <cstdio>
#include <cassert>
__global__ void say(const char *name, int n, double d)
{
	printf("thread %d of %s: n=%d d=%f %lld %c %s %p\n", threadIdx.x, name, n, d, (long long)n * 3, 'x', "lit", name);
	assert(n >= 0);
	if (n > 1000) printf("big\n");
}
