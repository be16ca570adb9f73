/* Host API probes on the probe set's maps (host.h). */
#include "nvidia/host.h"

#include "ebpf/interp.h"
#include "ebpf/object.h"
#include "gpuprobe/api.h"
#include "gpuprobe/context.h"

#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_SLOTS 16
#define SCRATCH_BYTES 16384
#define KEY_MAX 256

struct gp_nv_host {
	const struct gp_nv_host_prog *progs;
	size_t n;
	void ***states;   /* per program: the interpreter's own map states (global data only) */
	pthread_mutex_t lock;
	const char *(*kernel_name)(const void *handle);   /* for gp_host_ctx.kernel_hash */
};

void gp_nv_host__set_kernel_name(struct gp_nv_host *h, const char *(*name)(const void *handle))
{
	if (h)
		h->kernel_name = name;
}

/* One looked-up value: where its copy lies in the scratch buffer, and what it held. */
struct slot {
	int map;
	uint32_t off, size;
	uint8_t key[KEY_MAX];
	uint8_t orig[];
};

struct run {
	const struct gp_nv_host_prog *hp;
	uint8_t *scratch;
	size_t used;
	struct slot *slots[MAX_SLOTS];
	unsigned nslots;
	void (*print)(void *user, const char *line);
	void *print_user;
};

static void run_print(void *user, const char *line)
{
	struct run *r = user;
	if (r->print)
		r->print(r->print_user, line);
	else
		fprintf(stderr, "%s\n", line);
}

int gp_nv_host__open(struct gp_nv_probes *ps, struct gp_nv_host **out, char *err, size_t errlen)
{
	const struct gp_nv_host_prog *progs;
	size_t n = gp_nv_probes__host_programs(ps, &progs);
	*out = NULL;
	if (!n)
		return 0;
	struct gp_nv_host *h = calloc(1, sizeof(*h));
	if (h)
		h->states = calloc(n, sizeof(*h->states));
	for (size_t i = 0; h && h->states && i < n; i++)
		if (progs[i].nmaps && !(h->states[i] = calloc(progs[i].nmaps, sizeof(void *))))
			goto oom;
	if (!h || !h->states)
		goto oom;
	h->progs = progs;
	h->n = n;
	pthread_mutex_init(&h->lock, NULL);
	*out = h;
	return 0;
oom:
	gp_nv_host__close(h);
	snprintf(err, errlen, "host probes: out of memory");
	return -ENOMEM;
}

void gp_nv_host__close(struct gp_nv_host *h)
{
	if (!h)
		return;
	for (size_t i = 0; h->states && i < h->n; i++)
		free(h->states[i]);   /* global-data states are the interpreter's: leaked at exit */
	free(h->states);
	free(h);
}

/* name without a trailing _v2/_v3/_ptsz/_ptds (repeatedly: cuMemcpyHtoD_v2_ptds) */
static void base_name(const char *api, char *out, size_t len)
{
	snprintf(out, len, "%s", api);
	static const char *sfx[] = {"_ptsz", "_ptds", "_v2", "_v3"};
	for (int again = 1; again;) {
		again = 0;
		size_t l = strlen(out);
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			size_t s = strlen(sfx[i]);
			if (l > s && !strcmp(out + l - s, sfx[i])) {
				out[l - s] = 0;
				again = 1;
				break;
			}
		}
	}
}

static int matches(const struct gp_program *p, int exit, const char *api, const char *base)
{
	if (p->attach != (exit ? GP_ATTACH_HOST_EXIT : GP_ATTACH_HOST_ENTRY))
		return 0;
	const char *g = p->target && *p->target ? p->target : "*";
	return !fnmatch(g, api, 0) || !fnmatch(g, base, 0);
}

int gp_nv_host__wants(const struct gp_nv_host *h, int exit, const char *api)
{
	char base[128];
	if (!h)
		return 0;
	base_name(api, base, sizeof(base));
	for (size_t i = 0; i < h->n; i++)
		if (matches(h->progs[i].prog, exit, api, base))
			return 1;
	return 0;
}

static struct gp_map_inst *map_of(struct run *r, uint64_t handle, int *mi)
{
	*mi = gp_interp_map_handle_index(handle, r->hp->nmaps);
	return *mi < 0 || !r->hp->maps ? NULL : gp_map_set__map(r->hp->maps, (size_t)*mi);
}

/* bpf_map_lookup_elem: a copy of the value in the scratch buffer (the same copy for the same
 * key within one run), NULL when absent. */
