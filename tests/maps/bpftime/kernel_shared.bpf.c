// bpftime's kernel-shared array (map type 1504, BPF_F_MMAPABLE: in bpftime a Linux BPF array
// whose pages the GPU reaches; here one copy in host-mapped memory) used as its
// threadhist-gpu-kernel-shared-map and launchlate-kernel-gpu-shared-map examples use it: GPU
// threads add to key 0 with __atomic_add_fetch, a uretprobe on the app's cudaLaunchKernel<char>
// (a host probe here, at cuLaunchKernel*'s exit) adds to key 1; a histogram bumped with
// `*count += 1` from the leader thread, and a section with bpftime's cuda__ prefix on the kernel.
// Expected on vec_add with G blocks of 32 threads: calls[0] = 32G, calls[1] = 2 (vectorAdd and
// oddEven launched), bins[3] = 1.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define BPF_MAP_TYPE_GPU_KERNEL_SHARED_ARRAY_MAP 1504

static const u64 (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;

struct {
	__uint(type, BPF_MAP_TYPE_GPU_KERNEL_SHARED_ARRAY_MAP);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
	__uint(map_flags, BPF_F_MMAPABLE);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_KERNEL_SHARED_ARRAY_MAP);
	__uint(max_entries, 10);
	__type(key, u32);
	__type(value, u64);
	__uint(map_flags, BPF_F_MMAPABLE);
} bins SEC(".maps");

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int cuda__retprobe()
{
	u32 k = 0;
	u64 *c = bpf_map_lookup_elem(&calls, &k);
	if (c)
		__atomic_add_fetch(c, 1, __ATOMIC_SEQ_CST);
	return 0;
}

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int cuda__probe()
{
	u64 tx, ty, tz, bx, by, bz;
	bpf_get_thread_idx(&tx, &ty, &tz);
	bpf_get_block_idx(&bx, &by, &bz);
	if (tx | ty | tz | bx | by | bz)
		return 0;
	u32 bin = 3;
	u64 *n = bpf_map_lookup_elem(&bins, &bin);
	if (n) {
		*n += 1;
	} else {
		u64 one = 1;
		bpf_map_update_elem(&bins, &bin, &one, BPF_NOEXIST);
	}
	return 0;
}

// bpftime's spelling: the kernel named with its cuda__ program prefix.
SEC("kretprobe/cuda__Z9vectorAddPKfS0_Pf")
int cuda__retprobe_prefixed()
{
	return 0;
}

SEC("uretprobe/./vec_add:_Z16cudaLaunchKernelIcE9cudaErrorPT_4dim3S3_PPvmP11CUstream_st")
int launch_kernel_ret_probe()
{
	bpf_printk("triggered");
	u32 k = 1;
	u64 *c = bpf_map_lookup_elem(&calls, &k);
	if (c)
		__atomic_add_fetch(c, 1, __ATOMIC_SEQ_CST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
