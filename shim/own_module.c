/* The own driver's modules: image -> PTX (the fatbin's best PTX for OWN_CC) -> IR -> backend
 * program, built one kernel at a time at its first launch (ptx-frontend/split.h), so that a
 * construct the backend cannot lower fails only the kernels that use it, and kernels never
 * launched cost nothing.
 *
 * The module's __device__ and __constant__ variables live in one backend allocation made at load
 * (initialized by a one-thread kernel of their declarations when they have initializers); each
 * kernel's split module is bound to those addresses (ptx_split_bind), so kernels share them and
 * cuModuleGetGlobal (cudaMemcpyToSymbol) reaches them. A module the split refuses (textures,
 * indirect calls, ...) is built whole at its first launch; its variables are then the program's
 * own and cuModuleGetGlobal says so. A module without PTX gets one line and
 * CUDA_ERROR_NO_BINARY_FOR_GPU. */
#include "common/env.h"
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN
#include "shim/own_module.h"
#include "shim/log.h"
#include "shim/jit_capture.h"
#include "ptx-frontend/fatbin.h"
#include "ptx-frontend/link.h"
#include "ptx-frontend/split.h"
#include "spirv/spirv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned module_seq;

static size_t elem_bytes(const char *type)
{
	if (!type)
		return 0;
	if (!strcmp(type, ".pred"))
		return 1;
	size_t n = strlen(type);
	const char *d = type + n;
	while (d > type && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (strstr(type, "x2"))   /* .f16x2, .bf16x2 */
		return 4;
	unsigned bits = (unsigned)atoi(d);
	return bits >= 8 ? bits / 8 : 0;
}

/* Bytes of a declaration (vector and array dimensions included); 0 for an open array []. */
static size_t decl_bytes(const ir_decl *d)
{
	size_t n = elem_bytes(d->type);
	if (d->vec)
		n *= (size_t)atoi(d->vec + 2);
	for (const char *p = d->dims; p && (p = strchr(p, '[')); p++) {
		if (p[1] == ']')
			return 0;
		n *= (size_t)strtoull(p + 1, NULL, 0);
	}
	return n;
}

static size_t decl_align(const ir_decl *d)
{
	size_t a = d->align ? d->align : elem_bytes(d->type) * (d->vec ? (size_t)atoi(d->vec + 2) : 1);
	return a ? a : 1;
}

/* The PTX an image holds for our device, malloc'd; NULL with a line in why and in *rc the error
 * NVIDIA's driver gives for such an image: CUDA_ERROR_INVALID_IMAGE for what is no module at all
 * (or a damaged one), CUDA_ERROR_NO_BINARY_FOR_GPU for a module without code for this device. */
static char *image_ptx(const void *image, size_t *len, CUresult *rc, char *why, size_t whylen)
{
	*rc = CUDA_ERROR_NO_BINARY_FOR_GPU;
	enum module_image_kind kind = module_image_classify(image, SIZE_MAX);
	if (kind == MODULE_IMAGE_PTX) {
		*len = strlen(image);
		return strdup(image);
	}
	if (kind == MODULE_IMAGE_CUBIN) {
		/* A cubin NVRTC, nvJitLink or gpuprobe-ptxas made here: its PTX was recorded
		 * (jit_capture.h, build/lib's stand-ins). */
		size_t size;
		uint8_t hash[32];
		struct jit_record rec;
		if (module_image_size(image, kind, &size) < 0) {
			*rc = CUDA_ERROR_INVALID_IMAGE;
			snprintf(why, whylen, "a damaged ELF image (its headers give no size)");
			return NULL;
		}
		jit_capture_hash(image, size, hash);
		if (jit_capture_get(hash, &rec, NULL, 0) == 0) {
			char *ptx = rec.ptx;
			*len = rec.ptx_len;
			rec.ptx = NULL;
			jit_record_free(&rec);
			return ptx;
		}
		snprintf(why, whylen, "a cubin (machine code for an NVIDIA GPU) without PTX; gpuprobe's own driver "
				      "runs PTX: rebuild with -arch=sm_XX (or -gencode arch=compute_XX,code=compute_XX)");
		return NULL;
	}
	if (kind != MODULE_IMAGE_FATBIN && kind != MODULE_IMAGE_WRAPPER) {
		*rc = CUDA_ERROR_INVALID_IMAGE;
		snprintf(why, whylen, "an image that is neither PTX, a cubin nor a fatbin");
		return NULL;
	}
	struct fatbin *fb;
	char err[256];
	if (fatbin__open_mem(image, SIZE_MAX, &fb, err, sizeof(err)) < 0) {
		*rc = CUDA_ERROR_INVALID_IMAGE;
		snprintf(why, whylen, "unreadable fatbin: %s", err);
		return NULL;
	}
	const struct fatbin_entry *e = fatbin__best_ptx(fb, OWN_CC_MAJOR * 10 + OWN_CC_MINOR);
	if (!e)   /* a library's PTX for a newer target only: lowered as any other */
		e = fatbin__lowest_portable_ptx(fb);
	char *ptx = NULL;
	if (!e) {
		char t[16], targets[160] = "";
		size_t n = fatbin__entry_count(fb), used = 0;
		for (size_t i = 0; i < n && used < sizeof(targets) - 20; i++)
			if (fatbin__entry(fb, i)->kind != FATBIN_KIND_PTX) {
				fatbin_entry_target(fatbin__entry(fb, i), t, sizeof(t));
				used += (size_t)snprintf(targets + used, sizeof(targets) - used, "%s%s", used ? " " : "", t);
			}
		snprintf(why, whylen, "no portable PTX: machine code only (%s); gpuprobe's own driver runs PTX (rebuild "
				      "with -arch=sm_XX, or -gencode arch=compute_XX,code=compute_XX)",
			 *targets ? targets : "no entries");
	} else {
		size_t units = 0;
		if (fatbin__linked_ptx(fb, e, &ptx, len, &units, err, sizeof(err)) < 0) {
			*rc = CUDA_ERROR_INVALID_IMAGE;
			snprintf(why, whylen, "the fatbin's PTX: %s", err);
		}
	}
	fatbin__close(fb);
	return ptx;
}

/* The newest PTX ISA whose every instruction the frontend's table (ir_semantics.c) knows: CUDA
 * 13.0's. */
#define OWN_PTX_ISA_KNOWN 90

/* An instruction the PTX ISA does not have (the frontend parses any opcode): NVIDIA's JIT refuses
 * such a module at load, and so do we, rather than at the kernel's first launch. Only for PTX of
 * an ISA version the table covers: a newer module's unknown opcode may be a new instruction,
 * which costs only the kernels that use it (refused at their launch, one line each). 1 with
 * "LINE:COL: ..." in err. */
static int unknown_instruction(const ir_module *ir, char *err, size_t errlen)
{
	unsigned major = 0, minor = 0;
	if (!ir->version || sscanf(ir->version, "%u.%u", &major, &minor) != 2 || major * 10 + minor > OWN_PTX_ISA_KNOWN)
		return 0;
	for (const ir_top *t = ir->first; t; t = t->next)
		if (t->kind == IR_TOP_FUNC)
			for (const ir_stmt *s = t->func.first; s; s = s->next)
				if (s->kind == IR_STMT_INSN && !s->insn.info) {
					snprintf(err, errlen, "%u:%u: '%s' is not a PTX instruction", s->line, s->col,
						 s->insn.opcode);
					return 1;
				}
	return 0;
}

/* Variables and kernels of the parsed module. */
static int scan(struct own_module *m, const ir_module *ir, char *why, size_t whylen)
{
	unsigned nf = 0, nv = 0;
	for (const ir_top *t = ir->first; t; t = t->next) {
		if (t->kind == IR_TOP_FUNC && t->func.is_entry && t->func.has_body)
			nf++;
		if (t->kind == IR_TOP_DECL && t->decl.space &&
		    (!strcmp(t->decl.space, ".global") || !strcmp(t->decl.space, ".const")) &&
		    !(t->decl.linkage && !strcmp(t->decl.linkage, ".extern")))
			nv++;
	}
	m->funcs = calloc(nf ? nf : 1, sizeof(*m->funcs));
	m->vars = calloc(nv ? nv : 1, sizeof(*m->vars));
	if (!m->funcs || !m->vars)
		return snprintf(why, whylen, "out of memory"), -1;
	size_t off = 0;
	for (const ir_top *t = ir->first; t; t = t->next) {
		if (t->kind == IR_TOP_FUNC && t->func.is_entry && t->func.has_body) {
			struct own_func *f = &m->funcs[m->nfuncs++];
			f->magic = OWN_MAGIC_FUNC;
			f->mod = m;
			f->name = strdup(t->func.name);
			pthread_mutex_init(&f->lock, NULL);
			f->nparams = t->func.nparams;
			f->params = calloc(f->nparams ? f->nparams : 1, sizeof(*f->params));
			size_t po = 0;
			for (unsigned i = 0; i < f->nparams; i++) {
				const ir_decl *d = &t->func.params[i];
				size_t a = decl_align(d);
				po = (po + a - 1) / a * a;
				f->params[i].size = decl_bytes(d);
				f->params[i].offset = po;
				po += f->params[i].size;
			}
			f->param_bytes = po;
			for (unsigned i = 0; i < t->func.nperf; i++) {
				unsigned x = 1, y = 1, z = 1;
				if (sscanf(t->func.perf[i], ".maxntid %u , %u , %u", &x, &y, &z) >= 1 ||
				    sscanf(t->func.perf[i], ".maxntid %u", &x) == 1)
					f->maxntid = x * y * z;
			}
		}
		if (t->kind == IR_TOP_DECL && t->decl.space &&
		    (!strcmp(t->decl.space, ".global") || !strcmp(t->decl.space, ".const")) &&
		    !(t->decl.linkage && !strcmp(t->decl.linkage, ".extern"))) {
			struct own_var *v = &m->vars[m->nvars++];
			size_t a = decl_align(&t->decl);
			if (a < 16)
				a = 16;
			off = (off + a - 1) / a * a;
			v->name = strdup(t->decl.name);
			v->size = decl_bytes(&t->decl);
			v->offset = off;
			v->is_const = !strcmp(t->decl.space, ".const");
			v->init = t->decl.init != NULL;
			if (v->init && t->src) {
				v->src = strndup(t->src, t->src_len);
			}
			off += v->size ? v->size : 1;
		}
	}
	m->vars_bytes = off;
	return 0;
}

/* Initialized variables: a module of their declarations and one kernel copying their bytes to
 * their places in the variables' allocation. */
static int init_vars(struct own_module *m, const ir_module *ir, char *why, size_t whylen)
{
	size_t cap = 4096, used = 0;
	char *t = malloc(cap);
	if (!t)
		return -1;
#define PUT(...)                                                                                   \
	do {                                                                                       \
		int n_ = snprintf(NULL, 0, __VA_ARGS__);                                           \
		if (used + (size_t)n_ + 1 > cap) {                                                 \
			cap = (used + (size_t)n_ + 1) * 2;                                         \
			char *nt_ = realloc(t, cap);                                               \
			if (!nt_) {                                                                \
				free(t);                                                           \
				return -1;                                                         \
			}                                                                          \
			t = nt_;                                                                   \
		}                                                                                  \
		used += (size_t)snprintf(t + used, cap - used, __VA_ARGS__);                       \
	} while (0)
	PUT(".version %s\n.target %s\n.address_size 64\n", ir->version ? ir->version : "8.0",
	    ir->target ? ir->target : "sm_90");
	unsigned ninit = 0;
	for (unsigned i = 0; i < m->nvars; i++)
		if (m->vars[i].init && m->vars[i].src) {
			PUT("%s\n", m->vars[i].src);
			ninit++;
		}
	if (!ninit) {
		free(t);
		return 0;
	}
	PUT(".visible .entry __gp_own_init(.param .u64 __gp_dst)\n{\n.reg .u64 %%gd<4>;\n.reg .u16 %%gh<1>;\n"
	    ".reg .pred %%gp<1>;\nld.param.u64 %%gd0, [__gp_dst];\n");
	for (unsigned i = 0; i < m->nvars; i++) {
		const struct own_var *v = &m->vars[i];
		if (!v->init || !v->src || !v->size)
			continue;
		PUT("mov.u64 %%gd1, %s;\nmov.u64 %%gd2, 0;\n$L__gp_init%u:\nadd.u64 %%gd3, %%gd1, %%gd2;\n"
		    "ld.%s.u8 %%gh0, [%%gd3];\nadd.u64 %%gd3, %%gd0, %%gd2;\nst.global.u8 [%%gd3+%zu], %%gh0;\n"
		    "add.u64 %%gd2, %%gd2, 1;\nsetp.lt.u64 %%gp0, %%gd2, %zu;\n@%%gp0 bra $L__gp_init%u;\n",
		    v->name, i, v->is_const ? "const" : "global", v->offset, v->size, i);
	}
	PUT("ret;\n}\n");
#undef PUT
	char err[512];
	ir_module *im = ptx_parse(t, used, err, sizeof(err));
	free(t);
	if (!im)
		return snprintf(why, whylen, "initializers of the module's variables: %s", err), -1;
	gp_bk_prog *p = NULL;
	gp_bk_kernel *k = NULL;
	const struct gp_bk_build bo = {.trap_word = own.trap_word, .grid_workspace = own.grid_workspace};
	int r = own.ops->program_build(own.bk, im, &bo, &p, err, sizeof(err));
	ir_module_free(im);
	if (r == 0)
		r = own.ops->kernel_create(own.bk, p, "__gp_own_init", &k, err, sizeof(err));
	if (r == 0) {
		const unsigned one[3] = {1, 1, 1};
		struct gp_bk_arg a = {&m->vars_addr, 8};
		r = own.ops->launch(own.bk, own.queue, k, one, one, &a, 1, err, sizeof(err));
		if (r == 0)
			r = own.ops->queue_finish(own.bk, own.queue, err, sizeof(err));
	}
	if (k)
		own.ops->kernel_release(own.bk, k);
	if (p)
		own.ops->program_release(own.bk, p);
	if (r < 0)
		snprintf(why, whylen, "initializers of the module's variables: %s", err);
	return r < 0 ? -1 : 0;
}

/* Set by an exit handler registered at the first module load, so after the CUDA runtime's own:
 * handlers run in reverse, so this one runs before the runtime's, which unloads every module.
 * Then the backend's objects are left to the process's end: PoCL freeing a program from an exit
 * handler crashed in LLVM's module destructor (a thrust::inclusive_scan program, radixSortThrust:
 * signal 11 after their results were printed and checked). */
static int exiting;

static void note_exit(void)
{
	__atomic_store_n(&exiting, 1, __ATOMIC_RELAXED);
}

static void register_exit_note(void)
{
	atexit(note_exit);
}

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct own_module *live;   /* newest first */

static void module_free(struct own_module *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&live_lock);
	for (struct own_module **at = &live; *at; at = &(*at)->next)
		if (*at == m) {
			*at = m->next;
			break;
		}
	pthread_mutex_unlock(&live_lock);
	int keep = __atomic_load_n(&exiting, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < m->nfuncs; i++) {
		struct own_func *f = &m->funcs[i];
		if (f->k && !keep)
			own.ops->kernel_release(own.bk, f->k);
		if (f->prog && !keep)
			own.ops->program_release(own.bk, f->prog);
		free(f->name);
		free(f->params);
		f->magic = 0;
	}
	for (unsigned i = 0; i < m->nvars; i++) {
		free(m->vars[i].name);
		free(m->vars[i].src);
	}
	if (m->whole && !keep)
		own.ops->program_release(own.bk, m->whole);
	if (m->vars_addr && !keep)
		own.ops->mem_free(own.bk, m->vars_addr);
	if (m->src)
		ptx_split_src_free(m->src);
	free(m->funcs);
	free(m->vars);
	free(m->ptx);
	m->magic = 0;
	free(m);
}

