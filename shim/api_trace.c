/* gpuprobe run --trace in the shim (api_trace.h): driver API spans and launch records as JSON
 * lines, one file per process (GPUPROBE_TRACE/api-PID.jsonl, 0600, O_APPEND).
 *
 * Records (times: CLOCK_REALTIME ns, the clock corrected device times are on):
 *   {"type":"trace_process","pid":P,"ppid":Q,"clock":"CLOCK_REALTIME","ts":T,"cmd":"..."}
 *   {"type":"thread","pid":P,"tid":T,"name":"python3"}                 once per thread
 *   {"type":"api","pid":P,"tid":T,"name":"cuMemAlloc_v2","ts":T0,"dur":D,"rc":0}
 *   {"type":"launch","pid":P,"tid":T,"name":"cuLaunchKernel","ts":T0,"dur":D,"rc":0,"id":N,
 *    "kernel":"_Z6vecAddPfS_S_i","grid":[4,1,1],"block":[32,1,1],"smem":0,"stream":"0x0"}
 *   {"type":"kernel_done","pid":P,"id":N,"ts":T}    the stream reached the launch's end
 * A launch's completion comes from a host function queued behind it on its stream
 * (cuLaunchHostFunc, not while the stream is being captured into a graph;
 * GPUPROBE_TRACE_DONE=0: never). Launches are recorded whatever GPUPROBE_TRACE_API says.
 *
 * Each thread appends lines to a buffer of its own and writes it out whole when it fills, when
 * it is 100 ms old, when the thread ends and at exit: the traced call pays a clock read and a
 * formatted line. */
#include "shim/api_trace.h"
#include "shim/forward.h"
#include "shim/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TBUF_BYTES (64 * 1024)
#define TBUF_FLUSH (TBUF_BYTES - 4096)   /* a line is at most 4 KiB (kernel names are cut) */
/* Written out at least this often while the thread records (an application that crashes or is
 * killed loses at most the last 100 ms of each thread's records). */
#define TBUF_AGE_NS 100000000ull

struct tbuf {
	struct tbuf *next;
	int lock;                  /* the owner appends; exit and fork take it too */
	size_t len;
	uint64_t flushed_ns;       /* when it was last written out */
	char data[TBUF_BYTES];
};

static int trace_fd = -1;
static int trace_on;                       /* installed: the file opens at the first record */
static int trace_done = 1;
static struct tbuf *tbufs;                 /* every thread's, for the flush at exit */
static pthread_mutex_t tbufs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t tbuf_key;
static __thread struct tbuf *my_buf;
static __thread long my_tid;
static long my_pid;                        /* getpid() is a system call: kept (after_fork) */
static unsigned long long launch_seq;

