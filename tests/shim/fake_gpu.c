/* The fake driver's "GPU" (fake_gpu.h): a context, one sm_90 device with 4 SMs, device memory
 * (plain and virtual-memory-management: reserve, create, map) that is host memory at the same
 * address, streams, stream capture into graphs, graphs and their replay, and two kernels run on
 * the CPU (kernels.cu's vec_add and scale), so that an application's output over the fake is
 * real output, the same with and without the shim.
 *
 * Capture follows the driver's documented rules (cuThreadExchangeStreamCaptureMode,
 * cuStreamBeginCapture): while a thread has a capture of its own not begun in relaxed mode, or
 * another thread captures in global mode and this thread's mode is global, a potentially unsafe
 * call (allocation, freeing, registering, reserving, mapping, a module load through
 * cuModuleLoadData/Ex or an unload, a stream synchronisation) fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates those captures; their cuStreamEndCapture
 * then returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. A synchronous operation on the legacy stream
 * invalidates every capture of a blocking stream (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT), whatever
 * the thread's mode. (cuLibraryLoadData stays allowed: the CUDA runtime's lazy loading calls it
 * inside an application's capture, and real applications run so natively.)
 *
 * FAKE_REPORT=FILE: at exit, what ran (launches of original and instrumented code, captures
 * invalidated and by which call) and what is still allocated, one fact per line.
 * FAKE_VMM=0: the device has no virtual memory management. */
#include "fake_gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define OK 0
#define INVALID_VALUE 1
#define OUT_OF_MEMORY 2
#define NOT_FOUND 500
#define ILLEGAL_STATE 401

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* FAKE_GPU=1: kernels run and lookups are recorded. Off, launches are left to fake_driver.c's
 * argument checks (tests/shim/forward_test.c launches with made-up arguments, 1.6 million
 * times). */
static int fake_gpu_on;
__attribute__((constructor)) static void fake_gpu_env(void)
{
	const char *v = getenv("FAKE_GPU");
	fake_gpu_on = v && !strcmp(v, "1");
}

/* ---- modules and kernels ----------------------------------------------------------------- */

enum { IMG_ORIGINAL, IMG_INSTRUMENTED, IMG_CUBIN };
static const char *const img_kind[] = {"original", "instrumented", "cubin"};
#define MAX_IMAGES 256
static struct { uintptr_t h; int kind, live; } images[MAX_IMAGES];
static int nimages;
#define MAX_NAMES 1024
static struct { uintptr_t fn, owner; char name[64]; } names[MAX_NAMES];
static int nnames;
static unsigned long launches[3];

void fake_gpu_image(uintptr_t h, const void *image)
{
	const unsigned char *p = image;
	int kind = IMG_ORIGINAL;
	if (p[0] == 0x7f && p[1] == 'E')
		kind = IMG_CUBIN;
	else if (!(p[0] == 0x50 && p[1] == 0xed) && !(p[0] == 0xb1 && p[1] == 0x43) &&
		 strstr(image, "__gp"))
		kind = IMG_INSTRUMENTED;   /* PTX text naming the shim's probe functions */
	pthread_mutex_lock(&mu);
	if (nimages < MAX_IMAGES)
		images[nimages++] = (typeof(images[0])){h, kind, 1};
	pthread_mutex_unlock(&mu);
}

void fake_gpu_unload(uintptr_t h)
{
	pthread_mutex_lock(&mu);
	for (int i = nimages; i-- > 0;)
		if (images[i].h == h && images[i].live) {
			images[i].live = 0;
			break;
		}
	pthread_mutex_unlock(&mu);
}

void fake_gpu_name(uintptr_t fn, uintptr_t owner, const char *name)
{
	if (!fake_gpu_on)
		return;
	pthread_mutex_lock(&mu);
	if (nnames < MAX_NAMES) {
		names[nnames].fn = fn;
		names[nnames].owner = owner;
		snprintf(names[nnames].name, sizeof(names[0].name), "%s", name);
		nnames++;
	}
	pthread_mutex_unlock(&mu);
}

