/* The context structs that r1 points to when a gpuprobe program runs, one per attach point.
 * Shared by probe authors (clang -target bpf) and by gpuprobe itself (host C): the verifier bounds
 * context reads by sizeof these structs, the instrumentation fills them on the device, the host
 * interpreter fills the host ones. The context is read-only for programs.
 *
 * Layout rules: fixed-size fields only, naturally aligned, explicit padding, no pointers (device
 * and host addresses are __u64), so both compilers agree on every offset. */
#ifndef GPUPROBE_CONTEXT_H
#define GPUPROBE_CONTEXT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Who is running: every device context carries these (in .thread). */
struct gp_thread_ids {
	__u32 block_idx[3];   /* %ctaid.x/y/z */
	__u32 thread_idx[3];  /* %tid.x/y/z */
	__u32 sm_id;          /* %smid: the "CPU" of per-CPU maps */
	__u32 warp_id;        /* %warpid */
	__u32 lane_id;        /* %laneid */
	__u32 kernel_hash;    /* gp_name_hash() of the kernel's (mangled) name */
};

/* gpu/entry/<kernel-glob>, gpu/exit/<kernel-glob>; bpftime's kprobe/ and kretprobe/ too. */
struct gp_kernel_ctx {
	__u64 params;         /* generic address of the kernel's parameter buffer (0: unknown);
	                       * read it with bpf_gpu_read_param(ctx, ...) (gpuprobe.h) */
	__u32 params_size;    /* bytes of parameters */
	__u32 _pad0;
	__u32 grid_dim[3];    /* %nctaid */
	__u32 block_dim[3];   /* %ntid */
	struct gp_thread_ids thread;
	__u64 timestamp;      /* %globaltimer, ns */
};

/* bpftime's kprobe/kretprobe programs built with BPF_KPROBE (libbpf's bpf_tracing.h,
 * -D__TARGET_ARCH_x86) read kernel arguments from an x86-64 struct pt_regs: argument 1..6 at
 * di, si, dx, cx, r8, r9 and the return value at ax. This is that layout (168 bytes), for a
 * context that serves such programs: the kernel's parameters, zero-extended, in those slots. */
struct gp_bpftime_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10;
	__u64 r9;    /* argument 6 (offset 64) */
	__u64 r8;    /* argument 5 (offset 72) */
	__u64 ax;    /* return value (offset 80) */
	__u64 cx;    /* argument 4 (offset 88) */
	__u64 dx;    /* argument 3 (offset 96) */
	__u64 si;    /* argument 2 (offset 104) */
	__u64 di;    /* argument 1 (offset 112) */
	__u64 orig_ax, ip, cs, flags, sp, ss;
};

/* gpu/block_begin/<glob>, gpu/block_end/<glob>: run once per block. */
struct gp_block_ctx {
	__u32 grid_dim[3];
	__u32 block_dim[3];
	struct gp_thread_ids thread;   /* thread_idx of the thread that runs the probe */
	__u64 timestamp;               /* %globaltimer, ns */
};

/* Values of gp_mem_ctx.space and .dir. */
enum gp_mem_space { GP_SPACE_GLOBAL = 1, GP_SPACE_SHARED = 2, GP_SPACE_LOCAL = 3, GP_SPACE_GENERIC = 4 };
enum gp_mem_dir { GP_DIR_LOAD = 1, GP_DIR_STORE = 2, GP_DIR_ATOMIC = 3 };
/* Values of gp_mem_ctx.kind: the instruction (the filters plain, async, matrix). A copy has two
 * sites, its source's (a load) and its destination's (a store; atomic for a reduction).
 *   PLAIN   ld, ldu, st, atom, red: the access
 *   ASYNC   cp.async, cp.async.bulk, cp.reduce.async.bulk: addr each side's address, size the
 *           bytes copied (0 when a bulk copy's count is not a constant in its basic block);
 *           cp.async.bulk.tensor (TMA): the global side's addr is the tensor map's (the
 *           CUtensorMap), the shared side's its buffer, size 0 (the box is in the map);
 *           st.async, red.async: the access
 *   MATRIX  ldmatrix, stmatrix: this lane's row address, size the bytes the lane receives or
 *           gives; wmma.load, wmma.store: the matrix's base address, size the lane's fragment */
enum gp_mem_kind { GP_MEM_KIND_PLAIN = 0, GP_MEM_KIND_ASYNC = 1, GP_MEM_KIND_MATRIX = 2 };

/* gpu/mem/<filters>/<kernel-glob>: before each matching load, store or atomic. */
struct gp_mem_ctx {
	__u64 addr;           /* the effective address (in its state space) */
	__u32 size;           /* bytes accessed */
	__u8 space;           /* enum gp_mem_space */
	__u8 dir;             /* enum gp_mem_dir */
	__u16 kind;           /* enum gp_mem_kind */
	__u32 insn_index;     /* index of the instruction in its function */
	__u32 line;           /* source line from .loc, 0 when unknown */
	struct gp_thread_ids thread;
};

