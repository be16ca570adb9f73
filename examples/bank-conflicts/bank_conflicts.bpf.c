// bank-conflicts: the n-way bank conflict degree of each warp-wide 4-byte shared-memory load
// (the largest number of distinct 4-byte words any one of the 32 banks must deliver: lanes
// reading the same word are a broadcast, not a conflict), summed per kernel as "wavefronts",
// next to the number of warp-wide loads (requests): wavefronts / requests is 1 without
// conflicts, 32 for a 32-way conflict. Also a histogram of the degree per request.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define KMAP(name)                                  \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_HASH);    \
		__uint(max_entries, 256);           \
		__type(key, gp_kernel_id_t);        \
		__type(value, __u64);               \
	} name SEC(".maps")

KMAP(wavefronts_by_kernel);
KMAP(requests_by_kernel);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 33);
	__type(key, __u32);
	__type(value, __u64);
} degree SEC(".maps");

GPU_MEM("shared,load", "*") int on_shared_load(struct gp_mem_ctx *ctx)
{
	if (ctx->size != 4)   /* 8- and 16-byte accesses are served per half/quarter warp */
		return 0;
	__u64 word = ctx->addr >> 2, lane = bpf_get_lane_id();
	/* one lane per distinct word stands for it; its bank's count of such lanes is that bank's
	 * number of distinct words (other lanes get a value no one else holds) */
	__u64 word_leader = bpf_gpu_warp_unique(word);
	__u64 n = bpf_gpu_warp_count(word_leader ? (word & 31) : 64 + lane);
	__u32 mine = word_leader ? (__u32)n : 0;
	__u64 active = bpf_gpu_warp_count(0);
	/* the largest count over the warp, found by bisection: every lane learns whether any lane
	 * holds at least k (a lane that does not sees fewer than `active` lanes on its side), so
	 * all lanes take the same branches and stay together for the next match */
	__u32 lo = 1, hi = 32;
#pragma unroll
	for (int i = 0; i < 5; i++) {
		__u32 k = (lo + hi + 1) / 2;
		int at_least = mine >= k;
		__u64 same = bpf_gpu_warp_count(at_least ? 0 : 1);
		if (at_least || same < active)
			lo = k;
		else
			hi = k - 1;
	}
	if (bpf_gpu_warp_unique(0)) {
		gp_add(&wavefronts_by_kernel, ctx->thread.kernel_hash, lo);
		gp_add(&requests_by_kernel, ctx->thread.kernel_hash, 1);
		__u32 d = lo;
		__u64 *h = bpf_map_lookup_elem(&degree, &d);
		if (h)
			__sync_fetch_and_add(h, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
