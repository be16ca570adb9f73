// Warp-level primitives: shuffles, votes, match, warp reductions, active masks.
__global__ void warp_ops(const int *in, int *out, float *fo)
{
	int v = in[threadIdx.x];
	unsigned full = 0xffffffffu;
	int s = v;
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(full, s, o);
	int x = __shfl_xor_sync(full, v, 1);
	int up = __shfl_up_sync(full, v, 2, 16);
	float f = __shfl_sync(full, (float)v, 0);
	double d = __shfl_sync(full, (double)v, 3);
	unsigned b = __ballot_sync(full, v > 0);
	int any = __any_sync(full, v > 3), all = __all_sync(full, v > -1);
	unsigned act = __activemask();
	unsigned m = __match_any_sync(full, v & 3);
	int pred;
	unsigned ma = __match_all_sync(full, v & 1, &pred);
	__syncwarp();
	int r = 0;
#if __CUDA_ARCH__ >= 800
	r = __reduce_add_sync(full, v) + __reduce_max_sync(full, v) + __reduce_or_sync(full, (unsigned)v);
#endif
	out[threadIdx.x] = s + x + up + (int)b + any + all + (int)act + (int)m + (int)ma + pred + r;
	fo[threadIdx.x] = f + (float)d;
}
