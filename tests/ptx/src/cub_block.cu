// CUB block and warp collectives inside our own kernels.
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
__global__ void block_sort(const int *in, int *out)
{
	using Load = cub::BlockLoad<int, 128, 4, cub::BLOCK_LOAD_TRANSPOSE>;
	using Sort = cub::BlockRadixSort<int, 128, 4>;
	using Store = cub::BlockStore<int, 128, 4, cub::BLOCK_STORE_WARP_TRANSPOSE>;
	__shared__ union { Load::TempStorage l; Sort::TempStorage s; Store::TempStorage st; } tmp;
	int items[4];
	Load(tmp.l).Load(in + blockIdx.x * 512, items);
	__syncthreads();
	Sort(tmp.s).Sort(items);
	__syncthreads();
	Store(tmp.st).Store(out + blockIdx.x * 512, items);
}
__global__ void block_scan_reduce(const float *in, float *out, int *wout)
{
	using Scan = cub::BlockScan<float, 256>;
	using Red = cub::BlockReduce<float, 256, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
	using WR = cub::WarpReduce<int>;
	using WS = cub::WarpScan<int>;
	__shared__ Scan::TempStorage s;
	__shared__ Red::TempStorage r;
	__shared__ WR::TempStorage wr[8];
	__shared__ WS::TempStorage ws[8];
	float v = in[threadIdx.x], agg;
	Scan(s).ExclusiveSum(v, v, agg);
	float tot = Red(r).Reduce(v, cuda::maximum<float>());
	int w = threadIdx.x / 32, iv = (int)v, ps;
	int wsum = WR(wr[w]).Sum(iv);
	WS(ws[w]).InclusiveSum(iv, ps);
	out[threadIdx.x] = v + tot + agg;
	wout[threadIdx.x] = wsum + ps;
}