CUresult own_module_load(CUmodule *out, const void *image, const char *what)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!out || !image)
		return CUDA_ERROR_INVALID_VALUE;
	static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
	pthread_once(&exit_once, register_exit_note);
	unsigned seq = __atomic_add_fetch(&module_seq, 1, __ATOMIC_RELAXED);
	char why[768] = "";
	size_t len = 0;
	char *ptx = image_ptx(image, &len, &rc, why, sizeof(why));
	if (!ptx) {
		shim_msg("own driver: module %u (%s): %s", seq, what, why);
		return rc;
	}
	struct own_module *m = calloc(1, sizeof(*m));
	if (!m) {
		free(ptx);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->magic = OWN_MAGIC_MODULE;
	m->seq = seq;
	m->ptx = ptx;
	m->len = len;
	pthread_mutex_init(&m->lock, NULL);
	char err[512];
	ir_module *ir = ptx_parse(ptx, len, err, sizeof(err));
	if (!ir || unknown_instruction(ir, err, sizeof(err))) {
		shim_msg("own driver: module %u (%s): PTX does not parse: %s", seq, what, err);
		ir_module_free(ir);
		module_free(m);
		return CUDA_ERROR_INVALID_PTX;
	}
	int r = scan(m, ir, why, sizeof(why));
	m->split = r == 0 && ptx_split_precheck(ptx, len, m->whole_why, sizeof(m->whole_why)) == 0;
	if (r == 0 && m->split) {
		m->src = ptx_split_src_new(ptx, len, err, sizeof(err));
		if (!m->src) {
			m->split = 0;
			snprintf(m->whole_why, sizeof(m->whole_why), "%s", err);
		}
	}
	if (r == 0 && m->split && m->nvars) {
		r = own.ops->mem_alloc(own.bk, m->vars_bytes, GP_BK_MEM_DEVICE, &m->vars_addr, err, sizeof(err));
		if (r == 0) {
			unsigned char zero = 0;
			r = own.ops->fill(own.bk, own.queue, m->vars_addr, &zero, 1, m->vars_bytes, err, sizeof(err));
		}
		if (r < 0)
			snprintf(why, sizeof(why), "memory for its variables: %s", err);
		else if (init_vars(m, ir, why, sizeof(why)) < 0)
			r = -1;
	}
	ir_module_free(ir);
	if (r < 0) {
		shim_msg("own driver: module %u (%s): %s", seq, what, why);
		module_free(m);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	shim_log("own driver: module %u (%s): %u kernels, %u variables (%zu bytes)%s%s", seq, what, m->nfuncs,
		 m->nvars, m->vars_bytes, m->split ? "; kernels built at their first launch" : "; built whole: ",
		 m->split ? "" : m->whole_why);
	m->launches = strstr(ptx, "cudaCDP2LaunchDevice") || strstr(ptx, "cudaLaunchDevice");
	pthread_mutex_lock(&live_lock);
	m->next = live;
	live = m;
	pthread_mutex_unlock(&live_lock);
	*out = (CUmodule)m;
	return CUDA_SUCCESS;
}

static struct own_func *func_with_token(struct own_module *m, uint64_t token)
{
	for (unsigned i = 0; i < m->nfuncs; i++)
		if (spirv_kernel_token(m->funcs[i].name) == token)
			return &m->funcs[i];
	return NULL;
}

struct own_func *own_func_by_token(struct own_module *prefer, uint64_t token)
{
	struct own_func *found = prefer ? func_with_token(prefer, token) : NULL;
	pthread_mutex_lock(&live_lock);
	for (struct own_module *m = live; m && !found; m = m->next)
		found = func_with_token(m, token);
	pthread_mutex_unlock(&live_lock);
	return found;
}

/* The device launch queue, made at the first build of a module whose kernels launch kernels. */
static uint64_t launch_queue_for(const struct own_module *m)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	if (!m->launches)
		return 0;
	pthread_mutex_lock(&lock);
	if (!own.launch_queue) {
		char err[256];
		uint64_t q = 0;
		if (own.ops->mem_alloc(own.bk, SPIRV_LAUNCH_QUEUE_BYTES, GP_BK_MEM_HOST, &q, err, sizeof(err)) == 0) {
			memset((void *)(uintptr_t)q, 0, SPIRV_LAUNCH_QUEUE_BYTES);
			__atomic_store_n(&own.launch_queue, q, __ATOMIC_RELEASE);   /* launches read it unlocked */
		} else {
			shim_msg("own driver: no memory for the device launch queue (%s): kernels that launch kernels "
				 "cannot run", err);
		}
	}
	pthread_mutex_unlock(&lock);
	return own.launch_queue;
}

