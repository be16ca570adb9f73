/* Context loads of inlined probes read the site's context buffer by name (ctx_fold.c says why).
 * Run after the probes are inlined (ptx-frontend/inline.h). */
#ifndef GPUPROBE_PTX_CTX_FOLD_H
#define GPUPROBE_PTX_CTX_FOLD_H

#include "ptx-frontend/ir.h"

/* Rewrites, in every function holding a site's context buffer (__gp_ctx), the generic loads
 * through that buffer's address into .local loads of it; returns how many it rewrote. */
unsigned gp_ctx_fold_loads(ir_module *m);

#endif
