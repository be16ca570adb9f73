/* The probe configuration file: YAML (read with libyaml), named by `gpuprobe run -c FILE` or by
 * GPUPROBE_CONFIG for the shim. Documented example: examples/config.yaml. Only files that belong
 * to the user (or root) and that neither group nor others may write are read (docs/architecture.md,
 * "Nothing is opened to others"); probe objects it names are held to the same rule.
 *
 *   probes:                       BPF objects, paths relative to the file's folder
 *     - path: counter.bpf.o
 *       kernels: ["vecAdd*"]      only these kernels for this object (globs)
 *   kernels:                      for every object
 *     include: ["*"]              globs on the mangled or the demangled name
 *     exclude: ["*nccl*"]
 *   maps:
 *     counts: {placement: host}   device (default) or host (host-mapped memory)
 *   output:
 *     interval: 5                 seconds between map prints (0: only at exit)
 *     json: out.jsonl             JSON lines to this file ("-": standard output)
 *     top: 10                     rows of count tables
 *   limits:
 *     printk_ring_bytes: 65536    per SM
 *     perthread_slots: 65536      thread slots of per-thread arrays
 *
 * The shim reads this file inside the application, so a hostile or broken file must cost one
 * error line and bounded time and memory, never a crash: YAML keys are unique (a repeated key is
 * an error), and the file's size, nesting and number of values are limited (below).
 */
#ifndef GPUPROBE_MAPS_CONFIG_H
#define GPUPROBE_MAPS_CONFIG_H

#include <stddef.h>

#include "maps/maps.h"

/* Limits on a configuration file. A real one is a few hundred bytes; these stop a hostile one
 * (100,000 nested '[' took libyaml 12.8 s, a 100 MB file 520 MB) with one error. */
#define GP_CONFIG_MAX_BYTES (1u << 20)   /* file size */
#define GP_CONFIG_MAX_DEPTH 32           /* nested lists and mappings */
#define GP_CONFIG_MAX_VALUES 10000       /* values, lists, mappings, aliases; entries made */
#define GP_CONFIG_MAX_PROBES 128         /* objects, the configuration's and -p's together */

struct gp_config_probe {
	char *path;                 /* absolute, or relative to the working directory */
	char **kernels;             /* globs; none: every kernel the global filter selects */
	size_t nkernels;
	unsigned line, col;         /* where the path is written (1-based), for messages */
};

struct gp_config_map {
	char *name;
	enum gp_map_placement placement;
};

struct gp_config {
	struct gp_config_probe *probes;
	size_t nprobes;
	char **include, **exclude;
	size_t ninclude, nexclude;
	struct gp_config_map *maps;
	size_t nmaps;
	unsigned interval_s;        /* 0: print only at exit */
	char *json_path;            /* NULL: text output */
	unsigned json_line, json_col; /* where output.json is written, for messages */
	unsigned top_n;             /* 0: default */
	unsigned printk_ring_bytes; /* 0: default */
	unsigned perthread_slots;   /* 0: default */
};

/* Read and parse path after checking who may write it. Returns 0, or a negative errno with one
 * line in err: "FILE:LINE:COL: message" for content, "FILE: message" for the file itself.
 * Text from the file in a message is escaped (non-printable bytes as \xNN). */
int gp_config__load(const char *path, struct gp_config *cfg, char *err, size_t errlen);
/* Parse text (no file checks); name is used in messages, base_dir resolves relative paths (NULL:
 * keep them as written). */
int gp_config__parse(const char *text, size_t len, const char *name, const char *base_dir,
		     struct gp_config *cfg, char *err, size_t errlen);
void gp_config__free(struct gp_config *cfg);

/* Refuse a file others could have written: not a regular file, owned by another user (not
 * root), or group- or world-writable. Returns 0 or -EPERM/-errno with one line in err. */
int gp_config__check_file(const char *path, const char *what, char *err, size_t errlen);

/* Placement configured for a map (device when not named). */
enum gp_map_placement gp_config__placement(const struct gp_config *cfg, const char *map_name);
/* Whether probe object `probe` (index into cfg->probes, or -1 for objects given with -p) is to
 * be attached to a kernel, by its mangled and (optional) demangled name. */
int gp_config__kernel_selected(const struct gp_config *cfg, int probe, const char *mangled,
			       const char *demangled);

#endif
