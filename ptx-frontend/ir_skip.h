/* The functions a code generator leaves out of a module, and why: what spirv/ and amdgpu/ share
 * so that a construct they cannot lower fails only the kernels that use it. A function that
 * fails to lower is added with its reason; ir_skip__close then adds every function that calls
 * it or takes its address (transitively), and the module is lowered again without them. */
#ifndef GPUPROBE_IR_SKIP_H
#define GPUPROBE_IR_SKIP_H

#include <stdbool.h>
#include <stddef.h>

#include "ptx-frontend/ir.h"

struct ir_skip {
	const char **names;   /* function names (owned by the module) */
	char **why;           /* per name: "LINE: message" or "needs F, not lowered: ..." (owned) */
	size_t n;
};

/* Add name with its reason (copied). */
void ir_skip__add(struct ir_skip *s, const char *name, const char *why);
bool ir_skip__has(const struct ir_skip *s, const char *name);
/* Add every function of m with a body that names (calls, or takes the address of) a function in
 * s, until nothing more is added; each with "needs CALLEE, not lowered: CALLEE's reason". */
void ir_skip__close(struct ir_skip *s, const ir_module *m);
/* The outcome once the last pass stands. When every function with a body, or every kernel, was
 * left out: err is the first reason and the result is -ENOTSUP (the module fails). Otherwise, when
 * something was left out: err is "N function(s) left out: F (why); ..." and skipped (may be NULL)
 * is called once for each kernel among them; the result is 0. Nothing left out: 0, err untouched. */
int ir_skip__report(const struct ir_skip *s, const ir_module *m,
		    void (*skipped)(void *arg, const char *kernel, const char *why), void *arg, char *err,
		    size_t errlen);
void ir_skip__free(struct ir_skip *s);

#endif