struct own_module *own_module_of(const void *h)
{
	struct own_module *m = (struct own_module *)h;
	return m && m->magic == OWN_MAGIC_MODULE ? m : NULL;
}

struct own_func *own_func_of(const void *h)
{
	struct own_func *f = (struct own_func *)h;
	return f && f->magic == OWN_MAGIC_FUNC ? f : NULL;
}

static int resolve_var(void *user, const char *name, uint64_t *addr)
{
	struct own_module *m = user;
	for (unsigned i = 0; i < m->nvars; i++)
		if (!strcmp(m->vars[i].name, name)) {
			*addr = m->vars_addr + m->vars[i].offset;
			return 0;
		}
	return -1;
}

/* spirv_options.skipped: why the kernel being built was left out (the lowering's own words). */
struct skip_note {
	const char *kernel;   /* as built (an alias for a long name) */
	const char *name;     /* the application's */
	char why[640];
};
static void note_skipped(void *arg, const char *kernel, const char *why)
{
	struct skip_note *n = arg;
	if (!strcmp(kernel, n->kernel))
		snprintf(n->why, sizeof(n->why), "%s", why);
}

/* spirv_options.noted: under GPUPROBE_LOG, what of the kernel being built may run undefined here
 * (a warp collective part of a block may not reach; such kernels do fail: CUB's look-back). */
