/* The lowering of helper 514, bpf_gpu_read_param (lower_param.c), called from lower_call.c. */
#ifndef GPUPROBE_EBPF_LOWER_PARAM_H
#define GPUPROBE_EBPF_LOWER_PARAM_H

#include "ebpf/lower_internal.h"

/* r1 = struct gp_kernel_ctx *, r2 = dst, r3 = size, r4 = offset; r0 = 0 or a negative errno. */
int lower_param_read(struct lower_ctx *c);

#endif