/* The latest record of fn (a function, a kernel, or a kernel's function: kernel + 0x100000). */
static int find_fn(uintptr_t fn, const char **name, int *kind)
{
	for (int pass = 0; pass < 2; pass++, fn -= 0x100000)
		for (int i = nnames; i-- > 0;)
			if (names[i].fn == fn) {
				*name = names[i].name;
				*kind = IMG_ORIGINAL;
				for (int j = nimages; j-- > 0;)
					if (images[j].h == names[i].owner) {
						*kind = images[j].kind;
						break;
					}
				return 0;
			}
	return -1;
}

/* ---- work: copies, memsets, kernels ------------------------------------------------------ */

enum { W_HTOD, W_DTOH, W_MEMSET, W_KERNEL };
struct work {
	int type;
	uint64_t dst, src;
	size_t n;
	unsigned char v;
	uintptr_t fn;
	unsigned threads;
	uint64_t arg[4];
};

static int kernel_args(const char *name, void **params, uint64_t *arg)
{
	if (!params)
		return -1;
	if (!strcmp(name, "scale")) {           /* (float *x, float s, int n) */
		arg[0] = *(uint64_t *)params[0];
		arg[1] = *(uint32_t *)params[1];
		arg[2] = (uint64_t)*(int *)params[2];
		return 0;
	}
	if (!strcmp(name, "gpuprobe_clock_read")) {   /* the shim's own clock kernel (u64 *out) */
		arg[0] = *(uint64_t *)params[0];
		return 0;
	}
	if (!strcmp(name, "vec_add")) {         /* (const float *a, const float *b, float *c, int n) */
		for (int i = 0; i < 3; i++)
			arg[i] = *(uint64_t *)params[i];
		arg[3] = (uint64_t)*(int *)params[3];
		return 0;
	}
	return -1;
}

/* The fake GPU's %globaltimer: CLOCK_REALTIME plus FAKE_GLOBALTIMER_OFFSET_NS (signed ns), for
 * the shim's clock correction (shim/clock_sync.c): on the H100 test machine the GPU's clock is
 * not the host's. */
static uint64_t globaltimer(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	const char *o = getenv("FAKE_GLOBALTIMER_OFFSET_NS");
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec +
	       (uint64_t)(o ? strtoll(o, NULL, 10) : 0);
}

/* Called with mu held. */
static int run(const struct work *w)
{
	switch (w->type) {
	case W_HTOD:
	case W_DTOH:
		memcpy((void *)(uintptr_t)w->dst, (const void *)(uintptr_t)w->src, w->n);
		return OK;
	case W_MEMSET:
		memset((void *)(uintptr_t)w->dst, w->v, w->n);
		return OK;
	}
	const char *name;
	int kind;
	if (find_fn(w->fn, &name, &kind))
		return NOT_FOUND;
	if (!strcmp(name, "gpuprobe_clock_read")) {   /* the shim's, not the application's */
		__atomic_store_n((uint64_t *)(uintptr_t)w->arg[0], globaltimer(), __ATOMIC_RELEASE);
		return OK;
	}
	launches[kind]++;
	if (!strcmp(name, "scale")) {
		float *x = (float *)(uintptr_t)w->arg[0], s;
		uint32_t bits = (uint32_t)w->arg[1];
		memcpy(&s, &bits, sizeof(s));
		for (unsigned i = 0; i < w->threads && i < (unsigned)(int)w->arg[2]; i++)
			x[i] *= s;
	} else if (!strcmp(name, "vec_add")) {
		const float *a = (const float *)(uintptr_t)w->arg[0];
		const float *b = (const float *)(uintptr_t)w->arg[1];
		float *c = (float *)(uintptr_t)w->arg[2];
		for (unsigned i = 0; i < w->threads && i < (unsigned)(int)w->arg[3]; i++)
			c[i] = a[i] + b[i];
	}
	return OK;
}

struct worklist {
	struct work *w;
	size_t n, cap;
};

