/* A plain read-modify-write of a map value (`*v += 1`) verifies, but GPU threads running it
 * together lose updates: the verifier warns once per instruction, naming it. The same for a
 * global variable (`total++`). Copying one element into another and storing constants are not
 * read-modify-writes; a per-thread array (bpftime's 1502) has a copy per thread: no warning. */
// expect-status: 0
// expect-line: racy (gpu/entry/racy): OK
// expect-line: warning: 10: (7b) *(u64 *)(r0 +0) = r1: read-modify-write of map 'counts' value (off 0, read at insn 8) is not atomic: threads running it together lose updates; use __sync_fetch_and_add()
// expect-line: global (gpu/exit/global): OK
// expect-line: warning: 4: (7b) *(u64 *)(r1 +0) = r2: read-modify-write of map '.bss' value (off 0, read at insn 2) is not atomic: threads running it together lose updates; use __sync_fetch_and_add()
// expect-line: not_racy (gpu/block_begin/copy): OK
// expect-absent: warning: 2
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, GPUPROBE_MAP_TYPE_PERTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} mine SEC(".maps");

__u64 total;

SEC("gpu/entry/racy") int racy(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		*v += 1;
	return 0;
}

SEC("gpu/exit/global") int global(struct gp_kernel_ctx *ctx)
{
	total++;
	return 0;
}

SEC("gpu/block_begin/copy") int not_racy(struct gp_block_ctx *ctx)
{
	__u32 k0 = 0, k1 = 1;
	__u64 *a = bpf_map_lookup_elem(&counts, &k0), *b = bpf_map_lookup_elem(&counts, &k1);
	if (a && b) {
		*b = *a + 1;
		*a = 7;
	}
	__u64 *m = bpf_map_lookup_elem(&mine, &k0);
	if (m)
		*m += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
