/* Attach point, target glob and memory filters from a program's ELF section name
 * (the names documented in include/gpuprobe/gpuprobe.h, plus bpftime's kprobe/kretprobe and
 * its host-side uprobe/uretprobe on CUDA runtime or driver functions). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object_internal.h"
#include "ebpf/verifier.h"
#include "gpuprobe/context.h"

static const struct {
	const char *prefix;
	enum gp_attach_kind kind;
	int barrier_after;
} attach_names[] = {
	{ "gpu/entry", GP_ATTACH_KERNEL_ENTRY, 0 },
	{ "gpu/exit", GP_ATTACH_KERNEL_EXIT, 0 },
	{ "gpu/block_begin", GP_ATTACH_BLOCK_BEGIN, 0 },
	{ "gpu/block_end", GP_ATTACH_BLOCK_END, 0 },
	{ "gpu/func_entry", GP_ATTACH_FUNC_ENTRY, 0 },
	{ "gpu/func_exit", GP_ATTACH_FUNC_EXIT, 0 },
	{ "gpu/mem", GP_ATTACH_MEM, 0 },
	{ "gpu/barrier", GP_ATTACH_BARRIER, 0 },
	{ "gpu/barrier_after", GP_ATTACH_BARRIER, 1 },
	{ "gpu/bb", GP_ATTACH_BASIC_BLOCK, 0 },
	{ "host/entry", GP_ATTACH_HOST_ENTRY, 0 },
	{ "host/exit", GP_ATTACH_HOST_EXIT, 0 },
	/* bpftime's GPU conventions: kprobe on a CUDA kernel = its entry, kretprobe = its exit */
	{ "kprobe", GP_ATTACH_KERNEL_ENTRY, 0 },
	{ "kretprobe", GP_ATTACH_KERNEL_EXIT, 0 },
};

static const struct {
	const char *name;
	unsigned bits;
} mem_filter_names[] = {
	{ "global", GP_MEM_GLOBAL }, { "shared", GP_MEM_SHARED }, { "local", GP_MEM_LOCAL },
	{ "generic", GP_MEM_GENERIC }, { "load", GP_MEM_LOAD }, { "store", GP_MEM_STORE },
	{ "atomic", GP_MEM_ATOMIC }, { "all", GP_MEM_ALL_SPACES | GP_MEM_ALL_DIRS },
	{ "plain", GP_MEM_PLAIN }, { "async", GP_MEM_ASYNC }, { "matrix", GP_MEM_MATRIX },
};

/* "global,store" -> bits; a group (spaces, directions) left out means all of it. */
static int parse_mem_filters(const char *s, size_t len, unsigned *out, char *err, size_t errlen)
{
	unsigned bits = 0;
	size_t i = 0;
	while (i <= len) {
		size_t j = i;
		while (j < len && s[j] != ',')
			j++;
		size_t k;
		for (k = 0; k < sizeof mem_filter_names / sizeof mem_filter_names[0]; k++)
			if (strlen(mem_filter_names[k].name) == j - i && strncmp(s + i, mem_filter_names[k].name, j - i) == 0)
				break;
		if (k == sizeof mem_filter_names / sizeof mem_filter_names[0]) {
			snprintf(err, errlen, "unknown memory filter '%.*s' (use global, shared, local, generic, load,"
				 " store, atomic, plain, async, matrix or all, e.g. gpu/mem/global,store/<kernel>)",
				 (int)(j - i), s + i);
			return -EINVAL;
		}
		bits |= mem_filter_names[k].bits;
		i = j + 1;
	}
	if (!(bits & GP_MEM_ALL_SPACES))
		bits |= GP_MEM_ALL_SPACES;
	if (!(bits & GP_MEM_ALL_DIRS))
		bits |= GP_MEM_ALL_DIRS;
	*out = bits;
	return 0;
}

/* bpftime's host half: uprobe/<binary>:<function> (and uretprobe/...). gpuprobe sees the app's
 * CUDA calls where they reach the driver, so a runtime function runs its probe at the driver
 * call(s) the runtime makes for it; the binary path names where a kernel uprobe would attach and
 * is ignored. The program's context is an x86-64 struct pt_regs (struct gp_bpftime_regs), as
 * BPF_KPROBE/PT_REGS_PARMn read it. */