static int push_work(struct worklist *l, const struct work *w)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct work *p = realloc(l->w, cap * sizeof(*p));
		if (!p)
			return OUT_OF_MEMORY;
		l->w = p;
		l->cap = cap;
	}
	l->w[l->n++] = *w;
	return OK;
}

/* ---- streams and capture ----------------------------------------------------------------- */

enum { MODE_GLOBAL, MODE_THREAD_LOCAL, MODE_RELAXED };
struct stream {
	unsigned flags;            /* 1: non-blocking */
	int capturing, invalidated, mode;
	pthread_t thread;
	struct worklist cap;
};
#define MAX_STREAMS 256
static struct stream *streams[MAX_STREAMS];
static int live_streams;
static __thread int thread_mode = MODE_GLOBAL;
static unsigned long invalidations;
/* Calls (work, unsafe calls) from a thread while another thread's global-mode capture is open:
 * what a test of the shim's own threads during an application's capture looks for. */
static unsigned long foreign_calls;

/* Called with mu held. */
static void note_foreign(void)
{
	pthread_t self = pthread_self();
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i] && streams[i]->capturing && streams[i]->mode == MODE_GLOBAL &&
		    !pthread_equal(streams[i]->thread, self)) {
			foreign_calls++;
			return;
		}
}
static char invalidated_by[256];

static void invalidate(struct stream *s, const char *what)
{
	s->invalidated = 1;
	invalidations++;
	size_t n = strlen(invalidated_by);
	if (!strstr(invalidated_by, what))
		snprintf(invalidated_by + n, sizeof(invalidated_by) - n, "%s%s", n ? " " : "", what);
}

int fake_gpu_unsafe(const char *what)
{
	if (thread_mode == MODE_RELAXED) {
		pthread_mutex_lock(&mu);
		note_foreign();
		pthread_mutex_unlock(&mu);
		return OK;
	}
	int hit = 0;
	pthread_t self = pthread_self();
	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_STREAMS; i++) {
		struct stream *s = streams[i];
		if (!s || !s->capturing || s->mode == MODE_RELAXED)
			continue;
		/* refused while the capture lasts, invalidated or not */
		if (pthread_equal(s->thread, self) ||
		    (s->mode == MODE_GLOBAL && thread_mode == MODE_GLOBAL)) {
			if (!s->invalidated)
				invalidate(s, what);
			hit = 1;
		}
	}
	note_foreign();
	pthread_mutex_unlock(&mu);
	return hit ? FAKE_ERR_CAPTURE_UNSUPPORTED : OK;
}

/* Called with mu held. */
static int legacy_locked(const char *what)
{
	int hit = 0;
	for (int i = 0; i < MAX_STREAMS; i++) {
		struct stream *s = streams[i];
		if (s && s->capturing && !s->invalidated && !(s->flags & 1)) {
			invalidate(s, what);
			hit = 1;
		}
	}
	return hit ? FAKE_ERR_CAPTURE_IMPLICIT : OK;
}

int fake_gpu_legacy(const char *what)
{
	pthread_mutex_lock(&mu);
	int rc = legacy_locked(what);
	pthread_mutex_unlock(&mu);
	return rc;
}

static struct stream *stream_of(void *h)
{
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i] && streams[i] == h)
			return streams[i];
	return NULL;
}

/* Work into a stream: recorded while it captures, else done now. Legacy (NULL, 0x1) and
 * per-thread (0x2) streams synchronise with blocking streams. */
static int submit(void *stream, const struct work *w, const char *what)
{
	pthread_mutex_lock(&mu);
	int rc;
	struct stream *s = stream_of(stream);
	if (!s && (uintptr_t)stream > 2)
		rc = INVALID_VALUE;
	else if (!s && (rc = legacy_locked(what)))
		;
	else if (s && s->capturing)
		rc = s->invalidated ? FAKE_ERR_CAPTURE_INVALIDATED : push_work(&s->cap, w);
	else
		rc = run(w);
	pthread_mutex_unlock(&mu);
	return rc;
}