uint64_t shim_api_trace_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lock(struct tbuf *b)
{
	while (__atomic_exchange_n(&b->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock(struct tbuf *b) { __atomic_store_n(&b->lock, 0, __ATOMIC_RELEASE); }

static void write_all(const char *p, size_t n)
{
	while (n && trace_fd >= 0) {
		ssize_t w = write(trace_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Whole lines only: a reader of a file cut short by a kill sees complete records. */
static void flush_locked(struct tbuf *b)
{
	write_all(b->data, b->len);
	b->len = 0;
}

static void thread_end(void *p)
{
	struct tbuf *b = p;
	lock(b);
	flush_locked(b);
	unlock(b);
}

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void open_file(void);
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static struct tbuf *my_tbuf(void)
{
	if (my_buf)
		return my_buf;
	struct tbuf *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	pthread_mutex_lock(&tbufs_lock);
	b->next = tbufs;
	tbufs = b;
	pthread_mutex_unlock(&tbufs_lock);
	my_buf = b;
	pthread_setspecific(tbuf_key, b);
	my_tid = syscall(SYS_gettid);
	char path[64], name[64] = "";
	snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", my_tid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
	}
	name[strcspn(name, "\n\"\\")] = 0;
	emit("{\"type\":\"thread\",\"pid\":%ld,\"tid\":%ld,\"name\":\"%s\"}\n", (long)getpid(),
	     my_tid, name);
	return b;
}

static void emit(const char *fmt, ...)
{
	if (__builtin_expect(__atomic_load_n(&trace_fd, __ATOMIC_ACQUIRE) < 0, 0)) {
		/* a forked child opens its own file with its first record (a child that only
		 * execs something else writes none) */
		pthread_mutex_lock(&open_lock);
		if (trace_fd < 0 && trace_on)
			open_file();
		pthread_mutex_unlock(&open_lock);
		if (trace_fd < 0)
			return;
	}
	struct tbuf *b = my_tbuf();
	if (!b)
		return;
	lock(b);
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->data + b->len, TBUF_BYTES - b->len, fmt, ap);
	va_end(ap);
	if (n > 0 && b->len + (size_t)n < TBUF_BYTES)
		b->len += (size_t)n;
	uint64_t now = shim_api_trace_now();
	if (b->len >= TBUF_FLUSH || now - b->flushed_ns > TBUF_AGE_NS) {
		flush_locked(b);
		b->flushed_ns = now;
	}
	unlock(b);
}

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *put_u64(char *p, uint64_t v)
{
	char t[20];
	int n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = t[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* The hot record, formatted by hand (printf's cost was most of a traced call's). */
void shim_api_trace_call(int id, uint64_t t0, int rc)
{
	uint64_t t1 = shim_api_trace_now();
	if (__builtin_expect(__atomic_load_n(&trace_fd, __ATOMIC_ACQUIRE) < 0 || !my_buf, 0)) {
		/* the thread's (or the child's) first record: the general path */
		int saved = errno;
		emit("{\"type\":\"api\",\"pid\":%ld,\"tid\":%ld,\"name\":\"%s\",\"ts\":%llu,"
		     "\"dur\":%llu,\"rc\":%d}\n", my_pid, (long)syscall(SYS_gettid), shim_fn_names[id],
		     (unsigned long long)t0, (unsigned long long)(t1 - t0), rc);
		errno = saved;
		return;
	}
	struct tbuf *b = my_buf;
	lock(b);
	char *p = b->data + b->len;   /* a line is far below the 4 KiB kept free */
	p = put_str(p, "{\"type\":\"api\",\"pid\":");
	p = put_i64(p, my_pid);
	p = put_str(p, ",\"tid\":");
	p = put_i64(p, my_tid);
	p = put_str(p, ",\"name\":\"");
	p = put_str(p, shim_fn_names[id]);
	p = put_str(p, "\",\"ts\":");
	p = put_u64(p, t0);
	p = put_str(p, ",\"dur\":");
	p = put_u64(p, t1 - t0);
	p = put_str(p, ",\"rc\":");
	p = put_i64(p, rc);
	p = put_str(p, "}\n");
	b->len = (size_t)(p - b->data);
	if (b->len >= TBUF_FLUSH || t1 - b->flushed_ns > TBUF_AGE_NS) {
		int saved = errno;
		flush_locked(b);
		b->flushed_ns = t1;
		errno = saved;
	}
	unlock(b);
}

/* ---- launches ---------------------------------------------------------------------------- */

/* The real function behind a slot, whether or not the tracer swapped it. */
static void *real_of(int id)
{
	void *p = shim_trace_real[id];
	return p ? p : __atomic_load_n(&shim_real_fn[id], __ATOMIC_ACQUIRE);
}

/* A kernel name for JSON: the characters a mangled name has; anything else becomes '?'. */
static void json_name(char *dst, size_t len, const char *s)
{
	size_t i = 0;
	for (; s && *s && i + 1 < len; s++)
		dst[i++] = (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20) ? '?' : *s;
	dst[i] = 0;
}

static void kernel_name(CUfunction f, char *out, size_t len)
{
	const struct shim_kernel *k = registry_get(REGISTRY_KERNELS, f);
	const char *name = k ? k->name : NULL;
	if (!name) {
		shim_fnty_cuFuncGetName *get = (shim_fnty_cuFuncGetName *)real_of(SHIM_FN_cuFuncGetName);
		if (!get || get(&name, f))
			name = NULL;
	}
	json_name(out, len, name ? name : "");
}

static void CUDA_CB done(void *user)
{
	emit("{\"type\":\"kernel_done\",\"pid\":%ld,\"id\":%llu,\"ts\":%llu}\n", my_pid,
	     (unsigned long long)(uintptr_t)user, (unsigned long long)shim_api_trace_now());
}

/* After a launch that succeeded: its record, and a host function behind it on its stream. */
static void launched(int id, uint64_t t0, int rc, CUfunction f, const unsigned g[3],
		     const unsigned b[3], unsigned smem, CUstream s, int ptsz)
{
	uint64_t t1 = shim_api_trace_now();
	int saved = errno;
	unsigned long long n = __atomic_add_fetch(&launch_seq, 1, __ATOMIC_RELAXED);
	char name[2048];
	kernel_name(f, name, sizeof(name));
	emit("{\"type\":\"launch\",\"pid\":%ld,\"tid\":%ld,\"name\":\"%s\",\"ts\":%llu,\"dur\":%llu,"
	     "\"rc\":%d,\"id\":%llu,\"kernel\":\"%s\",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],"
	     "\"smem\":%u,\"stream\":\"%p\"}\n", my_pid, my_buf ? my_tid : (long)syscall(SYS_gettid),
	     shim_fn_names[id], (unsigned long long)t0, (unsigned long long)(t1 - t0), rc, n, name,
	     g[0], g[1], g[2], b[0], b[1], b[2], smem, (void *)s);
	if (!rc && trace_done) {
		shim_fnty_cuStreamIsCapturing *cap = (shim_fnty_cuStreamIsCapturing *)real_of(
			ptsz ? SHIM_FN_cuStreamIsCapturing_ptsz : SHIM_FN_cuStreamIsCapturing);
		shim_fnty_cuLaunchHostFunc *host = (shim_fnty_cuLaunchHostFunc *)real_of(
			ptsz ? SHIM_FN_cuLaunchHostFunc_ptsz : SHIM_FN_cuLaunchHostFunc);
		CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
		if (cap && host && !cap(s, &st) && st == CU_STREAM_CAPTURE_STATUS_NONE)
			host(s, done, (void *)(uintptr_t)n);
	}
	errno = saved;
}

#define LAUNCH_PARAMS                                                                      \
	CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,     \
		unsigned bz, unsigned smem, CUstream s, void **params
#define LAUNCH_WRAPPER(name, ptsz, extra_param, extra_arg)                                 \
	static CUresult trace_##name(LAUNCH_PARAMS extra_param)                            \
	{                                                                                  \
		uint64_t t0 = shim_api_trace_now();                                        \
		CUresult rc = ((shim_fnty_##name *)shim_trace_real[SHIM_FN_##name])(       \
			f, gx, gy, gz, bx, by, bz, smem, s, params extra_arg);             \
		launched(SHIM_FN_##name, t0, (int)rc, f, (unsigned[]){gx, gy, gz},         \
			 (unsigned[]){bx, by, bz}, smem, s, ptsz);                          \
		return rc;                                                                 \
	}
#define COMMA ,
LAUNCH_WRAPPER(cuLaunchKernel, 0, COMMA void **extra, COMMA extra)
LAUNCH_WRAPPER(cuLaunchKernel_ptsz, 1, COMMA void **extra, COMMA extra)
LAUNCH_WRAPPER(cuLaunchCooperativeKernel, 0, , )
LAUNCH_WRAPPER(cuLaunchCooperativeKernel_ptsz, 1, , )

#define LAUNCH_EX_WRAPPER(name, ptsz)                                                      \
	static CUresult trace_##name(const CUlaunchConfig *c, CUfunction f, void **params,  \
				     void **extra)                                         \
	{                                                                                  \
		uint64_t t0 = shim_api_trace_now();                                        \
		CUresult rc = ((shim_fnty_##name *)shim_trace_real[SHIM_FN_##name])(       \
			c, f, params, extra);                                              \
		CUlaunchConfig z = {0};                                                    \
		if (!c)                                                                    \
			c = &z;                                                            \
		launched(SHIM_FN_##name, t0, (int)rc, f,                                   \
			 (unsigned[]){c->gridDimX, c->gridDimY, c->gridDimZ},              \
			 (unsigned[]){c->blockDimX, c->blockDimY, c->blockDimZ},           \
			 c->sharedMemBytes, c->hStream, ptsz);                             \
		return rc;                                                                 \
	}
LAUNCH_EX_WRAPPER(cuLaunchKernelEx, 0)
LAUNCH_EX_WRAPPER(cuLaunchKernelEx_ptsz, 1)

static const struct { int id; void *fn; } launch_wrappers[] = {
	{SHIM_FN_cuLaunchKernel, (void *)trace_cuLaunchKernel},
	{SHIM_FN_cuLaunchKernel_ptsz, (void *)trace_cuLaunchKernel_ptsz},
	{SHIM_FN_cuLaunchCooperativeKernel, (void *)trace_cuLaunchCooperativeKernel},
	{SHIM_FN_cuLaunchCooperativeKernel_ptsz, (void *)trace_cuLaunchCooperativeKernel_ptsz},
	{SHIM_FN_cuLaunchKernelEx, (void *)trace_cuLaunchKernelEx},
	{SHIM_FN_cuLaunchKernelEx_ptsz, (void *)trace_cuLaunchKernelEx_ptsz},
};

/* ---- set-up ------------------------------------------------------------------------------ */

/* name matches a glob as written, or without its version suffix (cuMemAlloc: cuMemAlloc_v2). */
static int wanted(const char *globs, const char *name)
{
	char base[128];
	snprintf(base, sizeof(base), "%s", name);
	for (;;) {
		char *u = strrchr(base, '_');
		if (!u || (strncmp(u, "_v", 2) && strcmp(u, "_ptsz") && strcmp(u, "_ptds")))
			break;
		*u = 0;
	}
	const char *p = globs;
	while (*p) {
		size_t n = strcspn(p, ",");
		char g[256];
		snprintf(g, sizeof(g), "%.*s", (int)(n < sizeof(g) - 1 ? n : sizeof(g) - 1), p);
		if (*g && (!fnmatch(g, name, 0) || !fnmatch(g, base, 0)))
			return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

static void flush_all(void)
{
	pthread_mutex_lock(&tbufs_lock);
	for (struct tbuf *b = tbufs; b; b = b->next) {
		lock(b);
		flush_locked(b);
		unlock(b);
	}
	pthread_mutex_unlock(&tbufs_lock);
}

/* A forked child has copies of the parent's buffers (already the parent's to write) and writes
 * a file of its own. */
static void open_file(void);
static void after_fork(void)
{
	for (struct tbuf *b = tbufs; b; b = b->next) {
		b->len = 0;
		b->lock = 0;
	}
	pthread_mutex_init(&tbufs_lock, NULL);
	pthread_mutex_init(&open_lock, NULL);
	if (trace_fd >= 0)
		close(trace_fd);
	trace_fd = -1;   /* opened again at the child's first record */
	my_buf = NULL;   /* this thread's name and tid are the child's */
	my_pid = (long)getpid();
}

static void open_file(void)
{
	const char *dir = secure_getenv(GP_ENV_TRACE);
	if (!dir || *dir != '/')
		return;
	char path[4096];
	snprintf(path, sizeof(path), "%s/api-%ld.jsonl", dir, (long)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	char cmd[512] = "";
	int cfd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		ssize_t n = read(cfd, cmd, sizeof(cmd) - 1);
		close(cfd);
		for (ssize_t i = 0; i < n; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		cmd[n > 0 ? n : 0] = 0;
		json_name(cmd, sizeof(cmd), cmd);
		size_t l = strlen(cmd);
		while (l && cmd[l - 1] == ' ')
			cmd[--l] = 0;
	}
	char line[1024];
	int n = snprintf(line, sizeof(line), "{\"type\":\"trace_process\",\"pid\":%ld,\"ppid\":%ld,"
			 "\"clock\":\"CLOCK_REALTIME\",\"ts\":%llu,\"cmd\":\"%s\"}\n", (long)getpid(),
			 (long)getppid(), (unsigned long long)shim_api_trace_now(), cmd);
	for (const char *p = line; n > 0;) {   /* first in the file, before any thread's records */
		ssize_t w = write(fd, p, (size_t)n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		n -= (int)w;
	}
	__atomic_store_n(&trace_fd, fd, __ATOMIC_RELEASE);
}

void shim_api_trace_install(void)
{
	const char *dir = secure_getenv(GP_ENV_TRACE);
	if (!dir || !*dir)
		return;
	const char *globs = secure_getenv(GP_ENV_TRACE_API);
	if (!globs || !*globs)
		globs = "*";
	const char *d = secure_getenv(GP_ENV_TRACE_DONE);
	trace_done = !(d && !strcmp(d, "0"));
	if (pthread_key_create(&tbuf_key, thread_end))
		return;
	open_file();
	if (trace_fd < 0)
		return;
	my_pid = (long)getpid();
	trace_on = 1;
	atexit(flush_all);
	pthread_atfork(NULL, NULL, after_fork);
	for (int i = 0; i < SHIM_FN_COUNT; i++) {
		void *real = __atomic_load_n(&shim_real_fn[i], __ATOMIC_ACQUIRE);
		void *w = NULL;
		/* launches always: the kernels' spans and flows start from them */
		for (size_t k = 0; k < sizeof(launch_wrappers) / sizeof(launch_wrappers[0]); k++)
			if (launch_wrappers[k].id == i)
				w = launch_wrappers[k].fn;
		if (!w && wanted(globs, shim_fn_names[i]))
			w = shim_trace_fns[i];
		if (!real || !w)
			continue;
		shim_trace_real[i] = real;
		__atomic_store_n(&shim_real_fn[i], w, __ATOMIC_RELEASE);
	}
}
