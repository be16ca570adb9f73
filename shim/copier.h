/* The copier: the data plane's half of "Two planes" (docs/architecture.md). Under `gpuprobe run`
 * (GPUPROBE_SEGMENT_DIR set) the shim formats nothing: a thread of its own drains the probes'
 * rings and snapshots their maps into this process's segment (maps/segment.h), and the
 * `gpuprobe` process reads and prints it. Map memory is read as the output always read it:
 * host-mapped memory directly, device memory by copies on the allocator's own non-blocking
 * stream (probes_alloc.c), so the copier never waits on the application's streams. It never
 * runs on the application's threads, and never on the launch path. */
#ifndef GPUPROBE_SHIM_COPIER_H
#define GPUPROBE_SHIM_COPIER_H

#include <stddef.h>

struct gp_map_set;
struct gp_snap_name;

/* The kernel names seen so far (malloc'd array; the strings stay the caller's, never freed). */
typedef size_t (*shim_copier_names_fn)(struct gp_snap_name **out);

/* Create this process's segment in dir. 0, or -errno with one line in err (the caller then
 * prints in the application's process, as without gpuprobe run). */
int shim_copier_open(const char *dir, int forked, char *err, size_t errlen);
/* Start copying sets[0..n) (they must outlive the copier). */
int shim_copier_start(struct gp_map_set *const *sets, size_t n, shim_copier_names_fn names);
int shim_copier_active(void);
/* A line of text for gpuprobe to print ("gpuprobe: LINE" on its stderr), from any thread: a host
 * probe's bpf_printk. 0, or -1 when there is no segment (the caller prints it). */
int shim_copier_line(const char *line);
/* At exit, after the application's kernels finished: stop the thread, drain the rings, write the
 * final snapshot. */
void shim_copier_final(void);
/* In the child of a fork: the parent's copier is not ours (nothing of it is touched). */
void shim_copier_forked(void);

#endif