CUresult cuStreamCreate(void **ph, unsigned flags)
{
	struct stream *s = calloc(1, sizeof(*s));
	if (!s)
		return OUT_OF_MEMORY;
	s->flags = flags;
	pthread_mutex_lock(&mu);
	int i = 0;
	while (i < MAX_STREAMS && streams[i])
		i++;
	if (i < MAX_STREAMS) {
		streams[i] = s;
		live_streams++;
	}
	pthread_mutex_unlock(&mu);
	if (i == MAX_STREAMS) {
		free(s);
		return OUT_OF_MEMORY;
	}
	*ph = s;
	return OK;
}

CUresult cuStreamDestroy_v2(void *h)
{
	pthread_mutex_lock(&mu);
	int rc = INVALID_VALUE;
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i] && streams[i] == h) {
			free(streams[i]->cap.w);
			free(streams[i]);
			streams[i] = NULL;
			live_streams--;
			rc = OK;
		}
	pthread_mutex_unlock(&mu);
	return rc;
}

CUresult cuStreamSynchronize(void *h)
{
	pthread_mutex_lock(&mu);
	struct stream *s = stream_of(h);
	int rc = OK;
	if (s && s->capturing) {   /* waiting for work that is not being done */
		if (!s->invalidated)
			invalidate(s, "cuStreamSynchronize");
		rc = FAKE_ERR_CAPTURE_UNSUPPORTED;
	}
	pthread_mutex_unlock(&mu);
	return rc ? rc : fake_gpu_unsafe("cuStreamSynchronize");
}

