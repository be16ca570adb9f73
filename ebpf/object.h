/* A BPF object opened for the GPU: its programs (instructions with map references resolved),
 * its maps, and each program's attach point, read without touching the kernel.
 * libbpf style: opaque object, gp_object__verb names, negative errno returns. */
#ifndef GPUPROBE_EBPF_OBJECT_H
#define GPUPROBE_EBPF_OBJECT_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

enum gp_attach_kind {
	GP_ATTACH_NONE = 0,        /* a section that names no attach point (subprograms) */
	GP_ATTACH_KERNEL_ENTRY,    /* every thread, at kernel entry */
	GP_ATTACH_KERNEL_EXIT,     /* every thread, before every ret/exit */
	GP_ATTACH_BLOCK_BEGIN,     /* once per block: the first thread in */
	GP_ATTACH_BLOCK_END,       /* once per block: the last thread out */
	GP_ATTACH_FUNC_ENTRY,      /* .func entry */
	GP_ATTACH_FUNC_EXIT,       /* .func exit */
	GP_ATTACH_MEM,             /* before loads, stores, atomics (filtered) */
	GP_ATTACH_BARRIER,         /* before and after bar.sync / barrier */
	GP_ATTACH_BASIC_BLOCK,     /* basic block entry */
	GP_ATTACH_HOST_ENTRY,      /* before a driver API call (host interpreter) */
	GP_ATTACH_HOST_EXIT,       /* after a driver API call (host interpreter) */
};

/* Memory-probe filters, from the section name. */
enum gp_mem_filter {
	GP_MEM_GLOBAL = 1u << 0, GP_MEM_SHARED = 1u << 1, GP_MEM_LOCAL = 1u << 2,
	GP_MEM_GENERIC = 1u << 3, GP_MEM_ALL_SPACES = 0xf,
	GP_MEM_LOAD = 1u << 4, GP_MEM_STORE = 1u << 5, GP_MEM_ATOMIC = 1u << 6,
	GP_MEM_ALL_DIRS = 0x70,
	/* Kinds of instruction (none named: all): ld/ldu/st/atom/red; the asynchronous copies
	 * (cp.async, cp.async.bulk, TMA's cp.async.bulk.tensor, st.async, red.async); the matrix
	 * loads and stores (ldmatrix, stmatrix, wmma.load, wmma.store). */
	GP_MEM_PLAIN = 1u << 7, GP_MEM_ASYNC = 1u << 8, GP_MEM_MATRIX = 1u << 9,
	GP_MEM_ALL_KINDS = 0x380,
};

struct gp_program {
	const char *name;          /* the function's name */
	const char *section;       /* the ELF section it lives in */
	enum gp_attach_kind attach;
	const char *target;        /* kernel/function/API name or glob from the section, or NULL */
	unsigned mem_filter;       /* GP_MEM_* for GP_ATTACH_MEM */
	int barrier_after;         /* GP_ATTACH_BARRIER: 0 before, 1 after */
	struct bpf_insn *insns;    /* map references resolved: ld_imm64 with src_reg
	                            * BPF_PSEUDO_MAP_FD and imm = map index, or BPF_PSEUDO_MAP_VALUE
	                            * with imm = map index and the next insn's imm = offset */
	size_t ninsns;
};

struct gp_map {
	const char *name;          /* ".data", ".rodata", ".bss" for global data sections */
	uint32_t type;             /* BPF_MAP_TYPE_* or bpftime's 1502/1527 */
	uint32_t key_size, value_size, max_entries, flags;
	uint64_t map_extra;        /* BTF maps' map_extra (rings: the sampling rate, gpuprobe/warp.h) */
	const void *initial;       /* initial value bytes for global data maps, else NULL */
	size_t initial_size;
	int readonly;              /* .rodata */
	/* How `gpuprobe run` prints it, from the key's BTF type (object_print.c,
	 * include/gpuprobe/output.h); GP_PRINT_BY_NAME leaves it to the map's name. */
	uint32_t print_as;         /* enum gp_map_print */
	uint64_t print_step;       /* GP_PRINT_LINEAR: the bucket width */
};

enum gp_map_print {
	GP_PRINT_BY_NAME = 0,      /* no type said: the name rules decide */
	GP_PRINT_KERNEL,           /* key gp_kernel_id_t */
	GP_PRINT_API,              /* key gp_api_id_t */
	GP_PRINT_LOG2,             /* key gp_log2_key_t */
	GP_PRINT_LINEAR,           /* key gp_lhist_key_t with GP_LHIST_STEP(print_step) */
	GP_PRINT_SCALAR,           /* key gp_no_key_t: one value */
	GP_PRINT_TUPLE,            /* a struct key of integers (and the key types above), each
	                            * member naturally aligned, in order: print_step has byte i =
	                            * member i: GP_TUPLE_* (0: no more members) */
};
#define GP_TUPLE_PRESENT 0x80u     /* | log2 of the member's size (0-3) | kind << 2 */
#define GP_TUPLE_INT 0u
#define GP_TUPLE_KERNEL 1u
#define GP_TUPLE_API 2u
#define GP_TUPLE_MAX 8

struct gp_object;

/* Open a BPF ELF object. On failure returns a negative errno and writes one line into err. */
int gp_object__open_file(const char *path, struct gp_object **out, char *err, size_t errlen);
int gp_object__open_mem(const void *data, size_t size, const char *name, struct gp_object **out,
			char *err, size_t errlen);
void gp_object__close(struct gp_object *obj);

size_t gp_object__program_count(const struct gp_object *obj);
const struct gp_program *gp_object__program(const struct gp_object *obj, size_t i);
size_t gp_object__map_count(const struct gp_object *obj);
const struct gp_map *gp_object__map(const struct gp_object *obj, size_t i);
const char *gp_object__license(const struct gp_object *obj);
const char *gp_object__path(const struct gp_object *obj);

/* bpftime's host-side probes, uprobe/<binary>:<function> and uretprobe/<binary>:<function>, load
 * as host/entry and host/exit programs (object_attach.c): on a CUDA runtime function, at the
 * driver calls the runtime makes for it (target: their glob, e.g. cudaLaunchKernel ->
 * cuLaunchKernel*); on a driver function cu*, at that function. The binary path is ignored.
 * Their context (r1) is not struct gp_host_ctx but an x86-64 struct pt_regs
 * (struct gp_bpftime_regs), filled by the host runner (nvidia/host.c) in one of two layouts: */
enum gp_uprobe_abi {
	GP_UPROBE_NONE = 0,           /* not a uprobe program */
	GP_UPROBE_DRIVER_ARGS,        /* di, si, dx, cx, r8, r9 = the driver call's arguments 1-6 as
	                               * host probes see them (gp_host_ctx.args); ax = the result */
	GP_UPROBE_RUNTIME_LAUNCH,     /* cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem,
	                               * stream) under the x86-64 ABI: di = func, si = grid.x |
	                               * grid.y << 32, dx = grid.z, cx = block.x | block.y << 32,
	                               * r8 = block.z, r9 = 0 (args not kept); ax = the CUresult */
};
enum gp_uprobe_abi gp_program__uprobe_abi(const struct gp_program *p);
/* Readable bytes at r1 for the verifier and the interpreter: sizeof the attach point's context
 * struct, or of struct gp_bpftime_regs for uprobe programs. */
uint32_t gp_program__ctx_size(const struct gp_program *p);

#endif
