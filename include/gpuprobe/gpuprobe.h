/* gpuprobe: the one header eBPF probe authors include.
 *
 *   #include <linux/bpf.h>
 *   #include <bpf/bpf_helpers.h>
 *   #include <gpuprobe/gpuprobe.h>
 *   clang -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I<gpuprobe>/include -c p.bpf.c
 *
 * It gives: the attach-point section names (GPU_ENTRY("kernel") ...), the context struct r1 points
 * to at each attach point (gpuprobe/context.h), the map types, and the GPU helpers beyond what
 * libbpf's <bpf/bpf_helpers.h> declares (ids from ebpf/helpers.def). Host C may include it too,
 * for the struct layouts: helper declarations are compiled only for the BPF target.
 *
 * Section names (a glob may be omitted, or be empty: then every kernel/function/API matches):
 *   gpu/entry/<kernel-glob>          every thread, at kernel entry        struct gp_kernel_ctx
 *   gpu/exit/<kernel-glob>           every thread, before each exit/ret   struct gp_kernel_ctx
 *   gpu/block_begin/<kernel-glob>    once per block, first thread in      struct gp_block_ctx
 *   gpu/block_end/<kernel-glob>      once per block, last thread out      struct gp_block_ctx
 *   gpu/func_entry/<func-glob>       device .func entry                   struct gp_func_ctx
 *   gpu/func_exit/<func-glob>        device .func return                  struct gp_func_ctx
 *   gpu/mem/<filters>/<kernel-glob>  before loads/stores/atomics          struct gp_mem_ctx
 *        filters: comma-separated from global,shared,local,generic (spaces),
 *        load,store,atomic (directions) and plain,async,matrix (kinds: ld/st/atom/red;
 *        cp.async, cp.async.bulk{.tensor}, st/red.async; ldmatrix, stmatrix, wmma.load/store),
 *        or "all"; a group left out means all of that group (context.h: gp_mem_kind)
 *   gpu/barrier/<kernel-glob>        before bar.sync/barrier              struct gp_barrier_ctx
 *   gpu/barrier_after/<kernel-glob>  after bar.sync/barrier               struct gp_barrier_ctx
 *   gpu/bb/<kernel-glob>             each basic block entry               struct gp_bb_ctx
 *   host/entry/<cuApi-glob>          before a driver API call (host)      struct gp_host_ctx
 *   host/exit/<cuApi-glob>           after a driver API call (host)       struct gp_host_ctx
 * bpftime's GPU conventions load unchanged: kprobe/<kernel> = gpu/entry, kretprobe/<kernel> =
 * gpu/exit (its programs are named cuda__*), and its host half:
 *   uprobe/<binary>:<function>       host/entry at the driver calls the function makes
 *   uretprobe/<binary>:<function>    host/exit, likewise
 *        <function> (plain or C++-mangled, _ptsz too): cudaLaunchKernel -> cuLaunchKernel*
 *        (cuLaunchKernel, cuLaunchKernelEx and their _ptsz forms), cudaLaunchCooperativeKernel
 *        -> cuLaunchCooperativeKernel*, cudaDeviceSynchronize -> cuCtxSynchronize,
 *        cudaStreamSynchronize -> cuStreamSynchronize, or a driver function cu* itself. The
 *        <binary> part is ignored (gpuprobe sees calls where they reach the driver, whichever
 *        binary makes them; GPUPROBE_LOG=1 says so per program). r1 points to an x86-64
 *        struct pt_regs (struct gp_bpftime_regs) read with BPF_KPROBE/PT_REGS_PARMn
 *        (-D__TARGET_ARCH_x86): for cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem,
 *        stream) what the ABI puts in the registers: PARM1 func (here the CUfunction the runtime
 *        launches), PARM2 grid.x | grid.y << 32, PARM3 grid.z, PARM4 block.x | block.y << 32,
 *        PARM5 block.z, PARM6 0 (args not kept); for a driver function its arguments 1-6 as
 *        host/entry sees them; at uretprobe PT_REGS_RC the CUresult (0 = cudaSuccess; other
 *        codes are the driver's, not cudaError_t). Stack arguments (shmem, stream) and
 *        bpf_get_func_ip are not available.
 * Globs use fnmatch(3) syntax (*, ?, [..]); a kernel glob matches the mangled name
 * (_Z5scaleILi512EEvPfi), the demangled name without return type (scale<512>(float*, int)), that
 * without parameters (scale<512>) or the base name (scale): ptx-frontend/kernel_match.h.
 * `gpuprobe list --probes APP` lists the names. */
#ifndef GPUPROBE_GPUPROBE_H
#define GPUPROBE_GPUPROBE_H

#include "gpuprobe/context.h"
#include "gpuprobe/api.h"
#include "gpuprobe/output.h"
#include "gpuprobe/warp.h"

