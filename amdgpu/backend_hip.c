/* The HIP backend (spirv/backend.h) over libamdhip64, dlopened so that whatever links it (the
 * shim) runs where HIP is absent.
 *
 * Device: HIP device 0; its architecture (gfx90a, ...) from the HSA runtime's agent name
 * (libhsa-runtime64, HSA_AGENT_INFO_NAME), or GPUPROBE_HIP_ARCH. Programs: the module's IR lowered
 * by amdgpu/ to a code object of that architecture, in the code-object version the runtime takes
 * (v5 from HIP 6, v4 before; GPUPROBE_HIP_COV overrides), loaded by hipModuleLoadData. LLVM
 * runs in this process when amdgpu/ is linked in (amdgpu_lower_code_object is a weak reference);
 * else (the shim) `gpuprobe ptx amdgpu` does it in a child process: GPUPROBE_AMDGPU_LOWER names
 * that gpuprobe, by default ../bin/gpuprobe beside the library holding this code.
 *
 * Memory: hipMalloc (device) and hipHostMalloc(mapped) (host), used at the same address on the
 * device and the host (HIP's unified addressing on Linux); copies hipMemcpyAsync(Default), fills
 * hipMemsetD{8,16,32}Async, queues streams, events HIP events (times from one recorded at open). */
#include "common/env.h"
#include "amdgpu/backend_hip.h"
#include "amdgpu/amdgpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* In-process lowering where amdgpu/ (LLVM) is linked; NULL in the shim. */
int amdgpu_lower_code_object(const ir_module *m, const struct amdgpu_options *opts, void **co, size_t *len,
			     char *err, size_t errlen) __attribute__((weak));

typedef int hipError_t;
typedef void *hipStream_t, *hipEvent_t, *hipModule_t, *hipFunction_t;
enum { hipSuccess = 0, hipErrorNotReady = 600, hipMemcpyDefault = 4, hipHostMallocMapped = 2 };

static struct hip {
	void *lib;
	hipError_t (*Init)(unsigned);
	hipError_t (*GetDeviceCount)(int *);
	hipError_t (*SetDevice)(int);
	hipError_t (*DeviceGetName)(char *, int, int);
	hipError_t (*RuntimeGetVersion)(int *);
	hipError_t (*MemGetInfo)(size_t *, size_t *);
	const char *(*GetErrorString)(hipError_t);
	hipError_t (*Malloc)(void **, size_t);
	hipError_t (*Free)(void *);
	hipError_t (*HostMalloc)(void **, size_t, unsigned);
	hipError_t (*HostFree)(void *);
	hipError_t (*MemcpyAsync)(void *, const void *, size_t, int, hipStream_t);
	hipError_t (*MemsetD8Async)(void *, unsigned char, size_t, hipStream_t);
	hipError_t (*MemsetD16Async)(void *, unsigned short, size_t, hipStream_t);
	hipError_t (*MemsetD32Async)(void *, int, size_t, hipStream_t);
	hipError_t (*StreamCreate)(hipStream_t *);
	hipError_t (*StreamDestroy)(hipStream_t);
	hipError_t (*StreamSynchronize)(hipStream_t);
	hipError_t (*StreamWaitEvent)(hipStream_t, hipEvent_t, unsigned);
	hipError_t (*EventCreate)(hipEvent_t *);
	hipError_t (*EventRecord)(hipEvent_t, hipStream_t);
	hipError_t (*EventQuery)(hipEvent_t);
	hipError_t (*EventSynchronize)(hipEvent_t);
	hipError_t (*EventElapsedTime)(float *, hipEvent_t, hipEvent_t);
	hipError_t (*EventDestroy)(hipEvent_t);
	hipError_t (*ModuleLoadData)(hipModule_t *, const void *);
	hipError_t (*ModuleUnload)(hipModule_t);
	hipError_t (*ModuleGetFunction)(hipFunction_t *, hipModule_t, const char *);
	hipError_t (*ModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
					 unsigned, hipStream_t, void **, void **);
} H;

struct gp_bk {
	char arch[32];
	unsigned cov;
	hipEvent_t base;      /* times are measured from it */
	struct gp_bk_info info;
	pthread_mutex_t lock;
	struct { uint64_t addr; int host; } *allocs;
	size_t nallocs, capallocs;
};
struct gp_bk_queue { hipStream_t s; };
struct gp_bk_event { hipEvent_t e; };
struct gp_bk_prog { hipModule_t mod; unsigned dyn_shared; };
struct gp_bk_kernel { hipFunction_t f; struct gp_bk_prog *p; char name[256]; };