static const struct {
	const char *runtime;      /* CUDA runtime function (its _ptsz form too) */
	const char *driver;       /* glob of the driver calls it makes */
	enum gp_uprobe_abi abi;
} runtime_calls[] = {
	{ "cudaLaunchKernel", "cuLaunchKernel*", GP_UPROBE_RUNTIME_LAUNCH },
	{ "cudaLaunchCooperativeKernel", "cuLaunchCooperativeKernel*", GP_UPROBE_RUNTIME_LAUNCH },
	{ "cudaDeviceSynchronize", "cuCtxSynchronize", GP_UPROBE_DRIVER_ARGS },
	{ "cudaStreamSynchronize", "cuStreamSynchronize", GP_UPROBE_DRIVER_ARGS },
};

#define UPROBE_SUPPORTED "cudaLaunchKernel, cudaLaunchCooperativeKernel, cudaDeviceSynchronize," \
	" cudaStreamSynchronize (also as C++ mangled names and _ptsz forms) or a driver function cu*"

/* The function's own name from an Itanium-mangled one: _Z16cudaLaunchKernelIcE... ->
 * cudaLaunchKernel (bpftime's launchlate probes the cudaLaunchKernel<char> template wrapper
 * of cuda_runtime.h, which calls the C function). Plain names come back as they are. */
static int function_base_name(const char *fn, size_t len, char *out, size_t outlen)
{
	if (len < 3 || strncmp(fn, "_Z", 2) != 0) {
		if (len >= outlen)
			return -1;
		memcpy(out, fn, len);
		out[len] = 0;
		return 0;
	}
	size_t i = 2;
	int nested = 0;
	if (i < len && fn[i] == 'L')
		i++;
	if (i < len && fn[i] == 'N') {   /* _ZN <len><name>... E: the last component */
		nested = 1;
		i++;
	}
	out[0] = 0;
	do {
		size_t n = 0;
		if (i >= len || fn[i] < '1' || fn[i] > '9')
			return out[0] ? 0 : -1;
		while (i < len && fn[i] >= '0' && fn[i] <= '9' && n < 4096)
			n = n * 10 + (size_t)(fn[i++] - '0');
		if (n > len - i || n >= outlen)
			return -1;
		memcpy(out, fn + i, n);
		out[n] = 0;
		i += n;
	} while (nested && i < len && fn[i] != 'E');
	return 0;
}

/* section = "uprobe..." or "uretprobe...": the driver glob and argument layout. */
static int parse_uprobe(const char *section, const char *rest, const char **glob,
			enum gp_uprobe_abi *abi, char *fn_out, size_t fn_len, char *err, size_t errlen)
{
	if (!*rest) {
		snprintf(err, errlen, "section '%s' names no function (bpftime's loader attaches it at run time);"
			 " gpuprobe needs uprobe/<binary>:<function>, with <function> one of " UPROBE_SUPPORTED,
			 section);
		return -EINVAL;
	}
	const char *colon = strrchr(rest, ':');
	const char *fn = colon ? colon + 1 : rest;
	size_t len = strlen(fn);
	if (memchr(fn, '+', len)) {
		snprintf(err, errlen, "section '%s': uprobes at an offset into a function are not supported"
			 " (gpuprobe runs uprobes at CUDA calls, not at instructions)", section);
		return -EINVAL;
	}
	char base[128];
	if (function_base_name(fn, len, base, sizeof base) || !base[0]) {
		snprintf(err, errlen, "section '%s': cannot read a function name in '%s'", section, fn);
		return -EINVAL;
	}
	size_t bl = strlen(base);
	if (bl > 5 && strcmp(base + bl - 5, "_ptsz") == 0)
		base[bl - 5] = 0;
	for (size_t i = 0; i < sizeof runtime_calls / sizeof runtime_calls[0]; i++)
		if (strcmp(base, runtime_calls[i].runtime) == 0) {
			*glob = runtime_calls[i].driver;
			*abi = runtime_calls[i].abi;
			snprintf(fn_out, fn_len, "%s", base);
			return 0;
		}
	if (strncmp(base, "cu", 2) == 0 && strncmp(base, "cuda", 4) != 0 && base[2] >= 'A' && base[2] <= 'Z') {
		*glob = NULL;   /* the driver function itself */
		*abi = GP_UPROBE_DRIVER_ARGS;
		snprintf(fn_out, fn_len, "%s", base);
		return 0;
	}
	snprintf(err, errlen, "section '%s': function '%s' is not supported: gpuprobe runs uprobes at the CUDA"
		 " calls it sees: " UPROBE_SUPPORTED, section, base);
	return -EINVAL;
}

