/* Private to maps/output*.c (and cli/attach_names.c, which shows how maps will print). */
#ifndef GPUPROBE_MAPS_OUTPUT_INTERNAL_H
#define GPUPROBE_MAPS_OUTPUT_INTERNAL_H

#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>

#include "maps/output.h"
#include "maps/maps.h"

struct gp_output {
	struct gp_output_opts o;
	struct gp_map_set **sets;
	size_t nsets;
	uint64_t start_ms, last_print_ms;
	pthread_mutex_t lock;
	pthread_t thread;
	int thread_running;
	unsigned poll_ms;
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cond;
	int stop;
	/* kernel names by gp_name_hash, open addressing (capacity a power of two) */
	struct gp_kname { uint32_t hash; char *name; } *knames;
	size_t nknames, kcap;
	/* the snapshot prints are made from: gp_output__use_snapshot's, or one of the sets taken
	 * for this print (fed: the former) */
	struct gp_snap snap;
	int fed;
	struct gp_output_types *types;   /* typed ring records (output_types.c), or NULL */
};

/* A ring map's record type from the objects given to gp_output__add_types, or NULL: its
 * records print as words (caller holds o->lock). */
struct gp_gpt_map_info;
const struct gp_gpt_map_info *gp_output_type(struct gp_output *o, const char *map);
void gp_output_types_free(struct gp_output_types *t);

/* The name given to gp_output__add_kernel_name for this hash, or NULL (caller holds o->lock). */
const char *gp_output_kernel_name(struct gp_output *o, uint64_t id);

/* How a map prints (include/gpuprobe/output.h): by the key type its BTF declares (print_as,
 * enum gp_map_print of ebpf/object.h, with print_step: a linear histogram's width, a tuple's
 * layout in *step too), else by its name. */
enum gp_show {
	GP_SHOW_NONE, GP_SHOW_COUNTS, GP_SHOW_LOG2, GP_SHOW_LINEAR, GP_SHOW_KERNEL, GP_SHOW_GLOBAL,
	GP_SHOW_RING, GP_SHOW_PRINTK, GP_SHOW_API, GP_SHOW_SCALAR, GP_SHOW_TUPLE,
};
enum gp_show gp_output_classify(const char *name, uint32_t kind, uint32_t key_size, uint32_t print_as,
				uint64_t print_step, uint64_t *step);

uint64_t gp_output_now(struct gp_output *o);
/* Print one JSON object as a line, and release it. */
void gp_output_json(struct gp_output *o, json_object *j);
/* The clock line of the final report, when the snapshot has one (output_clock.c; caller holds
 * o->lock). */
void gp_output_print_clock(struct gp_output *o, const struct gp_output_clock *c);
/* Print one map of o->snap (one of the GP_SHOW_* table kinds); time in seconds for JSON. */
void gp_output_print_map(struct gp_output *o, const struct gp_snap_map *m, double time);

#endif
