/* At a module load: a cubin with no PTX whose PTX a JIT compiler's run recorded (jit_capture.h)
 * is instrumented from that PTX. intercept_module.c's load_begin swaps the image for the recorded
 * PTX (with the recorded -O level, register limit and line info as JIT options the application
 * did not give) before shim_module_transform, and swaps the cubin back when nothing was
 * transformed: with per-kernel instrumentation (lazy.h) the application's cubin loads exactly as
 * given and only the kernels' instrumented copies come from the PTX. */
#ifndef GPUPROBE_SHIM_JIT_CAPTURE_LOAD_H
#define GPUPROBE_SHIM_JIT_CAPTURE_LOAD_H

#include "shim/forward.h"
#include "shim/image.h"
#include "shim/registry.h"

#include <stdint.h>

#define JIT_SUBST_MAX 64

struct jit_subst {
	int active;               /* img holds the recorded PTX */
	int extra;                /* ... and JIT options the application did not give */
	int hashed;
	uint8_t hash[32];         /* the cubin's SHA-256 */
	/* the application's image and options, to put back */
	const void *data;
	size_t size;
	enum module_image_kind kind;
	void *owned, *keep_owned;
	unsigned jit_n;
	const int *jit_opts;
	void *const *jit_vals;
	char *ptx;
	int opts[JIT_SUBST_MAX];
	void *vals[JIT_SUBST_MAX];
};

/* With probes on, img a cubin without PTX: 1 when its PTX was recorded (img now that PTX, m's
 * has_ptx and jit_ptx set), else 0 (s->hash filled when hashed). */
int shim_jit_subst(struct shim_image *img, struct shim_module *m, struct jit_subst *s);

/* After the transform: not transformed, img gets the application's cubin and options back;
 * transformed, the instrumented image stays. */
void shim_jit_restore(struct shim_image *img, struct jit_subst *s, int transformed);

/* At the end of the load. */
void shim_jit_subst_free(struct jit_subst *s);

/* The one line for a module without PTX (probes.c): a library's machine code, a cubin no JIT
 * recorded (what a Triton/XLA/NVRTC user does about it, and the first 16 digits of its SHA-256),
 * or an nvcc build without PTX. sm: the device's compute capability. */
void shim_jit_no_ptx(const struct shim_image *img, const struct shim_module *m, unsigned sm);

#endif