static uint64_t lookup(struct run *r, uint64_t handle, const void *key)
{
	int mi;
	struct gp_map_inst *m = map_of(r, handle, &mi);
	if (!m)
		return 0;
	uint32_t ks = r->hp->defs[mi].key_size;
	size_t size = gp_map_inst__read_size(m);
	if (ks > KEY_MAX)
		return 0;
	for (unsigned i = 0; i < r->nslots; i++)
		if (r->slots[i]->map == mi && !memcmp(r->slots[i]->key, key, ks))
			return (uint64_t)(uintptr_t)(r->scratch + r->slots[i]->off);
	size_t at = (r->used + 7) & ~(size_t)7;
	if (r->nslots == MAX_SLOTS || at + size > SCRATCH_BYTES)
		return 0;
	struct slot *s = malloc(sizeof(*s) + size);
	if (!s)
		return 0;
	if (gp_map_inst__lookup(m, key, r->scratch + at)) {
		free(s);
		return 0;
	}
	s->map = mi;
	s->off = (uint32_t)at;
	s->size = (uint32_t)size;
	memcpy(s->key, key, ks);
	memcpy(s->orig, r->scratch + at, size);
	r->slots[r->nslots++] = s;
	r->used = at + size;
	return (uint64_t)(uintptr_t)(r->scratch + at);
}

static uint64_t helper(void *user, int id, const uint64_t a[5], int *handled)
{
	struct run *r = user;
	struct gp_map_inst *m;
	int mi;
	switch (id) {
	case 1: /* map_lookup_elem */
		*handled = 1;
		return lookup(r, a[0], (const void *)(uintptr_t)a[1]);
	case 2: /* map_update_elem */
		*handled = 1;
		if (!(m = map_of(r, a[0], &mi)))
			return (uint64_t)-EINVAL;
		{
			int rc = gp_map_inst__update(m, (const void *)(uintptr_t)a[1],
						     (const void *)(uintptr_t)a[2], a[3]);
			/* a copy of the same element taken earlier in this run now holds the new value */
			for (unsigned i = 0; !rc && i < r->nslots; i++)
				if (r->slots[i]->map == mi &&
				    !memcmp(r->slots[i]->key, (const void *)(uintptr_t)a[1], r->hp->defs[mi].key_size)) {
					size_t vs = r->hp->defs[mi].value_size < r->slots[i]->size ?
							    r->hp->defs[mi].value_size : r->slots[i]->size;
					memcpy(r->scratch + r->slots[i]->off, (const void *)(uintptr_t)a[2], vs);
					memcpy(r->slots[i]->orig, r->scratch + r->slots[i]->off, r->slots[i]->size);
				}
			return (uint64_t)(int64_t)rc;
		}
	case 3: /* map_delete_elem */
		*handled = 1;
		if (!(m = map_of(r, a[0], &mi)))
			return (uint64_t)-EINVAL;
		return (uint64_t)(int64_t)gp_map_inst__delete(m, (const void *)(uintptr_t)a[1]);
	case 130: /* ringbuf_output(map, data, size, flags) */
		*handled = 1;
		if (!(m = map_of(r, a[0], &mi)))
			return (uint64_t)-EINVAL;
		return (uint64_t)(int64_t)gp_map_inst__ring_output(m, 0, (const void *)(uintptr_t)a[1], a[2]);
	case 25: /* perf_event_output(ctx, map, flags, data, size) */
		*handled = 1;
		if (!(m = map_of(r, a[1], &mi)))
			return (uint64_t)-EINVAL;
		return (uint64_t)(int64_t)gp_map_inst__ring_output(m, 0, (const void *)(uintptr_t)a[3], a[4]);
	}
	return 0;   /* the interpreter's own: time, pid, printk, ... */
}

/* A uprobe program's x86-64 registers (ebpf/object.h, enum gp_uprobe_abi) from the call's
 * arguments as host probes see them. */
static void fill_regs(struct gp_bpftime_regs *regs, enum gp_uprobe_abi abi, int exit,
		      const uint64_t *args, unsigned nargs, int result)
{
	uint64_t a[8] = {0};
	memcpy(a, args, (nargs < 8 ? nargs : 8) * sizeof(uint64_t));
	memset(regs, 0, sizeof(*regs));
	if (abi == GP_UPROBE_RUNTIME_LAUNCH) {
		/* launch arguments: f, grid x/y/z, block x/y/z, shared bytes; a dim3 (12 bytes of
		 * INTEGER class) travels in two registers: x | y << 32, then z */
		regs->di = a[0];
		regs->si = (a[1] & 0xffffffffu) | a[2] << 32;
		regs->dx = a[3] & 0xffffffffu;
		regs->cx = (a[4] & 0xffffffffu) | a[5] << 32;
		regs->r8 = a[6] & 0xffffffffu;
		regs->r9 = 0;   /* the kernel's argument array: not passed to host probes */
	} else {
		regs->di = a[0];
		regs->si = a[1];
		regs->dx = a[2];
		regs->cx = a[3];
		regs->r8 = a[4];
		regs->r9 = a[5];
	}
	regs->ax = exit ? (uint64_t)(int64_t)result : 0;
}

