/* The NVIDIA probe pipeline (probes.h). */
#include "nvidia/probes.h"
#include "nvidia/ptx_target.h"
#include "nvidia/ctx_use.h"

#include "common/env.h"
#include "ebpf/lower.h"
#include "ebpf/verifier.h"
#include "maps/capture.h"
#include "maps/map_device.h"
#include "ptx-frontend/demangle.h"
#include "ptx-frontend/kernel_match.h"
#include "ptx-frontend/inline.h"
#include "ptx-frontend/ctx_fold.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct nv_prog {
	const struct gp_program *prog;
	size_t obj;
	size_t index;              /* in its object */
	unsigned stack;            /* verifier's stack_depth */
	int additive;              /* verifier's: sites may merge (gp_inst_probe.weighted) */
	uint64_t ctx_read[2];      /* verifier's: the context bytes it reads */
};

struct nv_obj {
	struct gp_object *obj;
	struct gp_map *defs;
	size_t nmaps;
	struct gp_map_set *set;
	struct gp_maps_device dev;
	int cfg_index;
	const struct gp_config *cfg;
};

struct nv_cache_entry {
	uint64_t hash;
	size_t len;
	char *out;                 /* NULL: no site in that module */
	size_t out_len;
	struct gp_inst_stats stats;
	struct nv_cache_entry *next;
};

struct gp_nv_probes {
	struct nv_obj *objs;
	size_t nobjs;
	struct nv_prog *dev_progs;
	size_t ndev;
	struct gp_nv_host_prog *host_progs;
	size_t nhost;
	struct gp_map_allocator *own_alloc;
	/* get_current_pid_tgid's value in device memory (after every map), so the PTX names its
	   address, the same in every process (shim/probes_alloc.c), instead of the pid: 0 when no
	   device program calls it or the maps are in host memory (then an immediate). */
	const struct gp_map_allocator *alloc;
	uint64_t pid_tgid_addr;
	/* The host clocks' offsets from %globaltimer (ebpf/lower.h clock_addr), after pid_tgid's
	   word when a device program reads a clock: 0 when none does or there is no device
	   memory (then device times stay %globaltimer). The shim writes the offsets. */
	uint64_t clock_addr;
	int no_warp_collectives;   /* opts' */
	pthread_mutex_t lock;      /* lowering into modules and the cache */
	struct nv_cache_entry *cache;
	/* For the report at exit (gp_nv_probes__unmatched), under lock: which device programs'
	   globs matched a function of a module instrumented, and the first kernels seen. */
	unsigned char *matched;
	char *seen[16];
	size_t nseen, nkernels, nmodules;
	/* kernels whose instrumented code came from a cache (gp_nv_probes__note_kernel): matched
	 * by name, so device-function globs stay undecided */
	size_t nnoted;
};

static const char *last_line(char *log)
{
	size_t n = strlen(log);
	while (n && log[n - 1] == '\n')
		log[--n] = 0;
	char *nl = strrchr(log, '\n');
	return nl ? nl + 1 : log;
}

static int is_host(enum gp_attach_kind k)
{
	return k == GP_ATTACH_HOST_ENTRY || k == GP_ATTACH_HOST_EXIT;
}

/* Whether the program calls helper id. The puts function embeds the printk ring's address:
 * emitted into every module, it made each run's PTX differ, so the driver's JIT cache never hit
 * (bench/overhead: an empty probe's cached first launch took 2.3x the native one). */
static int calls_helper(const struct gp_program *p, int id)
{
	for (size_t i = 0; i < p->ninsns; i++)
		if (p->insns[i].code == (BPF_JMP | BPF_CALL) && p->insns[i].src_reg == 0 &&
		    p->insns[i].imm == id)
			return 1;
	return 0;
}

/* Verify the programs of one object, OR-ing nothing: a map is sharded only when every program
 * changes it by atomic add alone. */
