/* Every environment variable gpuprobe reads, through one table (env.c): its name, its type, the
 * values it takes and what it means when unset. Values come from secure_getenv: in a setuid or
 * setgid process none is honoured (no path, no driver to dlopen), and one line says which were
 * ignored. A value the table rejects gives one line, always (not only under GPUPROBE_LOG), once
 * per variable and process, and the variable's fallback is used instead.
 *
 *   if (gp_env_flag(GP_VAR_LOG)) ...
 *   const char *dir = gp_env_str(GP_VAR_DUMP_DIR);        NULL: unset, empty or ignored
 *   uint64_t growth = gp_env_uint(GP_VAR_INLINE_GROWTH);   checked, default when unset or bad
 */
#ifndef GPUPROBE_COMMON_ENV_H
#define GPUPROBE_COMMON_ENV_H

#include <stddef.h>
#include <stdint.h>

enum gp_var {
	GP_VAR_LOG,             /* flag: one line per module and first launch */
	GP_VAR_REAL_LIBCUDA,    /* path: the real driver (dlopened: never in a setuid process) */
	GP_VAR_SHIM,            /* path: where the audit module sends libcuda loads */
	GP_VAR_PROBES,          /* path list (':'): probe objects */
	GP_VAR_CONFIG,          /* path: probe configuration */
	GP_VAR_JSON,            /* path or "-": JSON lines output */
	GP_VAR_RUN_PID,         /* uint: set by `gpuprobe run` to its PID (its child is the app) */
	GP_VAR_INTERVAL,        /* uint 0..86400: print the maps every N seconds */
	GP_VAR_TOP,             /* uint 0..1000000: rows of count tables */
	GP_VAR_DUMP_DIR,        /* path: every module's PTX written there */
	GP_VAR_CACHE,           /* flag (default on): the cubin cache */
	GP_VAR_CACHE_DIR,       /* path: the cubin cache directory */
	GP_VAR_PRECOMPILE,      /* choice check|link|0 */
	GP_VAR_MAP_VA,          /* address: 2 MiB-aligned, the map ranges inside user space */
	GP_VAR_ROUNDTRIP,       /* flag */
	GP_VAR_TEST_FAULT,      /* string (tests): STEP[,STEP...], parsed by shim/fault.c */
	GP_VAR_LAZY,            /* flag (default on): kernels instrumented at their first launch */
	GP_VAR_CLOCK_INTERVAL,  /* uint 0..86400 (default 5): clock offset re-checks, seconds */
	GP_VAR_CLOCK,           /* flag (default on): 0 turns the clock correction off */
	GP_VAR_TEST_SECURE,     /* flag (tests): behave as in a setuid process; only ever stricter */
	GP_VAR_INLINE,          /* flag (default on) */
	GP_VAR_INLINE_GROWTH,   /* uint 1..1000 (default 2): the module-wide inlining budget */
	GP_VAR_SHARED_CHECK,    /* flag (default off): the own driver checks shared-memory accesses
	                         * against the block's window (spirv_options.check_shared) */
	GP_VAR_DEFER,           /* flag (default on): additive memory and basic-block probes count a kernel's
	                         * sites in per-thread accumulators, run at the thread's exit
	                         * (ptx-frontend/instrument.h, gp_inst_probe.deferred) */
	GP_VAR_AGGREGATE,       /* flag (default on): additive memory probes count a basic block's
	                         * like sites with one weighted call */
	GP_VAR_HASH_CACHE,      /* flag (default on): a hash lookup in place remembers where it
	                         * found its key (maps/map_device.c, site cache) */
	GP_VAR_CL_DEVICE,       /* uint: OpenCL device index */
	GP_VAR_CL_NO_IL,        /* flag */
	GP_VAR_SPIRV_NO_LOCKSTEP, /* flag */
	GP_VAR_LLVM_SPIRV,      /* path: llvm-spirv tool */
	GP_VAR_BACKEND,         /* choice auto|nvidia|opencl|levelzero|hip: whose driver the shim is */
	GP_VAR_LAUNCH_SKIP,     /* uint: launches of each kernel to leave uninstrumented first */
	GP_VAR_LAUNCH_COUNT,    /* uint (0: no end): launches to instrument after them */
	GP_VAR_XDG_CACHE_HOME,  /* path: not ours, read the same way (an absolute path or nothing) */
	GP_VAR_HOME,            /* path: not ours, read the same way */
	GP_VAR_REAL_PTXAS,      /* path: the ptxas gpuprobe-ptxas runs (found on PATH when unset) */
	GP_VAR_REAL_NVRTC,      /* path: the libnvrtc.so.13 build/lib's NVRTC shim forwards to */
	GP_VAR_REAL_NVJITLINK,  /* path: the libnvJitLink.so.13 build/lib's shim forwards to */
	GP_VAR_SEGMENT_DIR,     /* path: set by `gpuprobe run`: the shim snapshots maps into a
	                         * segment there (maps/segment.h) and prints nothing itself */
	GP_VAR_CAPTURE,         /* path: set by `gpuprobe run --output FILE.gpt`: ring records go
	                         * there in bulk (maps/gpt.h), not through the segment */
	GP_VAR_CAPTURE_WRITE,   /* choice mapped|pwritev: how the capture's writer writes (maps/gpt_write.c) */
	GP_VAR_CUDADEVRT,       /* "auto" or a path: CUDA's libcudadevrt.a, linked with kernels that
	                         * launch kernels (shim/device_runtime.c; unset: not linked) */
	GP_VAR_LLVM_CACHE,      /* path: lowered PTX by module key (`gpuprobe ptx llvm --cache`): the shim
				 * loads it in place of each module's own, the AMD path's check on NVIDIA */
	GP_VAR_LLVM_LOWER,      /* path: the gpuprobe binary that lowers instrumented modules for it */
	GP_VAR_LLVM_ARCH,       /* string: the sm_XX that lowering targets (default: the device's) */
	GP_VAR_LLVM_GENERIC,    /* flag (default off): amdgcn's target-independent lowerings on nvptx too */
	GP_VAR_LD_LLD,          /* path: the ld.lld that links code objects */
	GP_VAR_HIP_LIB,         /* path: libamdhip64 (default: found by the loader) */
	GP_VAR_HIP_ARCH,        /* string: the AMD processor to lower for (default: the device's) */
	GP_VAR_HIP_COV,         /* choice auto|4|5|6: the code-object version (auto: by HIP's version) */
	GP_VAR_AMDGPU_LOWER,    /* path: the gpuprobe binary the HIP backend lowers modules with */
	GP_VAR__COUNT
};

/* The variable's name ("GPUPROBE_LOG"). */
const char *gp_env_name(enum gp_var v);
/* The value as given, or NULL when unset, empty, or not honoured (setuid/setgid process). */
const char *gp_env_str(enum gp_var v);
/* A flag: 1 for 1/yes/true/on, 0 for 0/no/false/off; its default when unset or bad. */
int gp_env_flag(enum gp_var v);
/* A number (uint or address): its default when unset or bad. */
uint64_t gp_env_uint(enum gp_var v);
/* A number: 0 when unset (*out = default), 1 when set and good, -EINVAL when bad (line said). */
int gp_env_uint_get(enum gp_var v, uint64_t *out);
/* The same without the line: the caller reports err ("NAME=VALUE: expected ...") itself. */
int gp_env_uint_try(enum gp_var v, uint64_t *out, char *err, size_t errlen);
/* A choice: the index of the value in the table's list; the default's (or the fallback's) when
 * unset or bad. */
int gp_env_choice(enum gp_var v);
/* 1 in a setuid/setgid process (AT_SECURE), or under GPUPROBE_TEST_SECURE=1. */
int gp_env_secure(void);

#endif