static void note_noted(void *arg, const char *func, const char *note)
{
	struct skip_note *n = arg;
	shim_log("own driver: kernel %s: %s%s line %s", n->name, strcmp(func, n->kernel) ? func : "",
		 strcmp(func, n->kernel) ? ", " : "", note);
}

/* The kernel's program, built at its first launch. 0, or -1 with f->why said once. */
int own_func_build(struct own_func *f, unsigned dyn_shared)
{
	if (__atomic_load_n(&f->k, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&f->lock);
	if (f->k || f->failed) {
		pthread_mutex_unlock(&f->lock);
		return f->k ? 0 : -1;
	}
	struct own_module *m = f->mod;
	char err[768] = "";
	int r = 0;
	char *text = NULL, *bound = NULL;
	size_t tlen = 0, blen = 0;
	ir_module *ir = NULL;
	uint64_t t0 = own_now_ns();
	if (m->split) {
		struct ptx_split_vars vars = {0};
		r = ptx_split_kernel(m->src, f->name, &text, &tlen, &vars, err, sizeof(err));
		if (r == 0)
			r = ptx_split_bind(text, tlen, &vars, resolve_var, m, &bound, &blen, err, sizeof(err));
		ptx_split_vars_free(&vars);
		if (r == 0)
			ir = ptx_parse(bound, blen, err, sizeof(err));
	} else {
		ir = ptx_parse(m->ptx, m->len, err, sizeof(err));
	}
	if (r == 0 && !ir)
		r = -1;
	/* A long kernel name is built under a short one: PoCL writes files named after kernels, and
	 * C++ template kernels (CUB's) have names longer than a file name may be. Not when the
	 * module names the kernel elsewhere (its address taken: dynamic parallelism). */
	char alias[32];
	const char *text_of = m->split ? bound : m->ptx;
	int uses = 0;
	for (const char *q = text_of; q && (q = strstr(q, f->name)); q += strlen(f->name)) {
		const char *line = q;
		while (line > text_of && line[-1] != '\n')
			line--;
		while (*line == ' ' || *line == '\t')
			line++;
		char next = q[strlen(f->name)];
		int word = !(next == '_' || next == '$' || (next >= '0' && next <= '9') ||
			     ((next | 32) >= 'a' && (next | 32) <= 'z'));   /* not NAME_param_0 */
		uses += word && strncmp(line, "//", 2) != 0;   /* "// .globl NAME" is a comment */
	}
	if (strlen(f->name) > 100 && uses == 1)
		snprintf(alias, sizeof(alias), "__gpk_%u_%u", m->seq, (unsigned)(f - m->funcs));
	else
		snprintf(alias, sizeof(alias), "%s", "");
	for (ir_top *t = ir ? ir->first : NULL; r == 0 && *alias && t; t = t->next)
		if (t->kind == IR_TOP_FUNC && t->func.is_entry && !strcmp(t->func.name, f->name)) {
			t->func.name = ir_strdup(ir, alias);
			break;
		}
	if (own.clock_word && text_of && (strstr(text_of, "%globaltimer") || strstr(text_of, "%clock")))
		own_clock_start();   /* before the kernel can read the word */
	gp_bk_prog *p = NULL;
	char left_out[768] = "";   /* the lowering's summary of what it left out, on success */
	struct skip_note skip = {.kernel = *alias ? alias : f->name, .name = f->name};
	const struct gp_bk_build bo = {.dyn_shared = dyn_shared, .trap_word = own.trap_word,
				       .grid_workspace = own.grid_workspace, .launch_queue = launch_queue_for(m),
				       .clock_word = own.clock_word, .skipped = note_skipped,
				       .skipped_arg = &skip, .noted = note_noted,
				       .check_shared = gp_env_flag(GP_VAR_SHARED_CHECK)};
	if (r == 0)
		r = own.ops->program_build(own.bk, ir, &bo, &p, left_out, sizeof(left_out));
	if (r < 0)
		snprintf(err, sizeof(err), "%s", left_out);
	if (r == 0 && (r = own.ops->kernel_create(own.bk, p, *alias ? alias : f->name, &f->k, err, sizeof(err))) < 0 &&
	    (*skip.why || *left_out))   /* the kernel was left out: say why (its own reason first) */
		snprintf(err, sizeof(err), "left out by the lowering: %s", *skip.why ? skip.why : left_out);
	if (ir)
		ir_module_free(ir);
	free(text);
	free(bound);
	if (r == 0) {
		f->prog = p;
		f->dyn_shared = dyn_shared;
		shim_log("own driver: kernel %s (module %u) built in %.1f ms", f->name, m->seq,
			 (double)(own_now_ns() - t0) / 1e6);
	} else {
		if (p)
			own.ops->program_release(own.bk, p);
		f->failed = 1;
		snprintf(f->why, sizeof(f->why), "%s", err);
		shim_msg("own driver: kernel %s (module %u) cannot run on %s: %s", f->name, m->seq, own.info.name, err);
	}
	pthread_mutex_unlock(&f->lock);
	return r == 0 ? 0 : -1;
}

/* ---- the driver API ---- */

CUresult own_cuModuleLoadData(CUmodule *mod, const void *image) { return own_module_load(mod, image, "cuModuleLoadData"); }

CUresult own_cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned n, CUjit_option *o, void **v)
{
	(void)n, (void)o, (void)v;
	return own_module_load(mod, image, "cuModuleLoadDataEx");
}

