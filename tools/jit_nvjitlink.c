/* build/lib/libnvJitLink.so.13: nvJitLink, with the PTX of what it links recorded (issue 16).
 *
 * As jit_nvrtc.c: found through LD_LIBRARY_PATH under `gpuprobe run`, every export forwarded to
 * the real libnvJitLink.so.13 (GPUPROBE_REAL_NVJITLINK, else LD_LIBRARY_PATH, else
 * /usr/local/cuda/lib64 ...). A link handle's options and PTX inputs are kept; when its link
 * completes with exactly one input and that input was PTX, the linked cubin's SHA-256 keys a
 * record of that PTX with the link's options (-arch, -O, -lineinfo, -g, -maxrregcount). A link
 * with -lto (LTO-IR from nvcc -dlto or NVRTC -dlto, PTX beside it) has no one PTX input: its
 * inputs are kept, and after it completes they are linked once more with -ptx added, which makes
 * nvJitLink write the PTX of the whole linked program; that PTX is recorded for the cubin. Other
 * links of several inputs (PTX with cubins or fatbins) record nothing: the shim instruments one
 * PTX module per cubin. Both the plain names (nvJitLinkCreate) and the versioned ones the
 * header's inline functions call (__nvJitLinkCreate_13_0) are interposed. */
#include "tools/jit_forward.h"
#include "shim/jit_capture.h"

#define NVJITLINK_NO_INLINE   /* the plain names are ours to define */
#include <nvJitLink.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#define NVJITLINK_FORWARDED(X)                                                              \
	X(__nvJitLinkAPI) X(__nvJitLinkGetErrorLogSize_13_0) X(__nvJitLinkGetErrorLog_13_0)   \
	X(__nvJitLinkGetInfoLogSize_13_0) X(__nvJitLinkGetInfoLog_13_0)                       \
	X(__nvJitLinkGetLinkedCubinSize_13_0) X(__nvJitLinkGetLinkedCubin_13_0)               \
	X(__nvJitLinkGetLinkedPtxSize_13_0) X(__nvJitLinkGetLinkedPtx_13_0)                   \
	X(nvJitLinkGetErrorLog) X(nvJitLinkGetErrorLogSize) X(nvJitLinkGetInfoLog)            \
	X(nvJitLinkGetInfoLogSize) X(nvJitLinkGetLinkedCubin) X(nvJitLinkGetLinkedCubinSize)  \
	X(nvJitLinkGetLinkedPtx) X(nvJitLinkGetLinkedPtxSize) X(nvJitLinkVersion)

NVJITLINK_FORWARDED(JIT_TRAMPOLINE)

typedef nvJitLinkResult (*create_fn)(nvJitLinkHandle *, uint32_t, const char *const *);
typedef nvJitLinkResult (*destroy_fn)(nvJitLinkHandle *);
typedef nvJitLinkResult (*add_data_fn)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t,
				       const char *);
typedef nvJitLinkResult (*add_file_fn)(nvJitLinkHandle, nvJitLinkInputType, const char *);
typedef nvJitLinkResult (*complete_fn)(nvJitLinkHandle);
typedef nvJitLinkResult (*size_fn)(nvJitLinkHandle, size_t *);
typedef nvJitLinkResult (*get_fn)(nvJitLinkHandle, void *);

static struct {
	create_fn create, create13;
	destroy_fn destroy, destroy13;
	add_data_fn add_data, add_data13;
	add_file_fn add_file, add_file13;
	complete_fn complete, complete13;
} rl;
static void *real;
static char real_path[PATH_MAX];

static int fallback(void)
{
	return NVJITLINK_ERROR_INTERNAL;
}