static int hip_fail(hipError_t e, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s failed: %s (hipError %d)", what, H.GetErrorString ? H.GetErrorString(e) : "?", e);
	return e == 2 ? -ENOMEM : -EIO;   /* hipErrorOutOfMemory is 2, as CUDA's */
}

static int load_hip(char *err, size_t errlen)
{
	if (H.lib)
		return 0;
	const char *path = gp_env_str(GP_VAR_HIP_LIB);
	void *lib = dlopen(path ? path : "libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib && !path)
		lib = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);
	if (!lib && !path)
		lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return snprintf(err, errlen, "no HIP runtime (%s cannot be opened: install ROCm's or Debian's "
				"libamdhip64, or set GPUPROBE_HIP_LIB)", path && *path ? path : "libamdhip64.so"), -ENODEV;
	struct { void **p; const char *s; } syms[] = {
		{(void **)&H.Init, "hipInit"}, {(void **)&H.GetDeviceCount, "hipGetDeviceCount"},
		{(void **)&H.SetDevice, "hipSetDevice"}, {(void **)&H.DeviceGetName, "hipDeviceGetName"},
		{(void **)&H.RuntimeGetVersion, "hipRuntimeGetVersion"}, {(void **)&H.MemGetInfo, "hipMemGetInfo"},
		{(void **)&H.GetErrorString, "hipGetErrorString"}, {(void **)&H.Malloc, "hipMalloc"},
		{(void **)&H.Free, "hipFree"}, {(void **)&H.HostMalloc, "hipHostMalloc"}, {(void **)&H.HostFree, "hipHostFree"},
		{(void **)&H.MemcpyAsync, "hipMemcpyAsync"}, {(void **)&H.MemsetD8Async, "hipMemsetD8Async"},
		{(void **)&H.MemsetD16Async, "hipMemsetD16Async"}, {(void **)&H.MemsetD32Async, "hipMemsetD32Async"},
		{(void **)&H.StreamCreate, "hipStreamCreate"}, {(void **)&H.StreamDestroy, "hipStreamDestroy"},
		{(void **)&H.StreamSynchronize, "hipStreamSynchronize"}, {(void **)&H.StreamWaitEvent, "hipStreamWaitEvent"},
		{(void **)&H.EventCreate, "hipEventCreate"}, {(void **)&H.EventRecord, "hipEventRecord"},
		{(void **)&H.EventQuery, "hipEventQuery"}, {(void **)&H.EventSynchronize, "hipEventSynchronize"},
		{(void **)&H.EventElapsedTime, "hipEventElapsedTime"}, {(void **)&H.EventDestroy, "hipEventDestroy"},
		{(void **)&H.ModuleLoadData, "hipModuleLoadData"}, {(void **)&H.ModuleUnload, "hipModuleUnload"},
		{(void **)&H.ModuleGetFunction, "hipModuleGetFunction"},
		{(void **)&H.ModuleLaunchKernel, "hipModuleLaunchKernel"},
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].p = dlsym(lib, syms[i].s))) {
			snprintf(err, errlen, "the HIP runtime lacks %s", syms[i].s);
			dlclose(lib);
			memset(&H, 0, sizeof(H));
			return -ENODEV;
		}
	H.lib = lib;
	return 0;
}

/* The first GPU agent's name (gfx90a, ...) through the HSA runtime's C API (HSA_AGENT_INFO_NAME
 * is 0, HSA_AGENT_INFO_DEVICE 17, HSA_DEVICE_TYPE_GPU 1); 0 on success. */
typedef struct { uint64_t handle; } hsa_agent;
struct hsa_visit_ctx {
	int (*get_info)(hsa_agent, int, void *);
	char name[64];
};

static int hsa_visit(hsa_agent a, void *arg)
{
	struct hsa_visit_ctx *c = arg;
	uint32_t dev = 99;
	if (!c->name[0] && c->get_info(a, 17, &dev) == 0 && dev == 1)
		c->get_info(a, 0, c->name);
	return 0;
}