CUresult own_cuModuleLoadFatBinary(CUmodule *mod, const void *image)
{
	return own_module_load(mod, image, "cuModuleLoadFatBinary");
}

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = 0;
	fclose(f);
	return b;
}

CUresult own_cuModuleLoad(CUmodule *mod, const char *path)
{
	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	void *b = read_file(path);
	if (!b)
		return CUDA_ERROR_FILE_NOT_FOUND;
	CUresult rc = own_module_load(mod, b, path);
	free(b);   /* own_module_load keeps only the PTX, copied */
	return rc;
}

CUresult own_cuModuleUnload(CUmodule mod)
{
	struct own_module *m = own_module_of(mod);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	own.ops->queue_finish(own.bk, own.queue, NULL, 0);
	module_free(m);
	return CUDA_SUCCESS;
}

CUresult own_cuModuleGetFunction(CUfunction *pf, CUmodule mod, const char *name)
{
	struct own_module *m = own_module_of(mod);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!pf || !name)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < m->nfuncs; i++)
		if (!strcmp(m->funcs[i].name, name)) {
			*pf = (CUfunction)&m->funcs[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

CUresult own_cuModuleGetFunctionCount(unsigned *n, CUmodule mod)
{
	struct own_module *m = own_module_of(mod);
	if (!m || !n)
		return m ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
	*n = m->nfuncs;
	return CUDA_SUCCESS;
}

CUresult own_cuModuleEnumerateFunctions(CUfunction *fs, unsigned n, CUmodule mod)
{
	struct own_module *m = own_module_of(mod);
	if (!m || !fs)
		return m ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
	for (unsigned i = 0; i < n && i < m->nfuncs; i++)
		fs[i] = (CUfunction)&m->funcs[i];
	return CUDA_SUCCESS;
}

static CUresult get_global(CUdeviceptr *dp, size_t *bytes, struct own_module *m, const char *name)
{
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < m->nvars; i++)
		if (!strcmp(m->vars[i].name, name)) {
			if (!m->split) {
				shim_msg("own driver: module %u: variable %s is not reachable from the host (the module "
					 "is built whole: %s)", m->seq, name, m->whole_why);
				return CUDA_ERROR_NOT_SUPPORTED;
			}
			if (dp)
				*dp = m->vars_addr + m->vars[i].offset;
			if (bytes)
				*bytes = m->vars[i].size;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

CUresult own_cuModuleGetGlobal_v2(CUdeviceptr *dp, size_t *bytes, CUmodule mod, const char *name)
{
	return get_global(dp, bytes, own_module_of(mod), name);
}

CUresult own_cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	*mode = CU_MODULE_LAZY_LOADING;
	return CUDA_SUCCESS;
}

/* Libraries: a library is a module (one device), its kernels its functions. */
CUresult own_cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv, unsigned jn,
			       CUlibraryOption *lo, void **lv, unsigned ln)
{
	(void)jo, (void)jv, (void)jn, (void)lo, (void)lv, (void)ln;
	return own_module_load((CUmodule *)lib, code, "cuLibraryLoadData");
}

CUresult own_cuLibraryLoadFromFile(CUlibrary *lib, const char *path, CUjit_option *jo, void **jv, unsigned jn,
				   CUlibraryOption *lo, void **lv, unsigned ln)
{
	(void)jo, (void)jv, (void)jn, (void)lo, (void)lv, (void)ln;
	return own_cuModuleLoad((CUmodule *)lib, path);
}

CUresult own_cuLibraryUnload(CUlibrary lib) { return own_cuModuleUnload((CUmodule)lib); }

CUresult own_cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
	return own_cuModuleGetFunction((CUfunction *)k, (CUmodule)lib, name);
}