int gp_nv_host__notes(const struct gp_nv_host *h, void (*line)(void *user, const char *text),
		      void *user)
{
	int n = 0;
	for (size_t i = 0; h && i < h->n; i++) {
		const struct gp_program *p = h->progs[i].prog;
		enum gp_uprobe_abi abi = gp_program__uprobe_abi(p);
		if (abi == GP_UPROBE_NONE)
			continue;
		/* uprobe/<binary>:<function>: the binary part, when there is one */
		const char *slash = strchr(p->section, '/'), *colon = strrchr(p->section, ':');
		int plen = slash && colon && colon > slash ? (int)(colon - slash - 1) : 0;
		char where[320], text[1024];
		if (plen)
			snprintf(where, sizeof(where), "binary path '%.*s' ignored", plen, slash + 1);
		else
			snprintf(where, sizeof(where), "no binary path");
		snprintf(text, sizeof(text), "host probe %s: %s runs at %s of the driver's %s (%s; registers: %s)",
			 p->name, p->section, p->attach == GP_ATTACH_HOST_EXIT ? "exit" : "entry",
			 p->target ? p->target : "*", where,
			 abi == GP_UPROBE_RUNTIME_LAUNCH ?
				 "cudaLaunchKernel's: di func (the CUfunction), si grid x|y<<32, dx grid z,"
				 " cx block x|y<<32, r8 block z, r9 0, ax the CUresult at exit" :
				 "the driver call's arguments in di, si, dx, cx, r8, r9, ax the CUresult at exit");
		line(user, text);
		n++;
	}
	return n;
}

/* Values the program changed go back to the maps. */
static void write_back(struct run *r)
{
	for (unsigned i = 0; i < r->nslots; i++) {
		struct slot *s = r->slots[i];
		if (memcmp(s->orig, r->scratch + s->off, s->size))
			gp_map_inst__update(gp_map_set__map(r->hp->maps, (size_t)s->map), s->key,
					    r->scratch + s->off, 0 /* BPF_ANY */);
		free(s);
	}
	r->nslots = 0;
}

int gp_nv_host__run(struct gp_nv_host *h, int exit, const char *api, const uint64_t *args,
		    unsigned nargs, int result, void (*print)(void *user, const char *line),
		    void *print_user, char *err, size_t errlen)
{
	if (!h)
		return 0;
	char base[128];
	base_name(api, base, sizeof(base));
	struct gp_host_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.api_id = gp_api_id(base);   /* gpuprobe/api.h: what gp_api_id_t keys print as */
	ctx.api_hash = gp_name_hash(base);
	ctx.nargs = nargs < 8 ? nargs : 8;
	memcpy(ctx.args, args, ctx.nargs * sizeof(uint64_t));
	ctx.result = exit ? result : 0;
	ctx.ret = exit ? (uint64_t)(int64_t)result : 0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ctx.timestamp = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	ctx.pid = (uint32_t)getpid();
	ctx.tid = (uint32_t)syscall(SYS_gettid);
	/* a launch's first argument is the function: its kernel, as the device probes key it */
	if (h->kernel_name && ctx.nargs && !strncmp(base, "cuLaunch", 8)) {
		const char *kn = h->kernel_name((const void *)(uintptr_t)args[0]);
		ctx.kernel_hash = kn ? gp_name_hash(kn) : 0;
	}
	int ran = 0, rc = 0;
	static _Alignas(8) uint8_t scratch[SCRATCH_BYTES];   /* used under h->lock only */
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->n; i++) {
		const struct gp_nv_host_prog *hp = &h->progs[i];
		if (!matches(hp->prog, exit, api, base))
			continue;
		struct run r = {.hp = hp, .scratch = scratch, .print = print, .print_user = print_user};
		/* bpftime's uprobe/uretprobe programs read x86-64 registers instead of the context */
		enum gp_uprobe_abi abi = gp_program__uprobe_abi(hp->prog);
		struct gp_bpftime_regs regs;
		void *c = &ctx;
		uint32_t csize = sizeof(ctx);
		if (abi != GP_UPROBE_NONE) {
			fill_regs(&regs, abi, exit, args, nargs, result);
			c = &regs;
			csize = sizeof(regs);
		}
		struct gp_interp_env env = {.maps = hp->defs, .map_state = h->states[i],
					    .nmaps = hp->nmaps, .helper = helper, .user = &r,
					    .on_print = run_print, .ctx_size = csize,
					    .scratch = scratch, .scratch_size = sizeof(scratch)};
		uint64_t ret;
		char e[256];
		int prc = gp_interp_run(hp->prog->insns, hp->prog->ninsns, (uint64_t)(uintptr_t)c,
					csize, &env, &ret, e, sizeof(e));
		write_back(&r);
		if (prc) {
			snprintf(err, errlen, "host probe %s on %s: %s", hp->prog->name, api, e);
			rc = prc;
		}
		ran++;
	}
	pthread_mutex_unlock(&h->lock);
	return rc ? rc : ran;
}
