/* A GPU-only helper (%smid) called from a host attach point: the host helpers are listed. */
// expect-status: 1
// expect-insn: 0: (85) call bpf_get_sm_id#509
// expect-reason: helper bpf_get_sm_id#509 runs only on the GPU: not allowed at a host attach point; host helpers: bpf_map_lookup_elem, bpf_map_update_elem, bpf_map_delete_elem, bpf_ktime_get_ns, bpf_trace_printk, bpf_get_smp_processor_id, bpf_get_current_pid_tgid, bpf_perf_event_output, bpf_ringbuf_output, bpf_ringbuf_reserve, bpf_ringbuf_submit, bpf_ringbuf_discard, bpf_get_globaltimer
// expect-line: ; return bpf_get_sm_id(); @ bad_helper_attach.bpf.c:19
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} vals SEC(".maps");

SEC("host/entry/cuLaunchKernel") int prog(struct gp_host_ctx *ctx)
{
	return bpf_get_sm_id();
}

char LICENSE[] SEC("license") = "GPL";