CUresult own_cuLibraryGetModule(CUmodule *mod, CUlibrary lib)
{
	if (!own_module_of(lib))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!mod)
		return CUDA_ERROR_INVALID_VALUE;
	*mod = (CUmodule)lib;
	return CUDA_SUCCESS;
}

CUresult own_cuLibraryGetGlobal(CUdeviceptr *dp, size_t *bytes, CUlibrary lib, const char *name)
{
	return get_global(dp, bytes, own_module_of(lib), name);
}

CUresult own_cuLibraryGetManaged(CUdeviceptr *dp, size_t *bytes, CUlibrary lib, const char *name)
{
	return get_global(dp, bytes, own_module_of(lib), name);
}

CUresult own_cuLibraryGetKernelCount(unsigned *n, CUlibrary lib) { return own_cuModuleGetFunctionCount(n, (CUmodule)lib); }

CUresult own_cuLibraryEnumerateKernels(CUkernel *ks, unsigned n, CUlibrary lib)
{
	return own_cuModuleEnumerateFunctions((CUfunction *)ks, n, (CUmodule)lib);
}

CUresult own_cuKernelGetFunction(CUfunction *pf, CUkernel k)
{
	if (!own_func_of(k))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!pf)
		return CUDA_ERROR_INVALID_VALUE;
	*pf = (CUfunction)k;
	return CUDA_SUCCESS;
}

