/* Attach point, target glob and memory filters from a program's ELF section name
 * (the names documented in include/gpuprobe/gpuprobe.h, plus bpftime's kprobe/kretprobe). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object_internal.h"

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
				 " store, atomic or all, e.g. gpu/mem/global,store/<kernel>)", (int)(j - i), s + i);
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

int gp_parse_attach(const char *section, enum gp_attach_kind *kind, char **target, unsigned *mem_filter,
		    int *barrier_after, char *err, size_t errlen)
{
	*kind = GP_ATTACH_NONE;
	*target = NULL;
	*mem_filter = 0;
	*barrier_after = 0;
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
