/* A libcuda.so.1 for tests/trace: just enough of the driver API for trace_app.c, with one
 * asynchronous stream per context: a launch is queued and "runs" for its grid's x dimension in
 * hundreds of microseconds on a worker thread, host functions run there in order after it, and
 * cuCtxSynchronize waits for the queue. Types are spelled out (ABI-equal to cuda.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef void (*host_fn)(void *);
#define OK 0
#define INVALID_VALUE 1
#define NOT_FOUND 500

struct item { int kind; unsigned us; host_fn fn; void *user; };   /* kind 0: kernel, 1: host fn */
static struct item queue[4096];
static unsigned head, tail;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER, idle = PTHREAD_COND_INITIALIZER;
static pthread_t worker;
static int started, busy;

static void *run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (head == tail)
			pthread_cond_wait(&cv, &mu);
		struct item it = queue[head % 4096];
		busy = 1;
		pthread_mutex_unlock(&mu);
		if (it.kind == 0) {
			struct timespec ts = {0, (long)it.us * 1000};
			nanosleep(&ts, NULL);
		} else {
			it.fn(it.user);
		}
		pthread_mutex_lock(&mu);
		head++;
		busy = 0;
		pthread_cond_broadcast(&idle);
	}
	return NULL;
}

static CUresult push(struct item it)
{
	pthread_mutex_lock(&mu);
	if (!started) {
		pthread_create(&worker, NULL, run, NULL);
		pthread_detach(worker);
		started = 1;
	}
	queue[tail++ % 4096] = it;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	return OK;
}

CUresult cuInit(unsigned flags) { return flags ? INVALID_VALUE : OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal ? INVALID_VALUE : OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = (void *)0x100; return OK; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return OK; }
CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) { *p = (uintptr_t)malloc(n ? n : 1); return OK; }
CUresult cuMemFree_v2(unsigned long long p) { free((void *)(uintptr_t)p); return OK; }
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return OK; }
CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return OK; }

struct fn { char name[64]; };
static struct fn fns[8];
static int nfns;
CUresult cuModuleLoadData(void **mod, const void *image) { (void)image; *mod = (void *)0x200; return OK; }
CUresult cuModuleGetFunction(void **f, void *mod, const char *name)
{
	(void)mod;
	for (int i = 0; i < nfns; i++)
		if (!strcmp(fns[i].name, name)) {
			*f = &fns[i];
			return OK;
		}
	if (nfns == 8)
		return NOT_FOUND;
	strncpy(fns[nfns].name, name, sizeof(fns[nfns].name) - 1);
	*f = &fns[nfns++];
	return OK;
}
CUresult cuFuncGetName(const char **name, void *f) { *name = ((struct fn *)f)->name; return OK; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			unsigned bz, unsigned smem, void *stream, void **params, void **extra)
{
	(void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)stream, (void)params, (void)extra;
	if (!f)
		return INVALID_VALUE;
	return push((struct item){0, 100 * gx, NULL, NULL});
}
CUresult cuLaunchHostFunc(void *stream, host_fn fn, void *user)
{
	(void)stream;
	return push((struct item){1, 0, fn, user});
}
CUresult cuStreamIsCapturing(void *stream, int *status) { (void)stream; *status = 0; return OK; }
CUresult cuCtxSynchronize(void)
{
	pthread_mutex_lock(&mu);
	while (head != tail || busy)
		pthread_cond_wait(&idle, &mu);
	pthread_mutex_unlock(&mu);
	return OK;
}
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{
	(void)symbol, (void)version, (void)flags;
	*pfn = NULL;
	return NOT_FOUND;
}