static int open_one(struct gp_nv_probes *ps, size_t oi, const char *path,
		    const struct gp_nv_probes_opts *opts, char *err, size_t errlen)
{
	struct nv_obj *o = &ps->objs[oi];
	if (gp_object__open_file(path, &o->obj, err, errlen))
		return -EINVAL;
	size_t np = gp_object__program_count(o->obj);
	o->nmaps = gp_object__map_count(o->obj);
	o->defs = calloc(o->nmaps + 1, sizeof(*o->defs));
	uint8_t *all = calloc(o->nmaps + 1, 1), *one = calloc(o->nmaps + 1, 1);
	enum gp_map_placement *place = calloc(o->nmaps + 1, sizeof(*place));
	char *log = malloc(64u << 10);
	int rc = -ENOMEM;
	if (!o->defs || !all || !one || !place || !log) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < o->nmaps; i++) {
		o->defs[i] = *gp_object__map(o->obj, i);
		all[i] = 1;
		place[i] = opts->cfg ? gp_config__placement(opts->cfg, o->defs[i].name)
				     : GP_MAP_PLACE_DEVICE;
	}
	for (size_t p = 0; p < np; p++) {
		const struct gp_program *prog = gp_object__program(o->obj, p);
		if (prog->attach == GP_ATTACH_NONE)
			continue;
		memset(one, 0, o->nmaps + 1);
		char warnings[1024];
		struct gp_verify_opts vo = {.attach = prog->attach, .maps = o->defs, .nmaps = o->nmaps,
					    .ctx_size = gp_program__ctx_size(prog), .log = log,
					    .log_size = 64u << 10, .map_atomic_only = one,
					    .warnings = warnings, .warnings_size = sizeof(warnings)};
		log[0] = 0;
		int vr = gp_verify(prog->insns, prog->ninsns, &vo);
		/* the verifier's warnings (a racy read-modify-write), once per program and set-up;
		 * host programs run one at a time under nvidia/host.c's lock: no race to warn of
		 * (launchlate's host counter was warned about on every run) */
		bool host = prog->attach == GP_ATTACH_HOST_ENTRY || prog->attach == GP_ATTACH_HOST_EXIT;
		for (char *w = warnings, *nl; !vr && !host && opts->warn && *w; w = nl + 1) {
			char line[1280];
			if (!(nl = strchr(w, '\n')))
				nl = w + strlen(w) - 1;
			snprintf(line, sizeof(line), "%s: program %s: %.*s", path, prog->name,
				 (int)(nl - w + (*nl != '\n')), w);
			opts->warn(opts->warn_user, line);
		}
		if (vr) {
			snprintf(err, errlen, "%s: program %s is rejected by the verifier: %s", path,
				 prog->name, last_line(log));
			if (!opts->skip_rejected) {
				rc = -EACCES;
				goto out;
			}
			if (opts->warn) {
				char line[1024];
				snprintf(line, sizeof(line), "%s; skipped", err);
				opts->warn(opts->warn_user, line);
			}
			continue;
		}
		for (size_t i = 0; i < o->nmaps; i++)
			all[i] &= one[i];
		if (is_host(prog->attach)) {
			ps->host_progs[ps->nhost++] = (struct gp_nv_host_prog){
				.prog = prog, .defs = o->defs, .nmaps = o->nmaps};
		} else {
			ps->dev_progs[ps->ndev++] = (struct nv_prog){
				.prog = prog, .obj = oi, .index = p, .stack = vo.stack_depth,
				.additive = vo.additive, .ctx_read = {vo.ctx_read[0], vo.ctx_read[1]}};
		}
	}
	struct gp_map_set_opts so = {
		.alloc = opts->alloc ? opts->alloc : ps->own_alloc, .atomic_only = all,
		.placement = place,
		.perthread_slots = opts->cfg ? opts->cfg->perthread_slots : 0,
		.printk_ring_bytes = opts->cfg ? opts->cfg->printk_ring_bytes : 0,
		/* under `gpuprobe run --output`: rings big enough for the link's rate (capture.h) */
		.ring_floor_total = gp_env_str(GP_VAR_CAPTURE) ? GP_CAPTURE_RING_FLOOR_TOTAL : 0};
	err[0] = 0;
	if (gp_map_set__create(o->defs, o->nmaps, &so, &o->set, err, errlen)) {
		char why[512];
		snprintf(why, sizeof(why), "%s", err[0] ? err : "cannot create maps");
		snprintf(err, errlen, "%s: maps: %s", path, why);
		rc = -ENOMEM;
		goto out;
	}
	if (gp_maps_device__init_from_set(&o->dev, o->set)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	o->dev.hash_site_cache = gp_env_flag(GP_VAR_HASH_CACHE);
	for (size_t i = 0; i < gp_object__program_count(o->obj); i++)
		if (calls_helper(gp_object__program(o->obj, i), 3))
			o->dev.hash_site_cache = 0;   /* a deleted key's bucket may become another's */
	for (size_t h = 0; h < ps->nhost; h++)
		if (ps->host_progs[h].defs == o->defs)
			ps->host_progs[h].maps = o->set;
	rc = 0;
out:
	free(all);
	free(one);
	free(place);
	free(log);
	return rc;
}