/* ---- Section names ---------------------------------------------------------------------- */
#define GP_SEC_ENTRY "gpu/entry/"
#define GP_SEC_EXIT "gpu/exit/"
#define GP_SEC_BLOCK_BEGIN "gpu/block_begin/"
#define GP_SEC_BLOCK_END "gpu/block_end/"
#define GP_SEC_FUNC_ENTRY "gpu/func_entry/"
#define GP_SEC_FUNC_EXIT "gpu/func_exit/"
#define GP_SEC_MEM "gpu/mem/"
#define GP_SEC_BARRIER "gpu/barrier/"
#define GP_SEC_BARRIER_AFTER "gpu/barrier_after/"
#define GP_SEC_BB "gpu/bb/"
#define GP_SEC_HOST_ENTRY "host/entry/"
#define GP_SEC_HOST_EXIT "host/exit/"

/* Use with libbpf's SEC(): GPU_ENTRY("vecAdd*"), GPU_ENTRY("") for every kernel,
 * GPU_MEM("global,store", "sgemm"). */
#define GPU_ENTRY(glob) SEC(GP_SEC_ENTRY glob)
#define GPU_EXIT(glob) SEC(GP_SEC_EXIT glob)
#define GPU_BLOCK_BEGIN(glob) SEC(GP_SEC_BLOCK_BEGIN glob)
#define GPU_BLOCK_END(glob) SEC(GP_SEC_BLOCK_END glob)
#define GPU_FUNC_ENTRY(glob) SEC(GP_SEC_FUNC_ENTRY glob)
#define GPU_FUNC_EXIT(glob) SEC(GP_SEC_FUNC_EXIT glob)
#define GPU_MEM(filters, glob) SEC(GP_SEC_MEM filters "/" glob)
#define GPU_BARRIER(glob) SEC(GP_SEC_BARRIER glob)
#define GPU_BARRIER_AFTER(glob) SEC(GP_SEC_BARRIER_AFTER glob)
#define GPU_BB(glob) SEC(GP_SEC_BB glob)
#define HOST_ENTRY(glob) SEC(GP_SEC_HOST_ENTRY glob)
#define HOST_EXIT(glob) SEC(GP_SEC_HOST_EXIT glob)

/* ---- Map types -------------------------------------------------------------------------- *
 * The Linux ids work as in Linux (BPF_MAP_TYPE_ARRAY, HASH, PERCPU_ARRAY, PERCPU_HASH, RINGBUF,
 * PERF_EVENT_ARRAY), with one GPU reading: the "CPU" is the SM. Per-CPU maps keep one copy of
 * each value per SM (bpf_get_smp_processor_id() returns %smid), and the host reads every copy as
 * Linux user space reads per-CPU values. An ARRAY or HASH map whose values a program changes only
 * by atomic add (__sync_fetch_and_add) is sharded per SM automatically and summed on the host.
 * A RINGBUF gets one ring per SM. */
#define GPUPROBE_MAP_TYPE_GPU_HASH 1501          /* bpftime: hash, one shared copy */
#define GPUPROBE_MAP_TYPE_PERTHREAD_ARRAY 1502  /* bpftime: one value per GPU thread */
#define GPUPROBE_MAP_TYPE_GPU_ARRAY 1503         /* bpftime: array, one shared copy */
#define GPUPROBE_MAP_TYPE_KERNEL_SHARED_ARRAY 1504 /* bpftime: array, one copy in host-mapped memory */
#define GPUPROBE_MAP_TYPE_PERTHREAD_ARRAY_HOST 1512 /* bpftime: 1502 in host-mapped memory */
#define GPUPROBE_MAP_TYPE_GPU_ARRAY_HOST 1513    /* bpftime: 1503 in host-mapped memory */
#define GPUPROBE_MAP_TYPE_GPU_RINGBUF 1527      /* bpftime: GPU ring buffer (perf_event_output) */
/* bpftime's single-copy types (1501, 1503, 1504, 1513) are never sharded per SM: a device read
 * sees what every thread wrote. Counting probes are faster on ARRAY/HASH, which are. */

/* ---- Counting ------------------------------------------------------------------------------ *
 * gp_count(&map, key): value += 1;  gp_add(&map, key, n): value += n. For ARRAY and HASH maps
 * declared with __type(key, ...) and __type(value, ...) (libbpf's BTF map syntax): key and n are
 * converted to the map's own key and value types. A missing key is inserted as 0 (BPF_NOEXIST:
 * when another thread inserts it first, that insert stands) and the value is then added to
 * atomically, so the map stays on the per-SM sharded fast path (only atomic adds change it).
 * An array index out of range or a full hash map counts nothing. Evaluates to nothing. */
