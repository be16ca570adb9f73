/* Words for attach points and maps (attach_names.h). */
#include "cli/attach_names.h"
#include "maps/output_internal.h"
#include "maps/map_layout.h"

#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

const char *cli_attach_name(enum gp_attach_kind k)
{
	switch (k) {
	case GP_ATTACH_NONE: return "subprogram";
	case GP_ATTACH_KERNEL_ENTRY: return "kernel entry";
	case GP_ATTACH_KERNEL_EXIT: return "kernel exit";
	case GP_ATTACH_BLOCK_BEGIN: return "block begin";
	case GP_ATTACH_BLOCK_END: return "block end";
	case GP_ATTACH_FUNC_ENTRY: return "device function entry";
	case GP_ATTACH_FUNC_EXIT: return "device function exit";
	case GP_ATTACH_MEM: return "memory access";
	case GP_ATTACH_BARRIER: return "barrier";
	case GP_ATTACH_BASIC_BLOCK: return "basic block";
	case GP_ATTACH_HOST_ENTRY: return "host API entry";
	case GP_ATTACH_HOST_EXIT: return "host API exit";
	}
	return "unknown";
}

const char *cli_attach_target_kind(enum gp_attach_kind k)
{
	switch (k) {
	case GP_ATTACH_NONE: return NULL;
	case GP_ATTACH_FUNC_ENTRY:
	case GP_ATTACH_FUNC_EXIT: return "device function";
	case GP_ATTACH_HOST_ENTRY:
	case GP_ATTACH_HOST_EXIT: return "host API";
	default: return "kernel";
	}
}

const char *cli_map_type_name(uint32_t type, char *buf, size_t cap)
{
	const char *s = type < 1000 ? libbpf_bpf_map_type_str((enum bpf_map_type)type) : NULL;
	if (s)
		return s;
	switch (type) {
	case 1501: return "bpftime gpu hash (1501)";
	case 1502: return "bpftime array (1502)";
	case 1503: return "bpftime gpu array (1503)";
	case 1504: return "bpftime kernel-shared array (1504)";
	case 1512: return "bpftime host per-thread array (1512)";
	case 1513: return "bpftime host array (1513)";
	case 1527: return "bpftime ringbuf (1527)";
	}
	snprintf(buf, cap, "type %u", type);
	return buf;
}

const char *cli_map_print_name(const struct gp_map *m, char *buf, size_t cap, const char **by)
{
	struct gp_map_desc d = {0};
	d.bpf_type = m->type;
	d.kind = m->type == BPF_MAP_TYPE_RINGBUF || m->type == BPF_MAP_TYPE_PERF_EVENT_ARRAY ||
		 m->type == 1527 ? GP_MAP_KIND_RING : 0;
	d.key_size = m->key_size;
	d.value_size = m->value_size;
	uint64_t step = 0;
	enum gp_show s = gp_output_classify(m->name ? m->name : "", d.kind, d.key_size, m->print_as, m->print_step, &step);
	*by = m->print_as != GP_PRINT_BY_NAME ? "key type" : "map name";
	switch (s) {
	case GP_SHOW_NONE: *by = "name"; return "not printed";
	case GP_SHOW_COUNTS: return "counts";
	case GP_SHOW_LOG2: return "log2 histogram";
	case GP_SHOW_LINEAR: snprintf(buf, cap, "linear histogram (step %llu)", (unsigned long long)step); return buf;
	case GP_SHOW_KERNEL: return "kernel table";
	case GP_SHOW_GLOBAL: *by = "section"; return "global data";
	case GP_SHOW_RING: *by = "map type"; return "ring records";
	case GP_SHOW_PRINTK: *by = "name"; return "printk lines";
	case GP_SHOW_API: return "API table";
	case GP_SHOW_SCALAR: return "scalar";
	case GP_SHOW_TUPLE: return "tuple table";
	}
	return "counts";
}
