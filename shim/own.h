/* gpuprobe's own driver: the CUDA driver API implemented over a backend (spirv/backend.h)
 * instead of forwarded, with GPUPROBE_BACKEND=opencl|levelzero, or by itself when no NVIDIA
 * driver is found but an OpenCL device is (own_init.c decides).
 *
 * It plugs into the same exports as the forwarding path: own_install() fills the forwarding
 * table's slots (forward.h) with the own_* implementations, by exported name, so every export,
 * the interception layer (intercept_*.c) included, reaches them exactly as it reaches the real
 * driver; a slot left empty answers CUDA_ERROR_NOT_SUPPORTED with one line naming the function
 * (shim_unavailable). The NVIDIA path is unchanged: same table, same tail calls.
 *
 * One device (the backend's), one in-order queue that every stream shares (a stronger order
 * than CUDA's: work of different streams never overlaps), device memory at host-visible
 * addresses (SVM), modules built per kernel at its first launch (own_module.c). */
#ifndef GPUPROBE_SHIM_OWN_H
#define GPUPROBE_SHIM_OWN_H

#include "shim/forward.h"
#include "spirv/backend.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum { OWN_MAGIC_CTX = 0x6f637478, OWN_MAGIC_STREAM = 0x6f737472, OWN_MAGIC_EVENT = 0x6f657674,
       OWN_MAGIC_MODULE = 0x6f6d6f64, OWN_MAGIC_FUNC = 0x6f66756e, OWN_MAGIC_LIB = 0x6f6c6962,
       OWN_MAGIC_ARRAY = 0x6f617272, OWN_MAGIC_LINK = 0x6f6c6e6b };

/* The compute capability the own driver reports: the PTX of nvcc's default and -arch=sm_90
 * builds JITs for it (fatbin__best_ptx picks the highest PTX not above it). */
#define OWN_CC_MAJOR 9
#define OWN_CC_MINOR 0

typedef void (*own_cls_dtor)(CUcontext, void *, void *);

struct own_ctx {
	uint32_t magic;
	int primary;
	unsigned flags;
	int refs;
	unsigned long long id;
	pthread_mutex_t lock;
	struct { void *key, *value; own_cls_dtor dtor; } cls[32];  /* context-local storage */
	unsigned ncls;
};

struct own_stream {
	uint32_t magic;
	struct own_ctx *ctx;
	unsigned flags;
	int priority;
	unsigned long long id;
	struct own_graph *capture;   /* recording into (stream capture), or NULL */
	unsigned long long capture_id;
};

struct own_event {
	uint32_t magic;
	unsigned flags;
	gp_bk_event *ev;     /* NULL until recorded */
	struct own_graph *capture;   /* recorded in a capturing stream: waiting on it joins that capture */
	uint64_t host_ns;    /* CLOCK_MONOTONIC when the marker completed, if the backend has no time */
};

struct own_state {
	const struct gp_bk_ops *ops;
	gp_bk *bk;
	struct gp_bk_info info;
	gp_bk_queue *queue;          /* every stream's */
	struct own_ctx primary;
	int initialized;             /* cuInit called */
	int primary_active;
	unsigned primary_flags;
	uint64_t trap_word;          /* kernels note a failed assert (1), a trap (2) or a shared-memory
	                                access outside the window (3) here (host memory) */
	uint64_t grid_workspace;     /* cooperative groups' grid workspace: 16 bytes into the trap
	                                word's 64 (spirv_options.grid_workspace) */
	uint64_t launch_queue;       /* device launches (spirv.h), host memory; 0 until a module needs it */
	uint64_t clock_word;         /* the host's CLOCK_REALTIME for kernels' %globaltimer: 32 bytes into
	                                the trap word's 64, kept by own_clock.c (spirv_options.clock_word) */
	CUresult sticky;             /* the error every call returns once a kernel trapped */
};
extern struct own_state own;

/* Whether the own driver serves this process (set once, before any call is served). */
extern int own_is_active;
static inline int own_active(void) { return __atomic_load_n(&own_is_active, __ATOMIC_RELAXED); }