/* The 8-byte word helper 14 reads (gp_lower_opts.pid_tgid_addr), allocated after all maps so
 * the maps keep their addresses, when some device program calls the helper. */
static int place_pid_tgid(struct gp_nv_probes *ps, const struct gp_map_allocator *a, char *err,
			  size_t errlen)
{
	int need = 0;
	for (size_t k = 0; k < ps->ndev; k++)
		need |= calls_helper(ps->dev_progs[k].prog, 14);
	if (!need || !a->dev_alloc || !a->copy_to_dev)
		return 0;
	uint64_t v = (uint64_t)getpid() << 32 | (uint64_t)getpid(), addr = 0;
	int rc = a->dev_alloc(a->user, sizeof(v), &addr);
	if (!rc && !addr)
		rc = -ENOMEM;
	if (rc) {
		snprintf(err, errlen, "pid_tgid word: device allocation failed (%d)", rc);
		return rc;
	}
	ps->alloc = a;
	ps->pid_tgid_addr = addr;
	if ((rc = a->copy_to_dev(a->user, addr, &v, sizeof(v)))) {
		snprintf(err, errlen, "pid_tgid word: copy to the device failed (%d)", rc);
		return rc;
	}
	return 0;
}

/* The clock words (docs/architecture.md "One clock"), zero until the shim measures the offsets. A failure
 * costs only the correction, never the probes: clock_addr stays 0. */
static void place_clock(struct gp_nv_probes *ps, const struct gp_map_allocator *a)
{
	int need = 0;
	for (size_t k = 0; k < ps->ndev; k++)
		need |= calls_helper(ps->dev_progs[k].prog, 5) || calls_helper(ps->dev_progs[k].prog, 502);
	uint8_t zero[GP_CLOCK_WORDS_SIZE] = {0};
	uint64_t addr = 0;
	if (!need || !a->dev_alloc || !a->copy_to_dev || a->dev_alloc(a->user, sizeof(zero), &addr) ||
	    !addr)
		return;
	if (a->copy_to_dev(a->user, addr, zero, sizeof(zero))) {
		if (a->dev_free)
			a->dev_free(a->user, addr);
		return;
	}
	ps->alloc = a;
	ps->clock_addr = addr;
}

uint64_t gp_nv_probes__clock_addr(const struct gp_nv_probes *ps) { return ps->clock_addr; }
uint64_t gp_nv_probes__pid_tgid_addr(const struct gp_nv_probes *ps) { return ps->pid_tgid_addr; }

int gp_nv_probes__open(const char *const *paths, const int *cfg_index, size_t n,
		       const struct gp_nv_probes_opts *opts, struct gp_nv_probes **out,
		       char *err, size_t errlen)
{
	*out = NULL;
	struct gp_nv_probes *ps = calloc(1, sizeof(*ps));
	if (!ps) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&ps->lock, NULL);
	ps->no_warp_collectives = opts->no_warp_collectives;
	ps->objs = calloc(n + 1, sizeof(*ps->objs));
	size_t maxprogs = 0;
	int rc = 0;
	if (!opts->alloc && !(ps->own_alloc = gp_map_allocator_host(1)))
		rc = -ENOMEM;
	/* Count programs first (objects are reopened below: cheap, and keeps one path). */
	for (size_t i = 0; i < n && !rc; i++) {
		struct gp_object *tmp;
		if ((rc = gp_object__open_file(paths[i], &tmp, err, errlen)))
			break;
		maxprogs += gp_object__program_count(tmp);
		gp_object__close(tmp);
	}
	if (!rc) {
		ps->dev_progs = calloc(maxprogs + 1, sizeof(*ps->dev_progs));
		ps->host_progs = calloc(maxprogs + 1, sizeof(*ps->host_progs));
		if (!ps->objs || !ps->dev_progs || !ps->host_progs)
			rc = -ENOMEM;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		ps->objs[i].cfg_index = cfg_index ? cfg_index[i] : -1;
		ps->objs[i].cfg = opts->cfg;
		ps->nobjs = i + 1;
		rc = open_one(ps, i, paths[i], opts, err, errlen);
	}
	if (!rc && opts->alloc)
		rc = place_pid_tgid(ps, opts->alloc, err, errlen);
	if (!rc && opts->alloc)
		place_clock(ps, opts->alloc);
	if (rc) {
		if (rc == -ENOMEM && !err[0])
			snprintf(err, errlen, "out of memory");
		gp_nv_probes__close(ps);
		return rc;
	}
	*out = ps;
	return 0;
}

