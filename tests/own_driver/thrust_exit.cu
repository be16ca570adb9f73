// gpuprobe's own driver (tests/own_driver/cu_program.sh): a thrust::inclusive_scan of one tile,
// then the CUDA runtime's exit handlers unload the modules. PoCL freeing its programs from
// there crashed in LLVM (signal 11 after the right result); the own driver leaves them to the
// process's end. (More than one tile, CUB's decoupled look-back: lockstep.cu.)
#include <cstdio>
#include <thrust/device_vector.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>

int main()
{
	const int n = 1000;
	thrust::device_vector<int> v(n), o(n);
	thrust::sequence(v.begin(), v.end());
	thrust::inclusive_scan(v.begin(), v.end(), o.begin());
	int last = o[n - 1];
	printf("inclusive_scan of 0..%d: last %d (%d expected)\n", n - 1, last, (n - 1) * n / 2);
	return 0;
}
