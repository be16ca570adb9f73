/* The shim's side of JIT capture (jit_capture_load.h): a cubin without PTX is looked up by its
 * SHA-256 among the records of gpuprobe-ptxas, NVRTC and nvJitLink (jit_capture.h). */
#include "shim/jit_capture_load.h"
#include "shim/jit_capture.h"
#include "shim/log.h"
#include "shim/probes.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cubin's size when the API gave none: from its ELF header (module_image_size). */
static int cubin_size(const struct shim_image *img, size_t *size)
{
	*size = img->size;
	if (*size != SIZE_MAX)
		return 0;
	return module_image_size(img->data, img->kind, size) ? -1 : 0;
}

static int has_opt(const struct shim_image *img, int id)
{
	for (unsigned i = 0; img->jit_opts && i < img->jit_n; i++)
		if (img->jit_opts[i] == id)
			return 1;
	return 0;
}

int shim_jit_subst(struct shim_image *img, struct shim_module *m, struct jit_subst *s)
{
	memset(s, 0, sizeof(*s));
	if (!shim_probes_enabled || img->kind != MODULE_IMAGE_CUBIN || m->has_ptx || !img->data)
		return 0;
	size_t size;
	if (cubin_size(img, &size))
		return 0;
	jit_capture_hash(img->data, size, s->hash);
	s->hashed = 1;
	struct jit_record r;
	char path[4200] = "";
	int rc = jit_capture_get(s->hash, &r, path, sizeof(path));
	if (rc) {
		if (rc == -EBADMSG || rc == -EPERM || rc == -ELOOP)
			shim_msg("module %u: PTX record %s %s: ignored", m->seq, path,
				 rc == -EBADMSG ? "does not check out" : rc == -EPERM
				 ? "belongs to another user" : "is a symbolic link");
		return 0;
	}
	if (r.relocatable) {
		shim_log("module %u: PTX recorded by %s for a relocatable cubin (%s): not used",
			 m->seq, r.source, path);
		jit_record_free(&r);
		return 0;
	}
	/* The recorded options that change code, as JIT options the application did not give. */
	unsigned n = 0;
	for (unsigned i = 0; img->jit_opts && i < img->jit_n && n < JIT_SUBST_MAX - 3; i++) {
		s->opts[n] = img->jit_opts[i];
		s->vals[n++] = img->jit_vals[i];
	}
	char added[128] = "";
	size_t al = 0;
	if (r.opt >= 0 && r.opt <= 4 && !has_opt(img, CU_JIT_OPTIMIZATION_LEVEL)) {
		s->opts[n] = CU_JIT_OPTIMIZATION_LEVEL;
		s->vals[n++] = (void *)(uintptr_t)r.opt;
		al += snprintf(added + al, sizeof(added) - al, " -O%d", r.opt);
	}
	if (r.maxrregcount > 0 && !has_opt(img, CU_JIT_MAX_REGISTERS)) {
		s->opts[n] = CU_JIT_MAX_REGISTERS;
		s->vals[n++] = (void *)(uintptr_t)r.maxrregcount;
		al += snprintf(added + al, sizeof(added) - al, " maxrregcount %d", r.maxrregcount);
	}
	if (r.lineinfo && !has_opt(img, CU_JIT_GENERATE_LINE_INFO)) {
		s->opts[n] = CU_JIT_GENERATE_LINE_INFO;
		s->vals[n++] = (void *)(uintptr_t)1;
		al += snprintf(added + al, sizeof(added) - al, " lineinfo");
	}
	s->active = 1;
	s->extra = n != img->jit_n;
	s->data = img->data;
	s->size = img->size;
	s->kind = img->kind;
	s->owned = img->owned;
	s->jit_n = img->jit_n;
	s->jit_opts = img->jit_opts;
	s->jit_vals = img->jit_vals;
	s->ptx = r.ptx;
	r.ptx = NULL;
	img->owned = s->ptx;
	img->data = s->ptx;
	img->size = r.ptx_len + 1;
	img->kind = MODULE_IMAGE_PTX;
	img->jit_n = n;
	img->jit_opts = s->opts;
	img->jit_vals = s->vals;
	m->has_ptx = 1;
	m->jit_ptx = 1;
	shim_log("module %u: a cubin whose PTX %s recorded (%s; arch %s; JIT options added:%s): "
		 "its kernels are instrumented from that PTX", m->seq, r.source, path,
		 r.arch[0] ? r.arch : "?", al ? added : " none");
	jit_record_free(&r);
	return 1;
}

