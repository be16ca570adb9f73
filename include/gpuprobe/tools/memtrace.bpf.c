// memtrace: every global load, store and atomic as a record in the SM's ring, printed as it
// arrives by its fields: `@accesses[ring SM]: addr=A size=S dir=D space=P _pad=0 kernel=H _pad2=0`
// (dir: enum gp_mem_dir; space: enum gp_mem_space; kernel: the kernel's gp_name_hash; the
// record's type is the ring's __type(value, ...)). A full ring drops records and says how many
// at the end. `gpuprobe run -t memtrace -k KERNEL -- APP`
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct gp_access {
	__u64 addr;
	__u32 size;
	__u8 dir;      /* enum gp_mem_dir */
	__u8 space;    /* enum gp_mem_space */
	__u16 _pad;
	__u32 kernel;  /* ctx->thread.kernel_hash */
	__u32 _pad2;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
	__type(value, struct gp_access);   /* the records' type: gpuprobe prints them by field */
} accesses SEC(".maps");

GPU_MEM("global", "*") int on_access(struct gp_mem_ctx *ctx)
{
	struct gp_access a = {
		.addr = ctx->addr,
		.size = ctx->size,
		.dir = ctx->dir,
		.space = ctx->space,
		.kernel = ctx->thread.kernel_hash,
	};
	bpf_ringbuf_output(&accesses, &a, sizeof(a), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