/* "uprobe" or "uretprobe" then end or '/': 1 for uprobe, 2 for uretprobe, 0 otherwise; *rest
 * is what follows the slash. */
static int uprobe_kind(const char *section, const char **rest)
{
	static const char *const names[2] = { "uprobe", "uretprobe" };
	for (int i = 0; i < 2; i++) {
		size_t l = strlen(names[i]);
		if (strncmp(section, names[i], l) == 0 && (section[l] == '\0' || section[l] == '/')) {
			*rest = section[l] ? section + l + 1 : section + l;
			return i + 1;
		}
	}
	return 0;
}

enum gp_uprobe_abi gp_program__uprobe_abi(const struct gp_program *p)
{
	const char *rest, *glob;
	enum gp_uprobe_abi abi;
	char fn[128], err[8];
	if (!p || !p->section || !uprobe_kind(p->section, &rest))
		return GP_UPROBE_NONE;
	return parse_uprobe(p->section, rest, &glob, &abi, fn, sizeof fn, err, sizeof err) ? GP_UPROBE_NONE : abi;
}

uint32_t gp_program__ctx_size(const struct gp_program *p)
{
	if (gp_program__uprobe_abi(p) != GP_UPROBE_NONE)
		return sizeof(struct gp_bpftime_regs);
	return gp_attach_ctx_size(p->attach);
}

int gp_parse_attach(const char *section, enum gp_attach_kind *kind, char **target, unsigned *mem_filter,
		    int *barrier_after, char *err, size_t errlen)
{
	*kind = GP_ATTACH_NONE;
	*target = NULL;
	*mem_filter = 0;
	*barrier_after = 0;
	const char *urest;
	int uk = uprobe_kind(section, &urest);
	if (uk) {
		const char *glob;
		enum gp_uprobe_abi abi;
		char fn[128];
		if (parse_uprobe(section, urest, &glob, &abi, fn, sizeof fn, err, errlen))
			return -EINVAL;
		*kind = uk == 1 ? GP_ATTACH_HOST_ENTRY : GP_ATTACH_HOST_EXIT;
		*target = strdup(glob ? glob : fn);
		if (!*target) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		return 0;
	}
	/* bpftime's kprobe/__memcapture: its pass puts the program before every ld and st of every
	 * kernel (global, local, const, param or generic addresses; no atomics): here the plain
	 * loads and stores of global, local and generic memory, gpu/mem/global,local,generic,load,
	 * store,plain/ (constant and parameter loads are not memory sites here). */
	if (strcmp(section, "kprobe/__memcapture") == 0) {
		*kind = GP_ATTACH_MEM;
		*mem_filter = GP_MEM_GLOBAL | GP_MEM_LOCAL | GP_MEM_GENERIC | GP_MEM_LOAD | GP_MEM_STORE |
			      GP_MEM_PLAIN;
		return 0;
	}
	for (size_t i = 0; i < sizeof attach_names / sizeof attach_names[0]; i++) {
		size_t pl = strlen(attach_names[i].prefix);
		if (strncmp(section, attach_names[i].prefix, pl) != 0 || (section[pl] != '\0' && section[pl] != '/'))
			continue;
		const char *rest = section[pl] ? section + pl + 1 : section + pl;
		*kind = attach_names[i].kind;
		*barrier_after = attach_names[i].barrier_after;
		if (*kind == GP_ATTACH_MEM) {
			const char *slash = strchr(rest, '/');
			size_t flen = slash ? (size_t)(slash - rest) : strlen(rest);
			if (flen == 0)
				*mem_filter = GP_MEM_ALL_SPACES | GP_MEM_ALL_DIRS;
			else if (parse_mem_filters(rest, flen, mem_filter, err, errlen))
				return -EINVAL;
			rest = slash ? slash + 1 : rest + flen;
		}
		if (*rest) {
			*target = strdup(rest);
			if (!*target) {
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
		}
		return 0;
	}
	snprintf(err, errlen, "unknown attach point in section '%s' (expected gpu/entry, gpu/exit, gpu/block_begin,"
		 " gpu/block_end, gpu/func_entry, gpu/func_exit, gpu/mem, gpu/barrier, gpu/barrier_after, gpu/bb,"
		 " host/entry, host/exit, kprobe or kretprobe, then /<glob>)", section);
	return -EINVAL;
}
