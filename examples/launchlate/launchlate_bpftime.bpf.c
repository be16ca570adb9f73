// launchlate written bpftime's way, to show its section forms load unchanged: the host half is a
// uprobe on the CUDA runtime's cudaLaunchKernel (the mangled cudaLaunchKernel<char> template
// wrapper of cuda_runtime.h, behind a binary path) read with BPF_KPROBE, the device half a
// kprobe on vectorAdd's mangled name in a program named cuda__*, helpers by number, vmlinux.h.
// gpuprobe runs the uprobe at the driver calls cudaLaunchKernel makes (cuLaunchKernel*) and
// ignores the binary path; the registers hold what they would at the runtime call under the
// x86-64 ABI (a dim3 takes two: x | y << 32, then z).
//
// One difference from bpftime's: the host stamps bpf_get_globaltimer() (CLOCK_REALTIME on the
// host) where bpftime's stamps bpf_ktime_get_ns() and adds an offset its own loader measures.
// gpuprobe measures that offset itself (docs/architecture.md "One clock"): the device's
// bpf_get_globaltimer() is %globaltimer plus CLOCK_REALTIME's offset from it, its
// bpf_ktime_get_ns() %globaltimer plus CLOCK_MONOTONIC's, so either helper compares with the
// host's helper of the same id.
//
// Maps: host_launches[0] counts uprobe runs; last_launch[0..2] = func, gridDim, blockDim as the
// probe read them (the latest launch); launch_ns[0] the latest launch time; the device probe,
// in thread 0 of block 0 only, adds one count per vectorAdd launch to launch_latency_hist
// (log2 buckets of ns, as bpftrace's hist) or to no_launch when no launch time is stored.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

static const u64 (*bpf_get_globaltimer)(void) = (void *)502;
static const u64 (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;

#define ARRAY_MAP(name, n)                        \
	struct {                                  \
		__uint(type, BPF_MAP_TYPE_ARRAY); \
		__uint(max_entries, n);           \
		__type(key, u32);                 \
		__type(value, u64);               \
	} name SEC(".maps")

ARRAY_MAP(host_launches, 1);
ARRAY_MAP(last_launch, 3);
ARRAY_MAP(launch_ns, 1);
ARRAY_MAP(no_launch, 1);
ARRAY_MAP(launch_latency_hist, 65);

static __always_inline void put(void *map, u32 k, u64 v)
{
	bpf_map_update_elem(map, &k, &v, BPF_ANY);
}

SEC("uprobe/./vec_add:_Z16cudaLaunchKernelIcE9cudaErrorPT_4dim3S3_PPvmP11CUstream_st")
int BPF_KPROBE(uprobe_cuda_launch, const void *func, u64 gridDim, u64 blockDim)
{
	u32 zero = 0;
	u64 *n = bpf_map_lookup_elem(&host_launches, &zero);
	if (n)
		*n += 1;
	put(&launch_ns, 0, bpf_get_globaltimer());
	put(&last_launch, 0, (u64)func);
	put(&last_launch, 1, gridDim);
	put(&last_launch, 2, blockDim);
	bpf_printk("cudaLaunchKernel from pid %u: grid.x %u", (u32)(bpf_get_current_pid_tgid() >> 32),
		   (u32)gridDim);
	return 0;
}

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int cuda__probe()
{
	u64 bx, by, bz, tx, ty, tz;
	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	if (bx | by | bz | tx | ty | tz)
		return 0;   /* one sample per launch */
	u64 now = bpf_get_globaltimer();
	u32 zero = 0;
	u64 *t = bpf_map_lookup_elem(&launch_ns, &zero), *c;
	if (!t || !*t || now < *t) {
		if ((c = bpf_map_lookup_elem(&no_launch, &zero)))
			__sync_fetch_and_add(c, 1);
		return 0;
	}
	u64 d = now - *t;
	u32 bucket = 0;
	for (int i = 0; i < 64 && d; i++) {   /* bit length: bucket k holds [2^(k-1), 2^k) */
		bucket++;
		d >>= 1;
	}
	if ((c = bpf_map_lookup_elem(&launch_latency_hist, &bucket)))
		__sync_fetch_and_add(c, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