CUresult own_cuKernelGetLibrary(CUlibrary *lib, CUkernel k)
{
	struct own_func *f = own_func_of(k);
	if (!f || !lib)
		return CUDA_ERROR_INVALID_HANDLE;
	*lib = (CUlibrary)f->mod;
	return CUDA_SUCCESS;
}

CUresult own_cuFuncGetModule(CUmodule *mod, CUfunction fn)
{
	struct own_func *f = own_func_of(fn);
	if (!f || !mod)
		return CUDA_ERROR_INVALID_HANDLE;
	*mod = (CUmodule)f->mod;
	return CUDA_SUCCESS;
}

CUresult own_cuFuncGetName(const char **name, CUfunction fn)
{
	struct own_func *f = own_func_of(fn);
	if (!f || !name)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = f->name;
	return CUDA_SUCCESS;
}

CUresult own_cuKernelGetName(const char **name, CUkernel k) { return own_cuFuncGetName(name, (CUfunction)k); }

CUresult own_cuFuncIsLoaded(CUfunctionLoadingState *st, CUfunction fn)
{
	struct own_func *f = own_func_of(fn);
	if (!f || !st)
		return CUDA_ERROR_INVALID_HANDLE;
	*st = CU_FUNCTION_LOADING_STATE_LOADED;
	return CUDA_SUCCESS;
}

CUresult own_cuFuncLoad(CUfunction fn) { return own_func_of(fn) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

static int func_attr(struct own_func *f, CUfunction_attribute a)
{
	int mt = f->maxntid ? (int)f->maxntid : 1024;
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return mt > 1024 ? 1024 : mt;
	case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: return 0;
	case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: return 0;
	case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: return 0;
	case CU_FUNC_ATTRIBUTE_NUM_REGS: return 32;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION: return OWN_CC_MAJOR * 10 + OWN_CC_MINOR;
	case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: return 0;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: return f->max_dyn_shared ? (int)f->max_dyn_shared : 49152;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: return -1;
	default: return 0;
	}
}

CUresult own_cuFuncGetAttribute(int *pi, CUfunction_attribute a, CUfunction fn)
{
	struct own_func *f = own_func_of(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = func_attr(f, a);
	return CUDA_SUCCESS;
}

CUresult own_cuKernelGetAttribute(int *pi, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	(void)d;
	return own_cuFuncGetAttribute(pi, a, (CUfunction)k);
}

CUresult own_cuFuncSetAttribute(CUfunction fn, CUfunction_attribute a, int v)
{
	struct own_func *f = own_func_of(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
		if (v > own_shared_optin())
			return CUDA_ERROR_INVALID_VALUE;   /* as NVIDIA's driver: more than the device's opt-in */
		if (v > 0)
			f->max_dyn_shared = (unsigned)v;
	}
	return CUDA_SUCCESS;
}

CUresult own_cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice d)
{
	(void)d;
	return own_cuFuncSetAttribute((CUfunction)k, a, v);
}