/* gpu/barrier/<glob> (before bar.sync/barrier), gpu/barrier_after/<glob> (after). */
struct gp_barrier_ctx {
	__u32 barrier_id;     /* the barrier operand, 0 when implicit */
	__u32 insn_index;
	__u32 line;
	__u32 after;          /* 0 before the barrier, 1 after */
	struct gp_thread_ids thread;
	__u64 timestamp;
};

/* Classes of PTX instructions: the index of gp_bb_ctx.op_count. An instruction is in the first
 * class of this order that fits it: tensor; control; sync; warp; other (asynchronous copies,
 * textures and surfaces, prefetches, instructions gpuprobe does not know); atomic; load; store;
 * move; sfu; then by its type: fp64, fp32, fp16, else int. */
enum gp_op_class {
	GP_OP_INT = 0,        /* integer and bit arithmetic, logic, compares and selects on integers */
	GP_OP_FP32 = 1,       /* .f32 arithmetic, compares and selects (fma, add, setp.f32 ...) */
	GP_OP_FP64 = 2,       /* .f64 */
	GP_OP_FP16 = 3,       /* .f16, .f16x2, .bf16, .bf16x2, .tf32 and 8-bit float types */
	GP_OP_SFU = 4,        /* approximate transcendentals: sin, cos, lg2, ex2, tanh, rsqrt,
	                       * rcp.approx, sqrt.approx */
	GP_OP_MOVE = 5,       /* mov, cvt, cvta: moves and conversions between registers */
	GP_OP_LOAD = 6,       /* ld, ldu: every state space (param and const too) */
	GP_OP_STORE = 7,      /* st */
	GP_OP_ATOMIC = 8,     /* atom, red */
	GP_OP_CONTROL = 9,    /* bra, brx.idx, call, ret, exit, trap */
	GP_OP_SYNC = 10,      /* bar, barrier, bar.warp.sync, membar, fence, mbarrier */
	GP_OP_WARP = 11,      /* shfl, vote, match, redux, activemask, elect */
	GP_OP_TENSOR = 12,    /* mma, wmma, wgmma, ldmatrix, stmatrix, tcgen05 */
	GP_OP_OTHER = 13,     /* cp.async*, tex, tld4, suld, sust, prefetch, nanosleep, unknown */
	GP_OP_NCLASSES = 14,
};

/* gpu/bb/<glob>: at the start of each basic block. */
struct gp_bb_ctx {
	__u32 bb_index;       /* basic block number in its function, in program order */
	__u32 insn_index;     /* index of the block's first instruction */
	__u32 line;
	__u32 func_hash;      /* gp_name_hash() of the enclosing function */
	struct gp_thread_ids thread;
	__u32 ninsns;         /* instructions in the block (up to its branch or the next label) */
	__u32 _pad0;
	__u32 op_count[GP_OP_NCLASSES];   /* the block's instructions by enum gp_op_class (they add
	                                   * up to ninsns); constants at each site */
};

/* gpu/func_entry/<func-glob>, gpu/func_exit/<func-glob>: device .func calls. */
struct gp_func_ctx {
	__u32 func_hash;      /* gp_name_hash() of the function */
	__u32 nargs;          /* scalar parameters copied into args (at most 8) */
	__u64 args[8];        /* entry: parameters, zero-extended */
	__u64 ret;            /* exit: the first return value, zero-extended */
	struct gp_thread_ids thread;
};

/* host/entry/<cuApi-glob>, host/exit/<cuApi-glob>: driver API calls, run by the host interpreter. */
struct gp_host_ctx {
	__u32 api_id;         /* the function, enum gp_api (gpuprobe/api.h); 0: not in that list */
	__u32 api_hash;       /* gp_name_hash() of its name, e.g. "cuLaunchKernel" */
	__u32 nargs;          /* arguments copied into args (at most 8) */
	__s32 result;         /* exit: the CUresult returned; entry: 0 */
	__u64 args[8];        /* arguments as 64-bit values (pointers as addresses) */
	__u64 ret;            /* exit: the return value as 64 bits */
	__u64 timestamp;      /* CLOCK_MONOTONIC ns */
	__u32 pid;
	__u32 tid;
	__u32 kernel_hash;    /* launches (cuLaunchKernel*, cuLaunchCooperativeKernel*): the
	                       * launched kernel's gp_name_hash(), as ctx->thread.kernel_hash on
	                       * the device (key gp_kernel_id_t prints its name); 0 otherwise or
	                       * when the kernel's name is unknown */
	__u32 _pad0;
};

/* 32-bit FNV-1a of a name: what the *_hash fields hold. Usable in BPF programs with a constant
 * string (clang unrolls it) and on the host. */
static inline __u32 gp_name_hash(const char *s)
{
	__u32 h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (__u8)*s) * 16777619u;
	return h;
}

#endif
