// Cooperative groups: tiles, coalesced groups, reductions, grid sync.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
__global__ void cg_reduce(const int *in, int *out, int n)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
	int i = block.group_index().x * block.size() + block.thread_rank();
	int v = i < n ? in[i] : 0;
	int s = cg::reduce(tile, v, cg::plus<int>());
	int sc = cg::exclusive_scan(tile, v);
	cg::thread_block_tile<4> t4 = cg::tiled_partition<4>(tile);
	int m = cg::reduce(t4, v, cg::greater<int>());
	if (v & 1) {
		cg::coalesced_group active = cg::coalesced_threads();
		m += active.shfl(v, 0) + active.size();
	}
	block.sync();
	if (tile.thread_rank() == 0)
		atomicAdd(out, s + m + sc);
}
__global__ void cg_grid(int *data, int n)
{
	cg::grid_group grid = cg::this_grid();
	for (int i = grid.thread_rank(); i < n; i += grid.size())
		data[i] += 1;
	grid.sync();
	for (int i = grid.thread_rank(); i < n; i += grid.size())
		data[i] *= 2;
}
