/* A loop bounded only by a 32-bit context value: too many iterations to prove it ends. */
// expect-status: 1
// expect-insn: 10: (bf) r2 = r7
// expect-reason: program too complex: processed 1000000 insns (limit 1000000) (loop not provably bounded)
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} vals SEC(".maps");

SEC("gpu/entry/") int prog(struct gp_kernel_ctx *ctx)
{
	__u64 sum = 0;
	for (__u32 i = 0; i < ctx->params_size; i++)
		sum += bpf_get_clock();
	return sum;
}

char LICENSE[] SEC("license") = "GPL";