__attribute__((constructor)) static void nvjitlink_init(void)
{
	real = jit_open_real("libnvJitLink.so.13", GP_VAR_REAL_NVJITLINK, (void *)nvjitlink_init,
			     real_path, sizeof(real_path));
#define RESOLVE(name)                                                                       \
	jit_real_##name = real ? dlsym(real, #name) : NULL;                                 \
	if (!jit_real_##name)                                                               \
		jit_real_##name = (void *)fallback;
	NVJITLINK_FORWARDED(RESOLVE)
#undef RESOLVE
	if (!real)
		return;
	rl.create = (create_fn)dlsym(real, "nvJitLinkCreate");
	rl.create13 = (create_fn)dlsym(real, "__nvJitLinkCreate_13_0");
	rl.destroy = (destroy_fn)dlsym(real, "nvJitLinkDestroy");
	rl.destroy13 = (destroy_fn)dlsym(real, "__nvJitLinkDestroy_13_0");
	rl.add_data = (add_data_fn)dlsym(real, "nvJitLinkAddData");
	rl.add_data13 = (add_data_fn)dlsym(real, "__nvJitLinkAddData_13_0");
	rl.add_file = (add_file_fn)dlsym(real, "nvJitLinkAddFile");
	rl.add_file13 = (add_file_fn)dlsym(real, "__nvJitLinkAddFile_13_0");
	rl.complete = (complete_fn)dlsym(real, "nvJitLinkComplete");
	rl.complete13 = (complete_fn)dlsym(real, "__nvJitLinkComplete_13_0");
}

/* An input of a -lto link, kept to link it again with -ptx. */
struct input {
	nvJitLinkInputType type;
	void *data;        /* a copy; NULL when it came as a file */
	size_t size;
	char *path;        /* the file's path; NULL when it came as data */
	char *name;
};

/* What a handle was given: its options, its inputs (the one PTX, when only PTX came; every input
 * of a -lto link). */
struct link {
	nvJitLinkHandle h;
	struct jit_record r;
	unsigned inputs;
	char **opts;       /* the options, copied, for the -ptx link */
	uint32_t nopts;
	int lto, ptx_out;  /* -lto given; -ptx given (the link makes PTX itself: nothing to record) */
	struct input *in;
	unsigned nin;
	int in_lost;       /* an input could not be kept: no -ptx link */
	struct link *next;
};

static void link_free(struct link *l)
{
	jit_record_free(&l->r);
	for (uint32_t i = 0; i < l->nopts; i++)
		free(l->opts[i]);
	free(l->opts);
	for (unsigned i = 0; i < l->nin; i++) {
		free(l->in[i].data);
		free(l->in[i].path);
		free(l->in[i].name);
	}
	free(l->in);
	free(l);
}
static struct link *links;
static pthread_mutex_t links_lock = PTHREAD_MUTEX_INITIALIZER;

static struct link *find(nvJitLinkHandle h, int unlink)
{
	pthread_mutex_lock(&links_lock);
	struct link **pp = &links, *l;
	while ((l = *pp) && l->h != h)
		pp = &l->next;
	if (l && unlink)
		*pp = l->next;
	pthread_mutex_unlock(&links_lock);
	return l;
}

static void say(const char *what, const char *why)
{
	if (gp_env_flag(GP_VAR_LOG))
		fprintf(stderr, "gpuprobe: libnvJitLink: %s%s%s\n", what, why ? ": " : "",
			why ? why : "");
}

static nvJitLinkResult create(create_fn fn, nvJitLinkHandle *handle, uint32_t n,
			      const char *const *opts)
{
	if (!fn)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = fn(handle, n, opts);
	if (rc != NVJITLINK_SUCCESS || !handle)
		return rc;
	struct link *l = calloc(1, sizeof(*l));
	if (!l)
		return rc;
	l->h = *handle;
	jit_capture_parse_opts((int)n, opts, &l->r);
	if (n && opts && (l->opts = calloc(n, sizeof(*l->opts)))) {
		for (uint32_t i = 0; i < n; i++) {
			if (!opts[i] || !(l->opts[l->nopts] = strdup(opts[i])))
				continue;
			l->lto |= !strcmp(opts[i], "-lto");
			l->ptx_out |= !strcmp(opts[i], "-ptx");
			l->nopts++;
		}
	}
	snprintf(l->r.source, sizeof(l->r.source), "nvJitLink");
	pthread_mutex_lock(&links_lock);
	l->next = links;
	links = l;
	pthread_mutex_unlock(&links_lock);
	return rc;
}

nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle *handle, uint32_t n, const char *const *opts)
{
	return create(rl.create, handle, n, opts);
}