#define gp_add(gp_map_, gp_key_, gp_n_)                                                       \
	do {                                                                                  \
		__typeof__(*(gp_map_)->key) gp_k_ = (gp_key_);                                \
		__typeof__(*(gp_map_)->value) gp_zero_ = 0,                                   \
			*gp_v_ = bpf_map_lookup_elem((gp_map_), &gp_k_);                      \
		if (!gp_v_) {                                                                 \
			bpf_map_update_elem((gp_map_), &gp_k_, &gp_zero_, BPF_NOEXIST);      \
			gp_v_ = bpf_map_lookup_elem((gp_map_), &gp_k_);                       \
		}                                                                             \
		if (gp_v_)                                                                    \
			__sync_fetch_and_add(gp_v_, (gp_n_));                                 \
	} while (0)
#define gp_count(gp_map_, gp_key_) gp_add(gp_map_, gp_key_, 1)

/* ---- GPU helpers (ids from ebpf/helpers.def; Linux ids come from <bpf/bpf_helpers.h>) ------- */
#if defined(__bpf__) || defined(__BPF__)
/* Print a constant string (device printf). */
static long (* const bpf_puts)(const char *s) = (void *)501;
/* %globaltimer in ns (same clock on every SM). */
static __u64 (* const bpf_get_globaltimer)(void) = (void *)502;
/* Write x/y/z of %ctaid, %ntid, %tid, %nctaid into the three 8-byte outputs; return 0. */
static long (* const bpf_get_block_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)503;
static long (* const bpf_get_block_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)504;
static long (* const bpf_get_thread_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)505;
/* Device-wide memory fence (membar.gl). */
static long (* const bpf_gpu_membar)(void) = (void *)506;
/* End the calling GPU thread (exit). */
static void (* const bpf_gpu_exit)(void) = (void *)507;
static long (* const bpf_get_grid_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)508;
/* %smid, %warpid, %laneid. */
static __u64 (* const bpf_get_sm_id)(void) = (void *)509;
static __u64 (* const bpf_get_warp_id)(void) = (void *)510;
static __u64 (* const bpf_get_lane_id)(void) = (void *)511;
/* %clock64: the SM's cycle counter. */
static __u64 (* const bpf_get_clock)(void) = (void *)512;
/* %activemask: the lanes of the warp executing this probe. */
static __u64 (* const bpf_get_active_mask)(void) = (void *)513;
/* Copy size bytes of the launched kernel's parameter buffer, from byte offset, into dst (stack,
 * map value or ring-buffer record; size a known constant). Offsets follow the kernel's .param
 * layout, each parameter at its natural alignment: for pattern(const float *a, float *b, int n)
 * a is at 0, b at 8, n at 16 (ctx->params_size = 20). Returns 0; -ERANGE when
 * [offset, offset + size) is not inside the buffer, -ENOENT when the buffer is unknown (PTX
 * before 7.7, which has no cvta.param); dst is zero-filled on an error. Only at gpu/entry,
 * gpu/exit, kprobe and kretprobe, whose context is struct gp_kernel_ctx:
 *   int n; if (!bpf_gpu_read_param(ctx, &n, sizeof(n), 16)) ... */
static long (* const bpf_gpu_read_param)(const struct gp_kernel_ctx *ctx, void *dst, __u32 size,
					  __u32 offset) = (void *)514;
/* Warp-wide views of a value v among the lanes running this probe together (sm_70+):
 * 1 when this lane is the lowest of them holding v (else 0): summed over lanes, the number of
 * distinct values per warp access (e.g. v = addr >> 5: 32-byte sectors; v = (addr >> 2) & 31
 * with the word: shared-memory banks); and the number of those lanes holding v. */
static __u64 (* const bpf_gpu_warp_unique)(__u64 v) = (void *)515;
static __u64 (* const bpf_gpu_warp_count)(__u64 v) = (void *)516;
/* One ring record for the lanes that call it together (a warp access at a gpu/mem site):
 * struct gp_warp_record (gpuprobe/warp.h), with each active lane's value folded into base +
 * stride when they are regular (coalesced or strided), listed after it otherwise. tag: any
 * warp-uniform value the decoder needs (the lowest lane's is kept), e.g. the site and
 * direction: ctx->insn_index | (__u64)ctx->dir << 32. flags: a constant, 0 or GP_WARP_VALUES
 * (always list the values). Returns 0 (also when a sampled ring left the access out), -EAGAIN
 * when the ring was full (dropped and counted; a lossless ring waits instead). sm_70+ (older
 * targets write one record per lane). The ring's map_flags / map_extra choose lossless and
 * sampling (gpuprobe/warp.h). */
static long (* const bpf_gpu_warp_output)(void *ring, __u64 value, __u64 tag, __u64 flags) = (void *)517;
#endif

#endif