static int hsa_arch(char *out, size_t n)
{
	void *lib = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return -1;
	int (*init)(void) = (int (*)(void))dlsym(lib, "hsa_init");
	int (*iterate)(int (*)(hsa_agent, void *), void *) =
		(int (*)(int (*)(hsa_agent, void *), void *))dlsym(lib, "hsa_iterate_agents");
	struct hsa_visit_ctx c = {(int (*)(hsa_agent, int, void *))dlsym(lib, "hsa_agent_get_info"), ""};
	if (!init || !iterate || !c.get_info || init() != 0)
		return -1;
	iterate(hsa_visit, &c);
	if (!c.name[0])
		return -1;
	snprintf(out, n, "%s", c.name);
	return 0;   /* the library stays open: the HIP runtime uses it too */
}

static int open_hip(gp_bk **out, char *err, size_t errlen)
{
	int r = load_hip(err, errlen);
	if (r < 0)
		return r;
	hipError_t e;
	int count = 0;
	if ((e = H.Init(0)) || (e = H.GetDeviceCount(&count)))
		return hip_fail(e, "hipInit", err, errlen), -ENODEV;
	if (!count)
		return snprintf(err, errlen, "HIP finds no AMD GPU"), -ENODEV;
	if ((e = H.SetDevice(0)))
		return hip_fail(e, "hipSetDevice", err, errlen);
	gp_bk *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	const char *arch = gp_env_str(GP_VAR_HIP_ARCH);
	if (arch)
		snprintf(b->arch, sizeof(b->arch), "%s", arch);
	else if (hsa_arch(b->arch, sizeof(b->arch)) < 0)
		snprintf(b->arch, sizeof(b->arch), "gfx90a");
	char *colon = strchr(b->arch, ':');   /* "gfx90a:sramecc+:xnack-": the processor alone */
	if (colon)
		*colon = 0;
	if (strcmp(b->arch, "gfx90a") && strcmp(b->arch, "gfx942") && strcmp(b->arch, "gfx1100")) {
		snprintf(err, errlen, "the AMD GPU is a %s: gpuprobe lowers for gfx90a, gfx942 and gfx1100 "
			 "(GPUPROBE_HIP_ARCH picks one)", b->arch);
		free(b);
		return -ENOTSUP;
	}
	int ver = 0;
	H.RuntimeGetVersion(&ver);
	int cov = gp_env_choice(GP_VAR_HIP_COV);   /* auto|4|5|6 */
	b->cov = cov > 0 ? (unsigned)cov + 3 : ver >= 60000000 ? 5 : 4;
	struct gp_bk_info *in = &b->info;
	if (H.DeviceGetName(in->name, sizeof(in->name), 0))
		snprintf(in->name, sizeof(in->name), "AMD GPU");
	snprintf(in->vendor, sizeof(in->vendor), "AMD");
	snprintf(in->backend, sizeof(in->backend), "hip");
	snprintf(in->route, sizeof(in->route), "LLVM 19 %s code object v%u", b->arch, b->cov);
	size_t fr = 0, total = 0;
	H.MemGetInfo(&fr, &total);
	in->global_mem = total;
	in->local_mem = 64 * 1024;
	in->max_wg_size = 1024;
	in->max_wg_dims[0] = in->max_wg_dims[1] = in->max_wg_dims[2] = 1024;
	in->fine_grain = 1;
	if ((e = H.EventCreate(&b->base)) || (e = H.EventRecord(b->base, NULL)) || (e = H.EventSynchronize(b->base))) {
		free(b);
		return hip_fail(e, "recording the base event", err, errlen);
	}
	*out = b;
	return 0;
}

static void close_hip(gp_bk *b)
{
	if (!b)
		return;
	H.EventDestroy(b->base);
	free(b->allocs);
	free(b);
}

static void info_hip(gp_bk *b, struct gp_bk_info *out) { *out = b->info; }

static int mem_alloc(gp_bk *b, size_t size, enum gp_bk_mem kind, uint64_t *addr, char *err, size_t errlen)
{
	void *p = NULL;
	hipError_t e = kind == GP_BK_MEM_HOST ? H.HostMalloc(&p, size ? size : 1, hipHostMallocMapped) : H.Malloc(&p, size ? size : 1);
	if (e)
		return hip_fail(e, kind == GP_BK_MEM_HOST ? "hipHostMalloc" : "hipMalloc", err, errlen);
	pthread_mutex_lock(&b->lock);
	if (b->nallocs == b->capallocs) {
		b->capallocs = b->capallocs ? b->capallocs * 2 : 64;
		void *n = realloc(b->allocs, b->capallocs * sizeof(*b->allocs));
		if (!n)
			abort();
		b->allocs = n;
	}
	b->allocs[b->nallocs].addr = (uint64_t)(uintptr_t)p;
	b->allocs[b->nallocs++].host = kind == GP_BK_MEM_HOST;
	pthread_mutex_unlock(&b->lock);
	*addr = (uint64_t)(uintptr_t)p;
	return 0;
}