void gp_nv_probes__close(struct gp_nv_probes *ps)
{
	if (!ps)
		return;
	if (ps->pid_tgid_addr && ps->alloc->dev_free)
		ps->alloc->dev_free(ps->alloc->user, ps->pid_tgid_addr);
	if (ps->clock_addr && ps->alloc->dev_free)
		ps->alloc->dev_free(ps->alloc->user, ps->clock_addr);
	for (size_t i = 0; i < ps->nobjs; i++) {
		gp_maps_device__release(&ps->objs[i].dev);
		if (ps->objs[i].set)
			gp_map_set__free(ps->objs[i].set);
		free(ps->objs[i].defs);
		gp_object__close(ps->objs[i].obj);
	}
	for (struct nv_cache_entry *c = ps->cache, *next; c; c = next) {
		next = c->next;
		free(c->out);
		free(c);
	}
	for (size_t i = 0; i < ps->nseen; i++)
		free(ps->seen[i]);
	free(ps->matched);
	free(ps->objs);
	free(ps->dev_progs);
	free(ps->host_progs);
	free(ps->own_alloc);
	pthread_mutex_destroy(&ps->lock);
	free(ps);
}

size_t gp_nv_probes__device_programs(const struct gp_nv_probes *ps) { return ps->ndev; }
size_t gp_nv_probes__object_count(const struct gp_nv_probes *ps) { return ps->nobjs; }
struct gp_map_set *gp_nv_probes__maps(const struct gp_nv_probes *ps, size_t i)
{
	return i < ps->nobjs ? ps->objs[i].set : NULL;
}

size_t gp_nv_probes__host_programs(const struct gp_nv_probes *ps,
				   const struct gp_nv_host_prog **out)
{
	*out = ps->host_progs;
	return ps->nhost;
}

static uint64_t fnv64(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* The configuration's kernel filter for one object. */
static int cfg_selected(void *user, const char *mangled, const char *demangled)
{
	const struct nv_obj *o = user;
	return !o->cfg || gp_config__kernel_selected(o->cfg, o->cfg_index, mangled, demangled);
}

static void add_seen(struct gp_nv_probes *ps, const char *name)
{
	size_t i = 0;
	while (i < ps->nseen && strcmp(ps->seen[i], name))
		i++;
	if (i == ps->nseen && ps->nseen < sizeof(ps->seen) / sizeof(ps->seen[0]))
		ps->seen[ps->nseen++] = strdup(name);
}

static int is_func_attach(const struct gp_program *prog)
{
	return prog->attach == GP_ATTACH_FUNC_ENTRY || prog->attach == GP_ATTACH_FUNC_EXIT;
}

/* What the report at exit needs from a module: its kernels, and which programs' globs (the
 * section's own, whatever the configuration's kernel filters say) name one of its functions. */
static void note_seen(struct gp_nv_probes *ps, const ir_module *m)
{
	if (!ps->matched && ps->ndev && !(ps->matched = calloc(ps->ndev, 1)))
		return;
	ps->nmodules++;
	for (ir_top *t = m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC || !t->func.is_entry || !t->func.has_body || !t->func.name)
			continue;
		ps->nkernels++;
		add_seen(ps, t->func.name);
	}
	for (size_t k = 0; ps->matched && k < ps->ndev; k++) {
		const struct gp_program *prog = ps->dev_progs[k].prog;
		struct gp_inst_probe probe = {.attach = prog->attach, .glob = prog->target,
					      .mem_filter = prog->mem_filter};
		if (!ps->matched[k] && gp_instrument_matches(m, &probe))
			ps->matched[k] = 1;
	}
}