nvJitLinkResult __nvJitLinkCreate_13_0(nvJitLinkHandle *handle, uint32_t n,
				       const char *const *opts)
{
	return create(rl.create13, handle, n, opts);
}

static nvJitLinkResult destroy(destroy_fn fn, nvJitLinkHandle *handle)
{
	if (!fn)
		return NVJITLINK_ERROR_INTERNAL;
	struct link *l = handle ? find(*handle, 1) : NULL;
	if (l)
		link_free(l);
	return fn(handle);
}

nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *handle)
{
	return destroy(rl.destroy, handle);
}

nvJitLinkResult __nvJitLinkDestroy_13_0(nvJitLinkHandle *handle)
{
	return destroy(rl.destroy13, handle);
}

/* An input went in: the first PTX is kept, anything after it makes the link unrecordable. */
static void note_input(nvJitLinkHandle h, nvJitLinkInputType type, const void *data, size_t size,
		       const char *path)
{
	struct link *l = find(h, 0);
	if (!l)
		return;
	l->inputs++;
	if (l->lto && !l->ptx_out && !l->in_lost) {
		struct input *n = realloc(l->in, (l->nin + 1) * sizeof(*n));
		struct input in = {.type = type, .size = size};
		int ok = n != NULL;
		if (n)
			l->in = n;
		if (ok && path)
			ok = (in.path = strdup(path)) != NULL;
		else if (ok && (in.data = malloc(size ? size : 1)))
			memcpy(in.data, data, size);
		else
			ok = 0;
		if (ok)
			l->in[l->nin++] = in;
		else {
			free(in.path);
			l->in_lost = 1;
		}
	}
	if (type != NVJITLINK_INPUT_PTX || l->inputs > 1) {
		free(l->r.ptx);
		l->r.ptx = NULL;
		l->r.ptx_len = 0;
		return;
	}
	if (path) {
		FILE *f = fopen(path, "rb");
		if (!f)
			return;
		fseek(f, 0, SEEK_END);
		long n = ftell(f);
		fseek(f, 0, SEEK_SET);
		char *buf = n > 0 ? malloc((size_t)n + 1) : NULL;
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = 0;
			l->r.ptx = buf;
			l->r.ptx_len = strnlen(buf, (size_t)n);
		} else {
			free(buf);
		}
		fclose(f);
		return;
	}
	size_t len = strnlen(data, size);
	if ((l->r.ptx = malloc(len + 1))) {
		memcpy(l->r.ptx, data, len);
		l->r.ptx[len] = 0;
		l->r.ptx_len = len;
	}
}

nvJitLinkResult nvJitLinkAddData(nvJitLinkHandle h, nvJitLinkInputType type, const void *data,
				 size_t size, const char *name)
{
	if (!rl.add_data)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = rl.add_data(h, type, data, size, name);
	if (rc == NVJITLINK_SUCCESS)
		note_input(h, type, data, size, NULL);
	return rc;
}

nvJitLinkResult __nvJitLinkAddData_13_0(nvJitLinkHandle h, nvJitLinkInputType type,
					const void *data, size_t size, const char *name)
{
	if (!rl.add_data13)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = rl.add_data13(h, type, data, size, name);
	if (rc == NVJITLINK_SUCCESS)
		note_input(h, type, data, size, NULL);
	return rc;
}

nvJitLinkResult nvJitLinkAddFile(nvJitLinkHandle h, nvJitLinkInputType type, const char *path)
{
	if (!rl.add_file)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = rl.add_file(h, type, path);
	if (rc == NVJITLINK_SUCCESS)
		note_input(h, type, NULL, 0, path);
	return rc;
}