void shim_jit_restore(struct shim_image *img, struct jit_subst *s, int transformed)
{
	if (!s->active)
		return;
	if (transformed) {
		/* The instrumented image replaced the PTX (transform freed it); the original's own
		 * buffer (a file's contents) is ours to free at the end. */
		s->keep_owned = s->owned;
		return;
	}
	if (img->owned == s->ptx)
		free(s->ptx);
	else
		free(img->owned);
	img->owned = s->owned;
	img->data = s->data;
	img->size = s->size;
	img->kind = s->kind;
	img->jit_n = s->jit_n;
	img->jit_opts = s->jit_opts;
	img->jit_vals = s->jit_vals;
	s->active = 0;
	s->extra = 0;
}

void shim_jit_subst_free(struct jit_subst *s)
{
	free(s->keep_owned);
	s->keep_owned = NULL;
}

/* The shared object an image lives in (its fatbin or cubin compiled into a library), or NULL
 * for the main program, the heap or a file the application read. */
static const char *image_library(const void *data)
{
	Dl_info di;
	struct link_map *lm = NULL;
	if (!data || !dladdr1(data, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_name ||
	    !lm->l_name[0])
		return NULL;
	return lm->l_name;
}

/* NVIDIA's libraries that load machine code of their own at run time (cuBLAS's and cuDNN's
 * kernels, decompressed onto the heap, then cuLibraryLoadData): no PTX exists for any JIT to
 * have recorded, so the advice for Triton and NVRTC users would mislead. Matched on the file
 * name's start. Not libcudart: it loads the application's own images on the application's behalf. */
static const char *const nvidia_libraries[] = {
	"libcublas", "libcudnn", "libcufft", "libcusparse", "libcusolver", "libcurand", "libnccl",
	"libnvjpeg", "libnpp", "libcutensor", "libcudss", "libnvshmem", "libnvinfer",
};

static int is_nvidia_library(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(nvidia_libraries) / sizeof(nvidia_libraries[0]); i++)
		if (!strncmp(base, nvidia_libraries[i], strlen(nvidia_libraries[i])))
			return 1;
	return 0;
}

void shim_jit_no_ptx(const struct shim_image *img, const struct shim_module *m, unsigned sm)
{
	const char *lib = image_library(img->data);
	const char *by = m->caller ? image_library(m->caller) : NULL;   /* who made the call */
	char where[4300];
	snprintf(where, sizeof(where), "%s%s%s", m->api, m->origin ? " " : "",
		 m->origin ? m->origin : "");
	if (lib) {
		shim_msg("module %u (%s, in %s): the library ships machine code only (no PTX for "
			 "this GPU): its kernels run without probes", m->seq, where, lib);
		return;
	}
	if (by && is_nvidia_library(by)) {
		shim_msg("module %u (%s by %s): machine code that NVIDIA's library loads at run time (no PTX "
			 "exists for it): its kernels run without probes", m->seq, where, by);
		return;
	}
	if (by)   /* (truncated, not overrun, if the names are long) */
		snprintf(where + strlen(where), sizeof(where) - strlen(where), " by %s", by);
	if (img->kind == MODULE_IMAGE_CUBIN) {
		char key[20] = "";
		size_t size;
		uint8_t h[32];
		if (!cubin_size(img, &size)) {
			jit_capture_hash(img->data, size, h);
			for (int i = 0; i < 8; i++)
				snprintf(key + 2 * i, 3, "%02x", h[i]);
		}
		shim_msg("module %u (%s): a cubin with no PTX recorded for it%s%s%s: its kernels run "
			 "without probes. A cubin that Triton, XLA, NVRTC, nvJitLink or CuPy's nvcc compiled gets "
			 "probes when the compiler runs under 'gpuprobe run' (it sets TRITON_PTXAS_PATH "
			 "to gpuprobe-ptxas, puts gpuprobe's ptxas first on PATH for XLA, sets NVCC to "
			 "gpuprobe-nvcc for CuPy's nvcc and interposes libnvrtc and libnvJitLink; a "
			 "compiler cache such as ~/.triton/cache or ~/.cupy/kernel_cache may hold "
			 "cubins compiled before: clear it once); an nvcc build needs "
			 "-gencode arch=compute_%u,code=compute_%u to embed PTX", m->seq, where,
			 key[0] ? " (SHA-256 " : "", key, key[0] ? "...)" : "", sm, sm);
		return;
	}
	shim_msg("module %u (%s): no PTX for this GPU, its kernels run without probes; rebuild "
		 "with -gencode arch=compute_%u,code=compute_%u (or -arch=sm_%u) to embed PTX",
		 m->seq, where, sm, sm, sm);
}