CUresult cuStreamBeginCapture_v2(void *h, int mode)
{
	pthread_mutex_lock(&mu);
	struct stream *s = stream_of(h);
	int rc = !s ? INVALID_VALUE : s->capturing ? ILLEGAL_STATE : OK;
	if (!rc) {
		s->capturing = 1;
		s->invalidated = 0;
		s->mode = mode;
		s->thread = pthread_self();
		s->cap.n = 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

CUresult cuStreamIsCapturing(void *h, int *status)
{
	pthread_mutex_lock(&mu);
	struct stream *s = stream_of(h);
	*status = s && s->capturing ? (s->invalidated ? 2 : 1) : 0;
	pthread_mutex_unlock(&mu);
	return OK;
}

struct graph {
	struct worklist nodes;
	int exec;
};
static int live_graphs, live_execs;
static int graph_keep(struct graph *g);
static void graph_drop(struct graph *g);

static struct graph *graph_new(int exec)
{
	struct graph *g = calloc(1, sizeof(*g));
	if (g) {
		g->exec = exec;
		*(exec ? &live_execs : &live_graphs) += 1;
	}
	return g;
}

CUresult cuStreamEndCapture(void *h, void **graph)
{
	pthread_mutex_lock(&mu);
	struct stream *s = stream_of(h);
	int rc = !s || !s->capturing ? ILLEGAL_STATE : s->invalidated ? FAKE_ERR_CAPTURE_INVALIDATED
									: OK;
	*graph = NULL;
	if (!rc) {
		struct graph *g = graph_new(0);
		if (!g) {
			rc = OUT_OF_MEMORY;
		} else {
			g->nodes = s->cap;
			s->cap = (struct worklist){0};
			if ((rc = graph_keep(g)))
				graph_drop(g);
			else
				*graph = g;
		}
	}
	if (s) {
		s->capturing = 0;
		s->invalidated = 0;
		s->cap.n = 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

CUresult cuThreadExchangeStreamCaptureMode(int *mode)
{
	int old = thread_mode;
	thread_mode = *mode;
	*mode = old;
	return OK;
}

/* ---- graphs ------------------------------------------------------------------------------ */

#define MAX_GRAPHS 256
#define NODE_BASE 0x7000000u
static struct graph *graphs[MAX_GRAPHS];

static int graph_known(const void *g)
{
	for (int i = 0; i < MAX_GRAPHS; i++)
		if (graphs[i] && graphs[i] == g)
			return 1;
	return 0;
}

static int graph_keep(struct graph *g)
{
	for (int i = 0; i < MAX_GRAPHS; i++)
		if (!graphs[i]) {
			graphs[i] = g;
			return OK;
		}
	return OUT_OF_MEMORY;
}

static void graph_drop(struct graph *g)
{
	for (int i = 0; i < MAX_GRAPHS; i++)
		if (graphs[i] == g)
			graphs[i] = NULL;
	*(g->exec ? &live_execs : &live_graphs) -= 1;
	free(g->nodes.w);
	free(g);
}

CUresult cuGraphCreate(void **ph, unsigned flags)
{
	(void)flags;
	pthread_mutex_lock(&mu);
	struct graph *g = graph_new(0);
	int rc = g ? graph_keep(g) : OUT_OF_MEMORY;
	pthread_mutex_unlock(&mu);
	*ph = g;
	return rc;
}

int fake_gpu_graph_kernel(void **node, void *graph, uintptr_t fn, const unsigned grid[3],
			  const unsigned block[3], void **params)
{
	pthread_mutex_lock(&mu);
	int rc = -1;
	const char *name;
	int kind;
	if (graph_known(graph)) {
		struct work w = {.type = W_KERNEL, .fn = fn,
				 .threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]};
		struct worklist *l = &((struct graph *)graph)->nodes;
		rc = find_fn(fn, &name, &kind) || kernel_args(name, params, w.arg)
			? INVALID_VALUE : push_work(l, &w);
		*node = (void *)(uintptr_t)(NODE_BASE + l->n - 1);   /* the node's index */
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

int fake_gpu_exec_kernel_set(void *exec, void *node, uintptr_t fn, const unsigned grid[3],
			     const unsigned block[3], void **params)
{
	pthread_mutex_lock(&mu);
	struct graph *e = exec;
	size_t i = (uintptr_t)node - NODE_BASE;
	const char *name;
	int kind, rc = INVALID_VALUE;
	struct work w = {.type = W_KERNEL, .fn = fn,
			 .threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]};
	if (graph_known(e) && e->exec && i < e->nodes.n && e->nodes.w[i].type == W_KERNEL &&
	    !find_fn(fn, &name, &kind) && !kernel_args(name, params, w.arg)) {
		e->nodes.w[i] = w;
		rc = OK;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags)
{
	(void)flags;
	pthread_mutex_lock(&mu);
	int rc = graph ? OK : INVALID_VALUE;
	struct graph *g = graph, *e = NULL;
	if (!rc && !(e = graph_new(1)))
		rc = OUT_OF_MEMORY;
	for (size_t i = 0; !rc && i < g->nodes.n; i++)
		rc = push_work(&e->nodes, &g->nodes.w[i]);
	if (!rc)
		rc = graph_keep(e);
	if (rc && e)
		graph_drop(e);
	pthread_mutex_unlock(&mu);
	*exec = rc ? NULL : e;
	return rc;
}

CUresult cuGraphLaunch(void *exec, void *stream)
{
	pthread_mutex_lock(&mu);
	struct graph *e = exec;
	struct stream *s = stream_of(stream);
	int rc = graph_known(e) && e->exec ? OK : INVALID_VALUE;
	for (size_t i = 0; !rc && i < e->nodes.n; i++)
		rc = s && s->capturing ? push_work(&s->cap, &e->nodes.w[i]) : run(&e->nodes.w[i]);
	pthread_mutex_unlock(&mu);
	return rc;
}

static CUresult graph_destroy(void *g, int exec)
{
	pthread_mutex_lock(&mu);
	int rc = graph_known(g) && ((struct graph *)g)->exec == exec ? OK : INVALID_VALUE;
	if (!rc)
		graph_drop(g);
	pthread_mutex_unlock(&mu);
	return rc;
}
CUresult cuGraphDestroy(void *g) { return graph_destroy(g, 0); }
CUresult cuGraphExecDestroy(void *e) { return graph_destroy(e, 1); }

int fake_gpu_launch(uintptr_t fn, const unsigned grid[3], const unsigned block[3], void *stream,
		    void **params)
{
	if (!fake_gpu_on)
		return -1;
	pthread_mutex_lock(&mu);
	const char *name;
	int kind;
	struct work w = {.type = W_KERNEL, .fn = fn,
			 .threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]};
	int rc = find_fn(fn, &name, &kind) ? -1 : kernel_args(name, params, w.arg) ? INVALID_VALUE : OK;
	pthread_mutex_unlock(&mu);
	if (rc)
		return rc;
	return submit(stream, &w, "cuLaunchKernel");
}

/* ---- context and device ------------------------------------------------------------------ */

#define CTX ((void *)0xc0c0)
static __thread void *cur_ctx;
static __thread void *ctx_stack[16];
static __thread int ctx_depth;

CUresult cuDevicePrimaryCtxRetain(void **c, int dev) { (void)dev; *c = CTX; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return OK; }
CUresult cuCtxSetCurrent(void *c) { cur_ctx = c; return OK; }
CUresult cuCtxGetCurrent(void **c) { *c = cur_ctx; return OK; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return cur_ctx ? OK : 201; }
CUresult cuCtxPushCurrent_v2(void *c)
{
	if (ctx_depth == 16)
		return INVALID_VALUE;
	ctx_stack[ctx_depth++] = cur_ctx;
	cur_ctx = c;
	return OK;
}
CUresult cuCtxPopCurrent_v2(void **c)
{
	if (!ctx_depth)
		return INVALID_VALUE;
	if (c)
		*c = cur_ctx;
	cur_ctx = ctx_stack[--ctx_depth];
	return OK;
}
CUresult cuCtxSynchronize(void)
{
	/* Waits for every stream of the context: a capturing one necessarily conflicts. */
	pthread_mutex_lock(&mu);
	int hit = 0;
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i] && streams[i]->capturing && !streams[i]->invalidated) {
			invalidate(streams[i], "cuCtxSynchronize");
			hit = 1;
		}
	pthread_mutex_unlock(&mu);
	return hit ? FAKE_ERR_CAPTURE_UNSUPPORTED : OK;
}
CUresult cuDeviceGet(int *d, int i) { *d = i; return i == 0 ? OK : INVALID_VALUE; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceCanAccessPeer(int *can, int a, int b) { (void)a; (void)b; *can = 0; return OK; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	const char *vmm = getenv("FAKE_VMM");
	switch (attr) {
	case 16: *v = 4; return OK;            /* multiprocessors */
	case 75: *v = 9; return OK;            /* compute capability 9.0 */
	case 76: *v = 0; return OK;
	case 91: *v = 1; return OK;            /* host pointers usable for registered memory */
	case 102: *v = !(vmm && !strcmp(vmm, "0")); return OK;
	default: *v = 0; return OK;
	}
}

CUresult cuGetErrorName(CUresult e, const char **s)
{
	switch (e) {
	case OK: *s = "CUDA_SUCCESS"; return OK;
	case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
	case OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return OK;
	case 200: *s = "CUDA_ERROR_INVALID_IMAGE"; return OK;
	case 218: *s = "CUDA_ERROR_INVALID_PTX"; return OK;
	case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
	case FAKE_ERR_CAPTURE_UNSUPPORTED: *s = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; return OK;
	case FAKE_ERR_CAPTURE_INVALIDATED: *s = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; return OK;
	case FAKE_ERR_CAPTURE_IMPLICIT: *s = "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"; return OK;
	default: *s = "CUDA_ERROR_UNKNOWN"; return OK;
	}
}

/* ---- memory ------------------------------------------------------------------------------ */

static int live_allocs, live_host_allocs, live_registered, live_reserved, live_handles, live_mapped;

#define UNSAFE(name)                                   \
	do {                                           \
		int u_ = fake_gpu_unsafe(name);        \
		if (u_)                                \
			return u_;                     \
	} while (0)

static void count(int *c, int d)
{
	pthread_mutex_lock(&mu);
	*c += d;
	pthread_mutex_unlock(&mu);
}

CUresult cuMemAlloc_v2(uint64_t *d, size_t n)
{
	UNSAFE("cuMemAlloc");
	void *p = NULL;
	if (posix_memalign(&p, 256, n ? n : 1))
		return OUT_OF_MEMORY;
	memset(p, 0xcd, n);   /* not zeroed, as on a GPU */
	*d = (uintptr_t)p;
	count(&live_allocs, 1);
	return OK;
}
CUresult cuMemFree_v2(uint64_t d)
{
	UNSAFE("cuMemFree");
	if (!d)
		return OK;   /* as the driver: nothing to free */
	free((void *)(uintptr_t)d);
	count(&live_allocs, -1);
	return OK;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f)
{
	(void)f;
	UNSAFE("cuMemHostAlloc");
	if (posix_memalign(p, 4096, n ? n : 1))
		return OUT_OF_MEMORY;
	count(&live_host_allocs, 1);
	return OK;
}
CUresult cuMemFreeHost(void *p)
{
	UNSAFE("cuMemFreeHost");
	free(p);
	count(&live_host_allocs, -1);
	return OK;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f)
{
	(void)p; (void)n; (void)f;
	UNSAFE("cuMemHostRegister");
	count(&live_registered, 1);
	return OK;
}
CUresult cuMemHostUnregister(void *p)
{
	(void)p;
	UNSAFE("cuMemHostUnregister");
	count(&live_registered, -1);
	return OK;
}
CUresult cuMemHostGetDevicePointer_v2(uint64_t *d, void *h, unsigned f)
{ (void)f; *d = (uintptr_t)h; return OK; }

CUresult cuMemGetAllocationGranularity(size_t *g, const void *p, int o)
{ (void)p; (void)o; *g = 2u << 20; return OK; }
CUresult cuMemAddressReserve(uint64_t *p, size_t n, size_t a, uint64_t at, unsigned long long f)
{
	(void)a; (void)f;
	UNSAFE("cuMemAddressReserve");
	void *r = mmap((void *)(uintptr_t)at, n, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (at ? MAP_FIXED_NOREPLACE : 0),
		       -1, 0);
	if (r == MAP_FAILED)
		return OUT_OF_MEMORY;
	*p = (uintptr_t)r;
	count(&live_reserved, 1);
	return OK;
}
CUresult cuMemAddressFree(uint64_t p, size_t n)
{
	UNSAFE("cuMemAddressFree");
	munmap((void *)(uintptr_t)p, n);
	count(&live_reserved, -1);
	return OK;
}
CUresult cuMemCreate(uint64_t *h, size_t n, const void *prop, unsigned long long f)
{
	(void)prop; (void)f;
	UNSAFE("cuMemCreate");
	static uint64_t next = 0x100;
	*h = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED) << 32 | (n >> 20);
	count(&live_handles, 1);
	return OK;
}
CUresult cuMemRelease(uint64_t h)
{
	(void)h;
	UNSAFE("cuMemRelease");
	count(&live_handles, -1);
	return OK;
}
CUresult cuMemMap(uint64_t p, size_t n, size_t o, uint64_t h, unsigned long long f)
{
	(void)o; (void)h; (void)f;
	UNSAFE("cuMemMap");
	if (mprotect((void *)(uintptr_t)p, n, PROT_READ | PROT_WRITE))
		return INVALID_VALUE;
	count(&live_mapped, 1);
	return OK;
}
CUresult cuMemUnmap(uint64_t p, size_t n)
{
	UNSAFE("cuMemUnmap");
	madvise((void *)(uintptr_t)p, n, MADV_DONTNEED);
	mprotect((void *)(uintptr_t)p, n, PROT_NONE);
	count(&live_mapped, -1);
	return OK;
}
CUresult cuMemSetAccess(uint64_t p, size_t n, const void *d, size_t c)
{
	(void)p; (void)n; (void)d; (void)c;
	UNSAFE("cuMemSetAccess");
	return OK;
}

CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void *s)
{
	struct work w = {.type = W_MEMSET, .dst = d, .n = n, .v = v};
	return submit(s, &w, "cuMemsetD8Async");
}
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *src, size_t n, void *s)
{
	struct work w = {.type = W_HTOD, .dst = d, .src = (uintptr_t)src, .n = n};
	return submit(s, &w, "cuMemcpyHtoDAsync");
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n, void *s)
{
	struct work w = {.type = W_DTOH, .dst = (uintptr_t)dst, .src = src, .n = n};
	return submit(s, &w, "cuMemcpyDtoHAsync");
}
CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n)
{
	struct work w = {.type = W_DTOH, .dst = (uintptr_t)dst, .src = src, .n = n};
	return submit(NULL, &w, "cuMemcpyDtoH");
}

