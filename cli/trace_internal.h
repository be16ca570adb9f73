/* Private to cli/trace*.c. */
#ifndef GPUPROBE_CLI_TRACE_INTERNAL_H
#define GPUPROBE_CLI_TRACE_INTERNAL_H

#include "cli/trace.h"

#define TR_MAX_FIELDS 32
enum tr_field_kind { TR_F_UINT, TR_F_INT, TR_F_STR };
struct tr_field {
	char name[64];
	uint32_t offset, size, count;   /* bytes; size of one element; elements (1: scalar) */
	enum tr_field_kind kind;
};
struct tr_ring_type {
	char name[64];
	uint32_t size;
	struct tr_field fields[TR_MAX_FIELDS];
	unsigned nfields;
};

struct tr_launch {
	int64_t pid, tid;
	uint64_t id, ts, dur, done;   /* done: 0 when no completion was seen */
	char *kernel;
	char stream[32];              /* as the shim printed the handle */
	uint32_t hash;
	uint64_t grid, flow;          /* blocks in the grid; the flow id */
	uint64_t kbegin, kend;        /* from blocks (0: none) */
	uint64_t nblocks;
	size_t event;                 /* its span */
	json_object *rec;             /* the launch record (the span's arguments) */
};

struct tr_block {   /* a block_begin or block_end record of the blocks tool */
	uint32_t hash, sm, block[3], end;
	uint64_t ns;
	uint64_t ns2;         /* once paired: the end's time */
};

struct tr_done {   /* a kernel_done record */
	int64_t pid;
	uint64_t id, ts;
};

struct tr_ring_rec {   /* a ring record kept until the clock is known */
	char *map;
	unsigned ring;
	uint8_t *data;
	size_t size;
};

struct tr_build {
	char **objects;
	size_t nobjects;
	struct tr_launch *launches;
	size_t nlaunches;
	struct tr_block *blocks;
	size_t nblocks;
	struct tr_done *dones;
	size_t ndones;
	struct tr_ring_rec *recs;
	size_t nrecs;
	json_object *maps;            /* the last map/hist/top record of each map, by name */
	int have_clock, corrected;
	int64_t offset_ns;            /* CLOCK_REALTIME - %globaltimer */
	struct { int64_t pid; uint64_t ts; char *cmd; } *procs;
	size_t nprocs;
	struct { int64_t pid, tid; char *name; } *threads;
	size_t nthreads;
	struct { int64_t pid, tid; uint64_t ts, dur; char *name; int rc; } *apis;
	size_t napis;
	struct { char *map; struct tr_ring_type t; int found; } *types;
	size_t ntypes;
};

/* 1 and the layout when a probe object types the ring map, else 0. */
int tr_ring_type(struct tr_build *b, const char *map, struct tr_ring_type *out);
/* The record's fields as a JSON object. */
json_object *tr_ring_decode(const struct tr_ring_type *t, const uint8_t *data, size_t size);

#endif