/* driver.c's hook: GPUPROBE_BACKEND, or no real driver found (found_real: 0). Returns 1 when the
 * own driver took the table. */
int own_install(int found_real);

/* The slots: name -> implementation, and the look-up cuGetProcAddress does in own mode. */
struct own_fn { const char *name; void *fn; };
extern const struct own_fn own_fns[];
extern const size_t own_nfns;
CUresult own_getproc(const char *symbol, void **pfn, int version, cuuint64_t flags,
		     CUdriverProcAddressQueryResult *status);

/* One line, once per function: "NAME is not implemented by gpuprobe's own driver". */
CUresult own_unsupported(int id_or_minus1, const char *name);

/* errno from a backend -> CUresult. */
CUresult own_err(int neg_errno);

/* The calling thread's current context (NULL: none), and checks shared by the files. */
struct own_ctx *own_ctx_current(void);
int own_shared_optin(void);               /* most dynamic shared memory a kernel may opt in to */
CUresult own_ready(void);                 /* cuInit called, and no kernel trapped (the sticky error) */
/* After a wait: the sticky error if a kernel failed an assert or trapped, else rc. */
CUresult own_trapped(CUresult rc);
uint64_t own_now_ns(void);
/* Keep own.clock_word at the host's CLOCK_REALTIME from now on (a thread that writes it every
 * 100 us; once per process, again in a forked child that builds a kernel reading the clock). */
void own_clock_start(void);

/* Memory records (own_memory.c): for address ranges and pointer attributes. */
struct own_alloc {
	uint64_t addr;
	size_t size;
	int host;            /* cuMemAllocHost/cuMemHostAlloc: host memory the device reaches */
	int managed;
	int registered;      /* cuMemHostRegister: the application's memory, not ours to free */
	int graph;           /* a graph's allocation node's: every launch "allocates" it again */
	unsigned flags;
};
int own_alloc_find(uint64_t addr, struct own_alloc *out);
void own_alloc_mark_graph(uint64_t addr);

/* Copies and fills on the shared queue (a copy blocks unless both ends are the own driver's
 * memory); recorded instead when an async one's stream is capturing (own_graph.c). */
CUresult own_copy(uint64_t dst, uint64_t src, size_t n, int async, CUstream stream);
/* A blocking copy made even after a kernel trapped (the sticky error): the probes' maps are
 * read after the application's kernel failed an assert, as their memory is still there. */
CUresult own_copy_after_trap(uint64_t dst, uint64_t src, size_t n);
CUresult own_copy3d(const CUDA_MEMCPY3D *c, int async, CUstream stream);
/* A CUDA array (own_array.c) as linear memory: base, row pitch, rows per slice; -1 if h is none. */
int own_array_linear(CUarray h, uint64_t *base, size_t *pitch, size_t *height);
CUresult own_set(uint64_t d, const void *pat, size_t psize, size_t count, size_t pitch, size_t height,
		 CUstream stream);

/* CUDA graphs (own_graph.c): the graph a capturing stream records into (NULL: not capturing),
 * and the recording of each kind of work. */
struct own_graph;
struct own_graph *own_capturing(CUstream s);
CUresult own_graph_add_copy(struct own_graph *g, uint64_t dst, uint64_t src, size_t n);
CUresult own_graph_add_set(struct own_graph *g, uint64_t d, const void *pat, size_t psize, size_t count,
			   size_t pitch, size_t height);
CUresult own_graph_add_launch(struct own_graph *g, CUfunction f, const unsigned grid[3], const unsigned block[3],
			      unsigned shmem, void **params, void **extra);
CUresult own_graph_add_host(struct own_graph *g, void (*fn)(void *), void *data);
/* s waited on an event recorded in g's capture: s records into g too, until it ends. */
void own_capture_join(struct own_stream *s, struct own_graph *g);

/* Kernel launch shared by cuLaunchKernel, cuLaunchKernelEx and the runtime's table (own_launch.c). */
CUresult own_launch(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shmem,
		    CUstream stream, void **params, void **extra);

/* Module loading shared by every load path and the runtime's table (own_module.c). */
CUresult own_module_load(CUmodule *out, const void *image, const char *what);

#endif
