/* Words for attach points (cli/cmd_show.c, cmd_list.c, cmd_verify.c). */
#ifndef GPUPROBE_CLI_ATTACH_NAMES_H
#define GPUPROBE_CLI_ATTACH_NAMES_H

#include "ebpf/object.h"

/* "kernel entry", "memory access", "host API entry", ... ("subprogram" for GP_ATTACH_NONE) */
const char *cli_attach_name(enum gp_attach_kind k);
/* What the section's target names: "kernel", "device function", "host API" or NULL. */
const char *cli_attach_target_kind(enum gp_attach_kind k);
/* "hash", "array", "ringbuf", ... (libbpf's names), or "type N". */
const char *cli_map_type_name(uint32_t type, char *buf, size_t cap);
/* How `gpuprobe run` prints a map: "counts", "log2 histogram", "linear histogram (step N)",
 * "kernel table", "API table", "scalar", "tuple", "global data", "ring records", "printk",
 * "not printed"; `by` gets "key type" or "map name" (how it was decided). */
const char *cli_map_print_name(const struct gp_map *m, char *buf, size_t cap, const char **by);

#endif
