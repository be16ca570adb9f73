/* A module image on its way to the driver: what it is, whether it holds PTX, how many kernels,
 * and (GPUPROBE_DUMP_DIR) its PTX written out. */
#ifndef GPUPROBE_SHIM_IMAGE_H
#define GPUPROBE_SHIM_IMAGE_H

#include <stddef.h>

#include "ptx-frontend/fatbin.h"
#include "shim/registry.h"

struct shim_image {
	const char *api;           /* the intercepted call */
	const char *path;          /* file loads: the file; NULL for images in memory */
	const void *data;          /* the bytes (read from path for file loads) */
	size_t size;               /* SIZE_MAX when the API gave no size */
	enum module_image_kind kind;
	void *owned;               /* buffer the shim allocated (file contents, transformed image) */
	/* The application's JIT options for this load (cuModuleLoadDataEx, cuLibraryLoad*): the
	 * shim's own compile of an instrumented module uses them too. */
	unsigned jit_n;
	const int *jit_opts;       /* CUjit_option values */
	void *const *jit_vals;
};

/* Set from the environment at load time; NULL when unset. */
extern const char *shim_dump_dir;

/* Fill img->data/kind (reading img->path when set). 0, or negative errno (then load as given). */
int shim_image_open(struct shim_image *img);

/* Fill m (has_ptx, kernels) from the image and describe it in desc; when logging, count its
 * kernels; when dumping, write its PTX to shim_dump_dir. quick: entry headers only (no
 * decompression, no dump). Never fails: an image it cannot read counts as "no PTX". */
void shim_image_inspect(const struct shim_image *img, struct shim_module *m, char *desc,
			size_t desclen, int quick);

void shim_image_close(struct shim_image *img);

/* With GPUPROBE_DUMP_DIR: PTX of module m written there as module-NNNN<suffix>.ptx (the
 * instrumented kernels of lazy.c). */
void shim_image_dump(const struct shim_module *m, const char *suffix, const void *data, size_t len);

#endif