/* ---- modules: what the shim's checks ask ------------------------------------------------- */

CUresult cuModuleUnload(void *m)
{
	UNSAFE("cuModuleUnload");
	fake_gpu_unload((uintptr_t)m);
	return OK;
}
CUresult cuLibraryUnload(void *l) { fake_gpu_unload((uintptr_t)l); return OK; }
CUresult cuModuleGetFunctionCount(unsigned *n, void *m) { (void)m; *n = 0; return OK; }
CUresult cuModuleEnumerateFunctions(void **f, unsigned n, void *m) { (void)f; (void)n; (void)m; return OK; }
CUresult cuLibraryGetKernelCount(unsigned *n, void *l) { (void)l; *n = 0; return OK; }
CUresult cuLibraryEnumerateKernels(void **k, unsigned n, void *l) { (void)k; (void)n; (void)l; return OK; }
CUresult cuFuncLoad(void *f) { (void)f; return OK; }

/* ---- the report -------------------------------------------------------------------------- */

__attribute__((destructor)) static void fake_gpu_report(void)
{
	const char *path = getenv("FAKE_REPORT");
	FILE *f = path && *path ? fopen(path, "w") : NULL;
	if (!f)
		return;
	int modules = 0;
	for (int i = 0; i < nimages; i++)
		modules += images[i].live;
	fprintf(f, "launches of original code: %lu\n", launches[IMG_ORIGINAL]);
	fprintf(f, "launches of instrumented code: %lu\n", launches[IMG_INSTRUMENTED]);
	fprintf(f, "launches of compiled cubins: %lu\n", launches[IMG_CUBIN]);
	fprintf(f, "captures invalidated: %lu%s%s\n", invalidations, invalidations ? " by " : "",
		invalidated_by);
	fprintf(f, "unsafe calls from other threads during a global capture: %lu\n", foreign_calls);
	fprintf(f, "live modules: %d\n", modules);
	for (int i = 0; i < nimages; i++)
		if (images[i].live)
			fprintf(f, "live module %#lx: %s\n", (unsigned long)images[i].h,
				img_kind[images[i].kind]);
	fprintf(f, "live streams: %d\n", live_streams);
	fprintf(f, "live graphs: %d, executable: %d\n", live_graphs, live_execs);
	fprintf(f, "live allocations: %d, host: %d, registered: %d\n", live_allocs,
		live_host_allocs, live_registered);
	fprintf(f, "live reservations: %d, handles: %d, mappings: %d\n", live_reserved,
		live_handles, live_mapped);
	fclose(f);
}

/* ---- what the shim asks of functions --------------------------------------------------- */

CUresult cuFuncGetAttribute(int *v, int attr, void *f)
{
	(void)f;
	*v = attr == 0 ? 1024 : attr == 4 ? 32 : 0;   /* max threads per block; registers */
	return OK;
}
CUresult cuFuncSetAttribute(void *f, int attr, int v) { (void)f; (void)attr; (void)v; return OK; }
CUresult cuFuncSetCacheConfig(void *f, int c) { (void)f; (void)c; return OK; }
CUresult cuModuleGetGlobal_v2(uint64_t *d, size_t *n, void *m, const char *name)
{ (void)d; (void)n; (void)m; (void)name; return NOT_FOUND; }
CUresult cuLibraryGetGlobal(uint64_t *d, size_t *n, void *l, const char *name)
{ (void)d; (void)n; (void)l; (void)name; return NOT_FOUND; }
CUresult cuStreamQuery(void *h) { (void)h; return OK; }