static void mem_free(gp_bk *b, uint64_t addr)
{
	int host = -1;
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->nallocs; i++)
		if (b->allocs[i].addr == addr) {
			host = b->allocs[i].host;
			b->allocs[i] = b->allocs[--b->nallocs];
			break;
		}
	pthread_mutex_unlock(&b->lock);
	if (host == 1)
		H.HostFree((void *)(uintptr_t)addr);
	else if (host == 0)
		H.Free((void *)(uintptr_t)addr);
}

static int queue_create(gp_bk *b, gp_bk_queue **q, char *err, size_t errlen)
{
	gp_bk_queue *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	hipError_t e = H.StreamCreate(&n->s);
	if (e) {
		free(n);
		return hip_fail(e, "hipStreamCreate", err, errlen);
	}
	*q = n;
	return 0;
}

static void queue_destroy(gp_bk *b, gp_bk_queue *q)
{
	if (q) {
		H.StreamDestroy(q->s);
		free(q);
	}
}

static int queue_finish(gp_bk *b, gp_bk_queue *q, char *err, size_t errlen)
{
	hipError_t e = H.StreamSynchronize(q->s);
	return e ? hip_fail(e, "hipStreamSynchronize", err, errlen) : 0;
}

static int copy(gp_bk *b, gp_bk_queue *q, uint64_t dst, uint64_t src, size_t n, int blocking, char *err, size_t errlen)
{
	hipError_t e = H.MemcpyAsync((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, hipMemcpyDefault, q->s);
	if (!e && blocking)
		e = H.StreamSynchronize(q->s);
	return e ? hip_fail(e, "hipMemcpyAsync", err, errlen) : 0;
}

static int fill(gp_bk *b, gp_bk_queue *q, uint64_t dst, const void *pattern, size_t psize, size_t n, char *err,
		size_t errlen)
{
	void *d = (void *)(uintptr_t)dst;
	hipError_t e;
	if (psize == 1) {
		e = H.MemsetD8Async(d, *(const unsigned char *)pattern, n, q->s);
	} else if (psize == 2) {
		unsigned short v;
		memcpy(&v, pattern, 2);
		e = H.MemsetD16Async(d, v, n / 2, q->s);
	} else if (psize == 4) {
		int v;
		memcpy(&v, pattern, 4);
		e = H.MemsetD32Async(d, v, n / 4, q->s);
	} else {
		return snprintf(err, errlen, "fill: a %zu-byte pattern (1, 2 or 4)", psize), -EINVAL;
	}
	return e ? hip_fail(e, "hipMemsetAsync", err, errlen) : 0;
}

static int event_record(gp_bk *b, gp_bk_queue *q, gp_bk_event **ev, char *err, size_t errlen)
{
	gp_bk_event *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	hipError_t e = H.EventCreate(&n->e);
	if (!e)
		e = H.EventRecord(n->e, q->s);
	if (e) {
		if (n->e)
			H.EventDestroy(n->e);
		free(n);
		return hip_fail(e, "hipEventRecord", err, errlen);
	}
	*ev = n;
	return 0;
}

static int event_query(gp_bk *b, gp_bk_event *ev)
{
	hipError_t e = H.EventQuery(ev->e);
	return e == hipSuccess ? 1 : e == hipErrorNotReady ? 0 : -EIO;
}

static int event_wait(gp_bk *b, gp_bk_event *ev, char *err, size_t errlen)
{
	hipError_t e = H.EventSynchronize(ev->e);
	return e ? hip_fail(e, "hipEventSynchronize", err, errlen) : 0;
}

static int event_time(gp_bk *b, gp_bk_event *ev, uint64_t *ns)
{
	float ms = 0;
	if (H.EventElapsedTime(&ms, b->base, ev->e))
		return -EIO;
	*ns = (uint64_t)((double)ms * 1e6);
	return 0;
}

static int queue_wait(gp_bk *b, gp_bk_queue *q, gp_bk_event *ev, char *err, size_t errlen)
{
	hipError_t e = H.StreamWaitEvent(q->s, ev->e, 0);
	return e ? hip_fail(e, "hipStreamWaitEvent", err, errlen) : 0;
}

static void event_release(gp_bk *b, gp_bk_event *ev)
{
	if (ev) {
		H.EventDestroy(ev->e);
		free(ev);
	}
}

/* The gpuprobe that lowers in a child process: GPUPROBE_AMDGPU_LOWER, else ../bin/gpuprobe beside
 * the library (or program) holding this code. */
static int lower_program(void)
{
	return 0;
}

/* The child's "gpuprobe: FILE: kernel K left out: WHY" lines, each told to skipped. */
static void child_skipped(const char *log, void (*skipped)(void *, const char *, const char *), void *arg)
{
	FILE *lf = skipped ? fopen(log, "r") : NULL;
	char line[1024];
	while (lf && fgets(line, sizeof(line), lf)) {
		line[strcspn(line, "\n")] = 0;
		char *k = strstr(line, ": kernel ");
		char *w = k ? strstr(k, " left out: ") : NULL;
		if (!w)
			continue;
		*w = 0;
		skipped(arg, k + 9, w + 11);
	}
	if (lf)
		fclose(lf);
}

static int child_lower(gp_bk *b, const ir_module *m, void (*skipped)(void *, const char *, const char *),
		       void *skipped_arg, void **co, size_t *len, char *err, size_t errlen)
{
	char bin[4096] = "";
	const char *env = gp_env_str(GP_VAR_AMDGPU_LOWER);
	if (env) {
		snprintf(bin, sizeof(bin), "%s", env);
	} else {
		Dl_info di;
		if (dladdr((void *)lower_program, &di) && di.dli_fname) {
			snprintf(bin, sizeof(bin), "%s", di.dli_fname);
			char *slash = strrchr(bin, '/');
			if (slash) {
				*slash = 0;
				size_t l = strlen(bin);
				snprintf(bin + l, sizeof(bin) - l, "/../bin/gpuprobe");
			}
		}
	}
	if (!bin[0] || access(bin, X_OK))
		return snprintf(err, errlen, "no gpuprobe with amdgpu/ to lower the module (%s; set GPUPROBE_AMDGPU_LOWER)",
				bin[0] ? bin : "none found"), -ENOENT;
	size_t plen;
	char *ptx = ptx_print_canonical(m, &plen);
	if (!ptx)
		return -ENOMEM;
	char dir[] = "/tmp/gpuprobe-hip-XXXXXX";
	if (!mkdtemp(dir)) {
		free(ptx);
		return snprintf(err, errlen, "mkdtemp: %s", strerror(errno)), -EIO;
	}
	char in[64], out[64], log[64], cov[4];
	snprintf(in, sizeof(in), "%s/m.ptx", dir);
	snprintf(out, sizeof(out), "%s/m.co", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(cov, sizeof(cov), "%u", b->cov);
	FILE *f = fopen(in, "wb");
	int bad = !f || fwrite(ptx, 1, plen, f) != plen;
	bad |= f ? fclose(f) : 0;
	free(ptx);
	int r = 0;
	if (bad) {
		r = -EIO;
		snprintf(err, errlen, "cannot write %s", in);
	} else {
		char *argv[] = {bin, "ptx", "amdgpu", "--arch", b->arch, "--cov", cov, "-o", out, in, NULL};
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		pid_t pid;
		int st = 0;
		if (posix_spawn(&pid, bin, &fa, NULL, argv, environ) || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			char msg[512] = "";
			FILE *lf = fopen(log, "r");
			if (lf) {
				if (!fgets(msg, sizeof(msg), lf))
					msg[0] = 0;
				fclose(lf);
			}
			msg[strcspn(msg, "\n")] = 0;
			const char *tail = strstr(msg, "m.ptx:");   /* "gpuprobe: /tmp/.../m.ptx:LINE: ..." */
			snprintf(err, errlen, "%s", tail ? tail + 6 : msg[0] ? msg : "gpuprobe ptx amdgpu failed");
			r = -EINVAL;
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	if (!r) {
		child_skipped(log, skipped, skipped_arg);
		FILE *cf = fopen(out, "rb");
		long n = -1;
		if (cf && fseek(cf, 0, SEEK_END) == 0)
			n = ftell(cf);
		void *p = n > 0 ? malloc((size_t)n) : NULL;
		if (!cf || !p || fseek(cf, 0, SEEK_SET) || fread(p, 1, (size_t)n, cf) != (size_t)n) {
			free(p);
			r = -EIO;
			snprintf(err, errlen, "cannot read %s", out);
		} else {
			*co = p;
			*len = (size_t)n;
		}
		if (cf)
			fclose(cf);
	}
	unlink(in);
	unlink(out);
	unlink(log);
	rmdir(dir);
	return r;
}

#ifdef GPUPROBE_BK_BUILD_STRUCT
static int program_build(gp_bk *b, const ir_module *m, const struct gp_bk_build *bo, gp_bk_prog **p, char *err,
			 size_t errlen)
{
	unsigned dyn_shared = bo ? bo->dyn_shared : 0;
#else
static int program_build(gp_bk *b, const ir_module *m, unsigned dyn_shared, gp_bk_prog **p, char *err, size_t errlen)
{
#endif
	void *co = NULL;
	size_t len = 0;
	int r;
	/* a kernel left out is told by name, as spirv/'s backends tell it */
	void (*skipped)(void *, const char *, const char *) = NULL;
	void *skipped_arg = NULL;
#ifdef GPUPROBE_BK_BUILD_STRUCT
	if (bo) {
		skipped = bo->skipped;
		skipped_arg = bo->skipped_arg;
	}
#endif
	if (amdgpu_lower_code_object) {
		struct amdgpu_options o = {.target = AMDGPU_TARGET_AMDGCN, .arch = b->arch, .cov = b->cov,
					   .skipped = skipped, .skipped_arg = skipped_arg};
		r = amdgpu_lower_code_object(m, &o, &co, &len, err, errlen);
	} else {
		r = child_lower(b, m, skipped, skipped_arg, &co, &len, err, errlen);
	}
	if (r < 0)
		return r;
	gp_bk_prog *n = calloc(1, sizeof(*n));
	if (!n) {
		free(co);
		return -ENOMEM;
	}
	hipError_t e = H.ModuleLoadData(&n->mod, co);
	free(co);   /* HIP copies the code object */
	if (e) {
		free(n);
		return hip_fail(e, "hipModuleLoadData", err, errlen);
	}
	n->dyn_shared = dyn_shared;
	*p = n;
	return 0;
}

static void program_release(gp_bk *b, gp_bk_prog *p)
{
	if (p) {
		H.ModuleUnload(p->mod);
		free(p);
	}
}

static int kernel_create(gp_bk *b, gp_bk_prog *p, const char *name, gp_bk_kernel **k, char *err, size_t errlen)
{
	gp_bk_kernel *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	hipError_t e = H.ModuleGetFunction(&n->f, p->mod, name);
	if (e) {
		free(n);
		snprintf(err, errlen, "no kernel %s in the code object (hipError %d)", name, e);
		return -ENOENT;
	}
	n->p = p;
	snprintf(n->name, sizeof(n->name), "%s", name);
	*k = n;
	return 0;
}

static void kernel_release(gp_bk *b, gp_bk_kernel *k) { free(k); }

static int launch(gp_bk *b, gp_bk_queue *q, gp_bk_kernel *k, const unsigned grid[3], const unsigned block[3],
		  const struct gp_bk_arg *args, unsigned nargs, char *err, size_t errlen)
{
	void *params[256];
	if (nargs > 256)
		return snprintf(err, errlen, "%u kernel arguments (at most 256)", nargs), -E2BIG;
	for (unsigned i = 0; i < nargs; i++)
		params[i] = (void *)args[i].data;
	hipError_t e = H.ModuleLaunchKernel(k->f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
					    k->p->dyn_shared, q->s, params, NULL);
	return e ? hip_fail(e, "hipModuleLaunchKernel", err, errlen) : 0;
}

const struct gp_bk_ops gp_bk_hip = {
	.name = "hip",
	.open = open_hip,
	.close = close_hip,
	.info = info_hip,
	.mem_alloc = mem_alloc,
	.mem_free = mem_free,
	.queue_create = queue_create,
	.queue_destroy = queue_destroy,
	.queue_finish = queue_finish,
	.copy = copy,
	.fill = fill,
	.event_record = event_record,
	.event_query = event_query,
	.event_wait = event_wait,
	.event_time = event_time,
	.queue_wait = queue_wait,
	.event_release = event_release,
	.program_build = program_build,
	.program_release = program_release,
	.kernel_create = kernel_create,
	.kernel_release = kernel_release,
	.launch = launch,
};