void gp_nv_probes__note_kernel(struct gp_nv_probes *ps, const char *name)
{
	if (!ps || !name)
		return;
	pthread_mutex_lock(&ps->lock);
	if (ps->matched || !ps->ndev || (ps->matched = calloc(ps->ndev, 1))) {
		ps->nnoted++;
		ps->nkernels++;
		add_seen(ps, name);
		char *dem = demangle(name);
		for (size_t k = 0; k < ps->ndev; k++) {
			const struct gp_program *prog = ps->dev_progs[k].prog;
			if (!ps->matched[k] && !is_func_attach(prog) &&
			    gp_instrument_glob(prog->target, name, dem ? dem : name))
				ps->matched[k] = 1;
		}
		free(dem);
	}
	pthread_mutex_unlock(&ps->lock);
}

void gp_nv_probes__unmatched(struct gp_nv_probes *ps, void (*line)(void *user, const char *text),
			     void *user)
{
	if (!ps)
		return;
	pthread_mutex_lock(&ps->lock);
	if (ps->nmodules || ps->nnoted) {
		char seen[1024];
		size_t o = 0;
		seen[0] = 0;
		for (size_t i = 0; i < ps->nseen && o < sizeof(seen); i++) {
			char *d = demangle(ps->seen[i]), a[512], b[512], c[512];
			gp_kernel_names(d, a, b, c, sizeof(a));
			o += (size_t)snprintf(seen + o, sizeof(seen) - o, "%s%s", i ? ", " : "", b[0] ? b : ps->seen[i]);
			free(d);
		}
		if (ps->nkernels > ps->nseen && o < sizeof(seen))
			snprintf(seen + o, sizeof(seen) - o, ", ... (%zu kernels in %zu modules)", ps->nkernels,
				 ps->nmodules);
		for (size_t k = 0; k < ps->ndev; k++) {
			if (ps->matched && ps->matched[k])
				continue;
			const struct gp_program *prog = ps->dev_progs[k].prog;
			int fn = is_func_attach(prog);
			if (fn && ps->nnoted)
				continue;   /* a cached kernel's device functions were not looked at */
			char text[1400];
			snprintf(text, sizeof(text), "%s: no %s of the application matched; kernels seen: %s",
				 prog->section, fn ? "device function" : "kernel", ps->nseen ? seen : "none");
			line(user, text);
		}
	}
	pthread_mutex_unlock(&ps->lock);
}

