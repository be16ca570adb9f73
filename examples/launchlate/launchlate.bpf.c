// launchlate: the time from cuLaunchKernel on the host to each block of vectorAdd starting on
// the GPU, as a log2 histogram in nanoseconds. A host probe (run by the shim's interpreter
// around every cuLaunchKernel*) stores the launch time in a map the device probe reads: both
// sides read one clock, bpf_get_globaltimer: CLOCK_REALTIME on the host, and on the GPU
// %globaltimer plus the offset from it the shim measures (the two differ on some machines).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define ONE(name)                                   \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_ARRAY);   \
		__uint(max_entries, 1);             \
		__type(key, __u32);                 \
		__type(value, __u64);               \
	} name SEC(".maps")

ONE(launch_ns);      /* globaltimer at the latest launch (host) */
ONE(launches);       /* cuLaunchKernel* calls seen (host) */
ONE(samples);        /* blocks measured (device) */
ONE(before_launch);  /* blocks whose start precedes the stored launch (a later launch overwrote it) */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, gp_log2_key_t);   /* a log2 histogram (gpuprobe/output.h) */
	__type(value, __u64);
} latency_ns_hist SEC(".maps");

HOST_ENTRY("cuLaunchKernel*") int on_launch(struct gp_host_ctx *ctx)
{
	__u32 k = 0;
	__u64 *t = bpf_map_lookup_elem(&launch_ns, &k), *n = bpf_map_lookup_elem(&launches, &k);
	if (t)
		*t = bpf_get_globaltimer();
	if (n)
		*n += 1;
	return 0;
}

static __always_inline __u32 log2u(__u64 v)
{
	__u32 r = 0;
#pragma unroll
	for (int s = 32; s > 0; s /= 2)
		if (v >> s) {
			v >>= s;
			r += s;
		}
	return r;
}

GPU_BLOCK_BEGIN("vectorAdd") int on_block(struct gp_block_ctx *ctx)
{
	__u64 now = bpf_get_globaltimer();
	__u32 k = 0;
	__u64 *t = bpf_map_lookup_elem(&launch_ns, &k), *v;
	if (!t)
		return 0;
	__u64 start = *t;
	if ((v = bpf_map_lookup_elem(&samples, &k)))
		__sync_fetch_and_add(v, 1);
	if (now < start) {
		if ((v = bpf_map_lookup_elem(&before_launch, &k)))
			__sync_fetch_and_add(v, 1);
		return 0;
	}
	__u64 d = now - start;
	__u32 b = d ? log2u(d) + 1 : 0;   /* bucket k holds [2^(k-1), 2^k), as bpftrace's hist */
	if ((v = bpf_map_lookup_elem(&latency_ns_hist, &b)))
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