CUresult own_cuFuncSetCacheConfig(CUfunction fn, CUfunc_cache c)
{
	(void)c;
	return own_func_of(fn) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult own_cuKernelSetCacheConfig(CUkernel k, CUfunc_cache c, CUdevice d)
{
	(void)c, (void)d;
	return own_func_of(k) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult own_cuFuncSetSharedMemConfig(CUfunction fn, CUsharedconfig c)
{
	(void)c;
	return own_func_of(fn) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult own_cuFuncGetParamInfo(CUfunction fn, size_t idx, size_t *off, size_t *size)
{
	struct own_func *f = own_func_of(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (idx >= f->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	if (off)
		*off = f->params[idx].offset;
	if (size)
		*size = f->params[idx].size;
	return CUDA_SUCCESS;
}

CUresult own_cuKernelGetParamInfo(CUkernel k, size_t idx, size_t *off, size_t *size)
{
	return own_cuFuncGetParamInfo((CUfunction)k, idx, off, size);
}

/* ---- JIT linking: the own driver keeps PTX as it is (it is lowered at each kernel's first
 * launch), so a link of one PTX input completes with that PTX as its "cubin", which
 * cuModuleLoadData takes like any PTX image. Inputs of other kinds, or several, are refused
 * with one line: there is no linker for them here. ---- */

struct own_link {
	uint32_t magic;
	char *ptx;
	size_t len;
	unsigned inputs;
	float *walltime;
	char *info, *error;
	size_t info_size, error_size;
};

static struct own_link *link_of(CUlinkState s)
{
	struct own_link *l = (struct own_link *)s;
	return l && l->magic == OWN_MAGIC_LINK ? l : NULL;
}

static void link_log(char *buf, size_t size, const char *text)
{
	if (buf && size)
		snprintf(buf, size, "%s", text);
}

CUresult own_cuLinkCreate_v2(unsigned n, CUjit_option *opts, void **vals, CUlinkState *out)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!out || (n && (!opts || !vals)))
		return CUDA_ERROR_INVALID_VALUE;
	struct own_link *l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	l->magic = OWN_MAGIC_LINK;
	for (unsigned i = 0; i < n; i++)
		switch (opts[i]) {
		case CU_JIT_WALL_TIME: l->walltime = vals[i]; break;
		case CU_JIT_INFO_LOG_BUFFER: l->info = vals[i]; break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: l->info_size = (size_t)(uintptr_t)vals[i]; break;
		case CU_JIT_ERROR_LOG_BUFFER: l->error = vals[i]; break;
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: l->error_size = (size_t)(uintptr_t)vals[i]; break;
		default: break;   /* optimization levels, targets: nothing to do before the lowering */
		}
	link_log(l->info, l->info_size, "");
	link_log(l->error, l->error_size, "");
	*out = (CUlinkState)l;
	return CUDA_SUCCESS;
}

CUresult own_cuLinkAddData_v2(CUlinkState s, CUjitInputType type, void *data, size_t size, const char *name,
			      unsigned n, CUjit_option *opts, void **vals)
{
	(void)name, (void)n, (void)opts, (void)vals;
	struct own_link *l = link_of(s);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!data || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (type != CU_JIT_INPUT_PTX) {
		link_log(l->error, l->error_size, "gpuprobe's own driver links PTX inputs only");
		return own_unsupported(-1, "cuLinkAddData with an input other than PTX");
	}
	if (l->inputs++) {
		link_log(l->error, l->error_size, "gpuprobe's own driver links one PTX input");
		return own_unsupported(-1, "cuLinkAddData of a second input (linking PTX modules together)");
	}
	size_t len = strnlen(data, size);
	if (!(l->ptx = malloc(len + 1)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(l->ptx, data, len);
	l->ptx[len] = 0;
	l->len = len;
	return CUDA_SUCCESS;
}

CUresult own_cuLinkAddFile_v2(CUlinkState s, CUjitInputType type, const char *path, unsigned n, CUjit_option *opts,
			      void **vals)
{
	if (!link_of(s))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	char *b = read_file(path);
	if (!b)
		return CUDA_ERROR_FILE_NOT_FOUND;
	CUresult rc = own_cuLinkAddData_v2(s, type, b, strlen(b) + 1, path, n, opts, vals);
	free(b);
	return rc;
}

CUresult own_cuLinkComplete(CUlinkState s, void **out, size_t *size)
{
	struct own_link *l = link_of(s);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!out || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (!l->ptx) {
		link_log(l->error, l->error_size, "nothing to link");
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (l->walltime)
		*l->walltime = 0.0f;
	link_log(l->info, l->info_size, "gpuprobe's own driver: the PTX is kept as it is and lowered at each kernel's "
					 "first launch");
	*out = l->ptx;   /* valid until cuLinkDestroy, as the driver's cubin */
	*size = l->len + 1;
	return CUDA_SUCCESS;
}

CUresult own_cuLinkDestroy(CUlinkState s)
{
	struct own_link *l = link_of(s);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	l->magic = 0;
	free(l->ptx);
	free(l);
	return CUDA_SUCCESS;
}
