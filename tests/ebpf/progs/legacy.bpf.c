/* Maps defined the pre-BTF way, in a "maps" section (libbpf 1.x refuses these; gpuprobe reads them). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct legacy_map_def {
	unsigned int type, key_size, value_size, max_entries, map_flags;
};

struct legacy_map_def SEC("maps") hits = { BPF_MAP_TYPE_HASH, 4, 8, 128, 0 };
struct legacy_map_def SEC("maps") totals = { BPF_MAP_TYPE_ARRAY, 4, 16, 2, 0 };

HOST_ENTRY("cuInit") int count(struct gp_host_ctx *ctx)
{
	__u32 k = ctx->api_id;
	__u64 one = 1, *v = bpf_map_lookup_elem(&hits, &k);
	if (v)
		*v += 1;
	else
		bpf_map_update_elem(&hits, &k, &one, BPF_ANY);
	__u32 z = 1;
	__u64 *t = bpf_map_lookup_elem(&totals, &z);
	if (t)
		t[1] += 2;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
