/* A bound checked on a 32-bit subregister, then used as a 64-bit index: clang's ALU32 output
 * (-mcpu=v3). "if w2 > 12 goto ...; w2 = w2" (newer clang's zero extension, written here with
 * inline asm), "w1 += 3" (a 32-bit add, zero-extending), and "w1 += 3; <<= 32; s>>= 32" after a
 * signed check. The bound must survive as a range (12, not the 15 its known bits give: byte 3
 * after index 15 would be outside the 16-byte value), as Linux's 32-bit bounds do. */
// clang-flags: -mcpu=v3
// expect-status: 0
// expect-line: mov32_self (gpu/entry/mov32): OK
// expect-line: shift_zext (gpu/entry/shift): OK
// expect-line: shift_sext (gpu/entry/signed): OK
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[16]);
} slots SEC(".maps");

SEC("gpu/entry/mov32") int mov32_self(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u8 *v = bpf_map_lookup_elem(&slots, &k);

	if (!v)
		return 0;
	register __u64 i asm("r2") = ctx->timestamp;
	if ((__u32)i > 12)
		return 0;
	asm volatile("w2 = w2" : "+r"(i));   /* the zero extension newer clang emits */
	return v[i + 3];
}

SEC("gpu/entry/shift") int shift_zext(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u8 *v = bpf_map_lookup_elem(&slots, &k);

	if (!v)
		return 0;
	__u32 i = (__u32)ctx->timestamp;
	if (i > 12)
		return 0;
	return v[i + 3];
}

SEC("gpu/entry/signed") int shift_sext(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u8 *v = bpf_map_lookup_elem(&slots, &k);

	if (!v)
		return 0;
	int i = (int)ctx->timestamp;
	if (i < 0 || i > 12)
		return 0;
	return v[i + 3];
}

char LICENSE[] SEC("license") = "GPL";