static int instrument_uncached(struct gp_nv_probes *ps, const char *ptx, size_t len, char **out,
			       size_t *out_len, struct gp_inst_stats *st, char *err, size_t errlen)
{
	char perr[256];
	ir_module *m = ptx_parse(ptx, len, perr, sizeof(perr));
	if (!m) {
		snprintf(err, errlen, "PTX does not parse: %s", perr);
		return -EINVAL;
	}
	int rc = 0;
	struct gp_inst_probe *ip = calloc(ps->ndev + 1, sizeof(*ip));
	size_t nip = 0;
	if (!ip) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (m->address_size && m->address_size != 64) {
		snprintf(err, errlen, "32-bit PTX (.address_size %u) is not instrumented", m->address_size);
		rc = -ENOTSUP;
		goto done;
	}
	note_seen(ps, m);
	ir_top *before = m->last;
	for (size_t k = 0; k < ps->ndev; k++) {
		const struct nv_prog *p = &ps->dev_progs[k];
		struct nv_obj *o = &ps->objs[p->obj];
		struct gp_inst_probe probe = {
			.attach = p->prog->attach, .glob = p->prog->target,
			.mem_filter = p->prog->mem_filter, .barrier_after = p->prog->barrier_after,
			.selected = cfg_selected, .user = o,
			.ctx_unread = gp_ctx_unread_words(p->prog->insns, p->prog->ninsns),
			.warp_sync = calls_helper(p->prog, 515) || calls_helper(p->prog, 516) ||
				     calls_helper(p->prog, 517)};
		if (!gp_instrument_matches(m, &probe))
			continue;
		probe.func = ir_strfmt(m, "__gp_p%zu_%zu_%s", p->obj, p->index, p->prog->name);
		/* an additive memory probe counts a basic block's like sites with one weighted call
		 * (ptx-frontend/instrument.h); GPUPROBE_AGGREGATE=0: one call per site as before */
		probe.weighted = p->additive && (p->prog->attach == GP_ATTACH_MEM ||
						 p->prog->attach == GP_ATTACH_BASIC_BLOCK) &&
				 gp_env_flag(GP_VAR_AGGREGATE);
		/* and counts a kernel's sites in accumulators, run where each thread leaves */
		probe.deferred = probe.weighted && gp_env_flag(GP_VAR_DEFER);
		probe.first_run = p->additive == 2;
		probe.ctx_key[0] = p->ctx_read[0];
		probe.ctx_key[1] = p->ctx_read[1];
		struct gp_lower_opts lo = {
			.emit_map_ref = gp_maps_emit_map_ref, .helper_func = gp_maps_helper_func,
			.emit_map_lookup = gp_maps_emit_map_lookup,
			.emit_map_lookup_var = gp_maps_emit_map_lookup_var,
			.update_by_value = gp_maps_update_by_value,
			.puts_func = calls_helper(p->prog, 501) ? gp_maps_puts_func(&o->dev, m) : NULL,
			.user = &o->dev,
			.prefix = ir_strfmt(m, "__gp%zu_%zu_", p->obj, p->index),
			.stack_size = p->stack, .assume_aligned = 1,
			.warp_aggregate = !ps->no_warp_collectives,   /* the module is raised to sm_70 */
			.pid_tgid = (uint64_t)getpid() << 32 | (uint64_t)getpid(),
			.pid_tgid_addr = ps->pid_tgid_addr, .site_mask = probe.warp_sync,
			.clock_addr = ps->clock_addr, .weight = probe.weighted};
		gp_ctx_uniform_bytes(p->prog->attach, lo.ctx_uniform);
		char lerr[256];
		if (gp_lower_program(m, p->prog->insns, p->prog->ninsns, probe.func, &lo, lerr,
				     sizeof(lerr))) {
			snprintf(err, errlen, "program %s does not lower: %s", p->prog->name, lerr);
			rc = -EINVAL;
			goto done;
		}
		probe.reconverge = probe.warp_sync || gp_instrument_func_branches(m, probe.func);
		ip[nip++] = probe;
	}
	if (!nip)
		goto done;   /* no site: *out stays NULL */
	if ((rc = gp_nv_ptx_target__raise(m, err, errlen)))
		goto done;
	gp_instrument_hoist(m, before);
	if ((rc = gp_instrument_module(m, ip, nip, st, err, errlen)))
		goto done;
	gp_inline_probe_calls(m);   /* ptxas does not inline calls (ptx-frontend/inline.h) */
	gp_ctx_fold_loads(m);       /* inlined probes read their context by name */
	*out = ptx_print(m, out_len);
	if (!*out) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
	}
done:
	free(ip);
	ir_module_free(m);
	return rc;
}

int gp_nv_probes__instrument(struct gp_nv_probes *ps, const char *ptx, size_t len, char **out,
			     size_t *out_len, struct gp_inst_stats *stats, char *err, size_t errlen)
{
	*out = NULL;
	*out_len = 0;
	struct gp_inst_stats local;
	struct gp_inst_stats *st = stats ? stats : &local;
	memset(st, 0, sizeof(*st));
	while (len && !ptx[len - 1])
		len--;   /* fatbin payloads carry trailing NULs */
	uint64_t h = fnv64(ptx, len);
	pthread_mutex_lock(&ps->lock);
	for (struct nv_cache_entry *c = ps->cache; c; c = c->next) {
		if (c->hash != h || c->len != len)
			continue;
		int rc = 0;
		if (c->out && !(*out = malloc(c->out_len + 1))) {
			rc = -ENOMEM;
		} else if (c->out) {
			memcpy(*out, c->out, c->out_len + 1);
			*out_len = c->out_len;
		}
		*st = c->stats;
		pthread_mutex_unlock(&ps->lock);
		return rc;
	}
	int rc = instrument_uncached(ps, ptx, len, out, out_len, st, err, errlen);
	if (!rc) {
		struct nv_cache_entry *c = calloc(1, sizeof(*c));
		if (c && (!*out || (c->out = malloc(*out_len + 1)))) {
			c->hash = h;
			c->len = len;
			if (*out)
				memcpy(c->out, *out, *out_len + 1);
			c->out_len = *out_len;
			c->stats = *st;
			c->next = ps->cache;
			ps->cache = c;
		} else {
			free(c);
		}
	}
	pthread_mutex_unlock(&ps->lock);
	return rc;
}
