/* A Linux helper the GPU does not have (bpf_get_current_comm, id 16): named, with the helpers a
 * GPU probe may call, and the C source line under which it was called (BTF line info). */
// expect-status: 1
// expect-insn: 3: (85) call bpf_get_current_comm#16
// expect-reason: bpf_get_current_comm is not available on the GPU; GPU helpers: bpf_map_lookup_elem, bpf_map_update_elem, bpf_map_delete_elem, bpf_ktime_get_ns, bpf_trace_printk, bpf_get_smp_processor_id, bpf_get_current_pid_tgid, bpf_perf_event_output, bpf_ringbuf_output, bpf_ringbuf_reserve, bpf_ringbuf_submit, bpf_ringbuf_discard, bpf_puts, bpf_get_globaltimer, bpf_get_block_idx, bpf_get_block_dim, bpf_get_thread_idx, bpf_gpu_membar, bpf_gpu_exit, bpf_get_grid_dim, bpf_get_sm_id, bpf_get_warp_id, bpf_get_lane_id, bpf_get_clock, bpf_get_active_mask, bpf_gpu_read_param, bpf_gpu_warp_unique, bpf_gpu_warp_count, bpf_gpu_warp_output
// expect-line: ; bpf_get_current_comm(comm, sizeof(comm)); @ bad_helper_not_on_gpu.bpf.c:17
// expect-verbose-once: 3: (85) call bpf_get_current_comm#16
// expect-verbose-once: ; bpf_get_current_comm(comm, sizeof(comm)); @ bad_helper_not_on_gpu.bpf.c:17
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

SEC("gpu/entry/") int prog(struct gp_kernel_ctx *ctx)
{
	char comm[16];

	bpf_get_current_comm(comm, sizeof(comm));
	return comm[0];
}

char LICENSE[] SEC("license") = "GPL";