nvJitLinkResult __nvJitLinkAddFile_13_0(nvJitLinkHandle h, nvJitLinkInputType type,
					const char *path)
{
	if (!rl.add_file13)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = rl.add_file13(h, type, path);
	if (rc == NVJITLINK_SUCCESS)
		note_input(h, type, NULL, 0, path);
	return rc;
}

/* The -lto link's inputs linked again with -ptx: the PTX of the whole program, malloc'd, or NULL
 * (said under GPUPROBE_LOG). */
static char *relink_ptx(const struct link *l, size_t *len)
{
	const char **opts = calloc(l->nopts + 1, sizeof(*opts));
	if (!opts)
		return NULL;
	for (uint32_t i = 0; i < l->nopts; i++)
		opts[i] = l->opts[i];
	opts[l->nopts] = "-ptx";
	nvJitLinkHandle h2 = NULL;
	char *ptx = NULL;
	nvJitLinkResult rc = rl.create13 ? rl.create13(&h2, l->nopts + 1, opts) : NVJITLINK_ERROR_INTERNAL;
	free(opts);
	for (unsigned i = 0; rc == NVJITLINK_SUCCESS && i < l->nin; i++)
		rc = l->in[i].path ? rl.add_file13(h2, l->in[i].type, l->in[i].path)
				   : rl.add_data13(h2, l->in[i].type, l->in[i].data, l->in[i].size, "input");
	if (rc == NVJITLINK_SUCCESS)
		rc = rl.complete13(h2);
	size_t n = 0;
	if (rc == NVJITLINK_SUCCESS)
		rc = ((size_fn)jit_real___nvJitLinkGetLinkedPtxSize_13_0)(h2, &n);
	if (rc == NVJITLINK_SUCCESS && n && (ptx = malloc(n + 1))) {
		if (((get_fn)jit_real___nvJitLinkGetLinkedPtx_13_0)(h2, ptx) == NVJITLINK_SUCCESS) {
			ptx[n] = 0;
			*len = strlen(ptx);
		} else {
			free(ptx);
			ptx = NULL;
		}
	}
	if (!ptx) {
		char why[64];
		snprintf(why, sizeof(why), "nvJitLink result %d", (int)rc);
		say("the -lto link's PTX (the same inputs linked with -ptx) could not be made", why);
	}
	if (h2 && rl.destroy13)
		rl.destroy13(&h2);
	return ptx;
}

static void record(nvJitLinkHandle h)
{
	struct link *l = find(h, 0);
	if (l && !l->r.ptx && l->lto && !l->ptx_out && !l->in_lost && l->nin && rl.add_data13 &&
	    rl.add_file13 && rl.complete13)
		l->r.ptx = relink_ptx(l, &l->r.ptx_len);
	if (!l || (l->inputs != 1 && !l->lto) || !l->r.ptx)
		return;
	size_t size = 0;
	if (((size_fn)jit_real___nvJitLinkGetLinkedCubinSize_13_0)(h, &size) != NVJITLINK_SUCCESS ||
	    !size)
		return;
	void *cubin = malloc(size);
	if (cubin && ((get_fn)jit_real___nvJitLinkGetLinkedCubin_13_0)(h, cubin) ==
			     NVJITLINK_SUCCESS) {
		uint8_t hash[32];
		char why[512];
		jit_capture_hash(cubin, size, hash);
		if (jit_capture_put(hash, &l->r, why, sizeof(why)))
			say("not recorded", why);
	}
	free(cubin);
}

nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle h)
{
	if (!rl.complete)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = rl.complete(h);
	if (rc == NVJITLINK_SUCCESS)
		record(h);
	return rc;
}

nvJitLinkResult __nvJitLinkComplete_13_0(nvJitLinkHandle h)
{
	if (!rl.complete13)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = rl.complete13(h);
	if (rc == NVJITLINK_SUCCESS)
		record(h);
	return rc;
}
