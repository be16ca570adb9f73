/* The NVIDIA probe pipeline: a set of BPF objects (verified once, maps created once through an
 * allocator) applied to PTX modules: parse, lower the programs that have sites in the module,
 * splice them in (ptx-frontend/instrument.h), print. The instrumented text of each module is
 * cached by the module's hash: map addresses are immediates, and the set is fixed for the life
 * of the gp_nv_probes object, so (module hash, this set) is the whole key.
 * libbpf style: opaque object, gp_nv_probes__verb, negative errno with one line in err. */
#ifndef GPUPROBE_NVIDIA_PROBES_H
#define GPUPROBE_NVIDIA_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "ebpf/object.h"
#include "maps/config.h"
#include "maps/maps.h"
#include "ptx-frontend/instrument.h"

struct gp_nv_probes;

struct gp_nv_probes_opts {
	const struct gp_map_allocator *alloc;  /* where the maps live (NULL: host memory) */
	const struct gp_config *cfg;           /* kernel filters, placement, limits; may be NULL */
	/* Programs the verifier rejects: 0 fails the open (the CLI), 1 skips them after one line
	 * to warn (the shim: never break the app). */
	int skip_rejected;
	/* The target emulates warps with work-group memory (the own driver's SPIR-V backends):
	   no warp collectives in probe code (warp aggregation of counters), since a probe site
	   inside divergent code would run one where not every thread of the block arrives. */
	int no_warp_collectives;
	void (*warn)(void *user, const char *line);
	void *warn_user;
};

/* Open paths[0..n) (BPF objects). cfg_index[i] is the object's index in cfg->probes, or -1
 * (objects given with -p); NULL: all -1. */
int gp_nv_probes__open(const char *const *paths, const int *cfg_index, size_t n,
		       const struct gp_nv_probes_opts *opts, struct gp_nv_probes **out,
		       char *err, size_t errlen);
void gp_nv_probes__close(struct gp_nv_probes *ps);

/* Instrument one PTX module. Returns 0 with *out a malloc'd NUL-terminated PTX (*out_len
 * without the NUL) and stats filled; 0 with *out NULL when no probe has a site in the module;
 * or a negative errno with one line in err (parse, lowering). Thread-safe. */
int gp_nv_probes__instrument(struct gp_nv_probes *ps, const char *ptx, size_t len, char **out,
			     size_t *out_len, struct gp_inst_stats *stats, char *err, size_t errlen);

/* For the report at exit: one line per device program whose section's glob matched no function
 * of any module instrumented so far ("gpu/entry/scale*: no kernel of the application matched;
 * kernels seen: ..."); nothing when no module was instrumented. */
void gp_nv_probes__unmatched(struct gp_nv_probes *ps, void (*line)(void *user, const char *text),
			     void *user);

/* For that report: a kernel whose instrumented code came from a cache, so that no module of it
 * was parsed here; matched against the sections' kernel globs by its name alone. */
void gp_nv_probes__note_kernel(struct gp_nv_probes *ps, const char *name);

/* Device programs count (sections with device attach points). */
size_t gp_nv_probes__device_programs(const struct gp_nv_probes *ps);
/* The device address of the clock words device programs add to %globaltimer (ebpf/lower.h
 * clock_addr: CLOCK_MONOTONIC's offset at +GP_CLOCK_WORD_KTIME, CLOCK_REALTIME's at
 * +GP_CLOCK_WORD_REALTIME), zero until written; 0 when no device program reads a clock or
 * no device memory was given (then device times are %globaltimer itself). */
uint64_t gp_nv_probes__clock_addr(const struct gp_nv_probes *ps);
/* The word helper 14 (bpf_get_current_pid_tgid) reads, 0 if none (its address is in the PTX). */
uint64_t gp_nv_probes__pid_tgid_addr(const struct gp_nv_probes *ps);

/* Map sets, one per object, for printing. */
size_t gp_nv_probes__object_count(const struct gp_nv_probes *ps);
struct gp_map_set *gp_nv_probes__maps(const struct gp_nv_probes *ps, size_t i);

/* Host programs (host/entry, host/exit), run by the shim's host interpreter. */
struct gp_nv_host_prog {
	const struct gp_program *prog;
	struct gp_map_set *maps;
	const struct gp_map *defs;
	size_t nmaps;
};
size_t gp_nv_probes__host_programs(const struct gp_nv_probes *ps,
				   const struct gp_nv_host_prog **out);

#endif
