/* The host interpreter: runs eBPF programs on the host with exact ISA semantics (RFC 9669) and
 * the host implementations of the helpers (ebpf/helpers_host.c). Every memory access is
 * bounds-checked against the regions the program may reach (its stack frames, the r1/r2 memory,
 * map values, ring-buffer records): an access outside them stops the program with an error. */
#ifndef GPUPROBE_EBPF_INTERP_H
#define GPUPROBE_EBPF_INTERP_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

/* Newer than Debian 12's <linux/bpf.h> (Linux 6.1): sign-extending loads (BPF_LDX | BPF_MEMSX). */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
/* Record queues (RINGBUF, PERF_EVENT_ARRAY, bpftime's 1527): without env->on_record, records
 * stay in the map; consume calls cb for each in order (a nonzero return stops) and removes them.
 * Returns the number of records consumed or a negative errno. */
int gp_host_ringbuf_push(void *state, const void *data, size_t size);
int gp_host_ringbuf_consume(void *state, int (*cb)(void *user, const void *data, size_t size), void *user);

/* Check the encoding of every instruction (RFC 9669): known opcodes, unused fields zero,
 * registers in range, r10 never written, jumps and calls inside the program, ld_imm64 pairs whole.
 * gp_interp_run does this first. Returns 0 or -EINVAL with "insn N: reason" in err. */
int gp_interp_check(const struct bpf_insn *insns, size_t n, char *err, size_t errlen);

#endif

#include "ebpf/object.h"

struct gp_interp_env {
	const struct gp_map *maps;   /* ld_imm64 imm = map index into this array */
	void **map_state;            /* nmaps entries from gp_host_map_create, or NULL: maps are created
	                              * for the run and freed after it; a NULL entry is created on first
	                              * use and stored back (the caller frees it) */
	size_t nmaps;
	/* Optional override, called before the built-in helper: set *handled = 1 to take the call. */
	uint64_t (*helper)(void *user, int id, const uint64_t args[5], int *handled);
	void *user;
	uint64_t max_steps;          /* 0: default (GP_INTERP_DEFAULT_STEPS) */
	/* Optional: where ringbuf_output/submit and perf_event_output deliver records, and where
	 * trace_printk writes its formatted line (NULL: stderr). */
	void (*on_record)(void *user, int map_index, const void *data, size_t size);
	void (*on_print)(void *user, const char *line);
	/* Bytes readable (and writable when ctx_writable) at r1 for memory bounds checks: r1 points
	 * into [r1, r1 + r2) as the corpus convention (r2 = length) unless ctx_size is nonzero. */
	uint32_t ctx_size;
	int ctx_writable;
	/* Optional: more memory the program may read and write, for helper overrides that hand
	 * out pointers of their own (e.g. copies of device-resident map values). */
	void *scratch;
	size_t scratch_size;
};

/* The map index an ld_imm64 map handle stands for (what helper overrides get in args[0]), or
 * -1 when handle is not one of the nmaps maps. */
int gp_interp_map_handle_index(uint64_t handle, size_t nmaps);

#define GP_INTERP_DEFAULT_STEPS 100000000ull
#define GP_INTERP_STACK_SIZE 512
#define GP_INTERP_MAX_FRAMES 8

/* Run insns with r1, r2 as arguments. r1 is taken as a pointer to r2 readable and writable bytes
 * when r1 != 0 (the corpus convention) unless env->ctx_size says otherwise. Returns 0 and r0 in
 * *ret, or a negative errno (-EFAULT bad memory access, -E2BIG step limit, -EINVAL bad
 * instruction) with one line naming the instruction index in err. */
int gp_interp_run(const struct bpf_insn *insns, size_t n, uint64_t r1, uint64_t r2,
		  const struct gp_interp_env *env, uint64_t *ret, char *err, size_t errlen);

/* Host-side map storage (array, hash, per-CPU variants with one CPU, ring buffers). */
void *gp_host_map_create(const struct gp_map *def, char *err, size_t errlen);
void gp_host_map_free(void *state);
/* Value of an element (array: key is a u32 index), or NULL when absent. */
void *gp_host_map_lookup(void *state, const void *key);
int gp_host_map_update(void *state, const void *key, const void *value, uint64_t flags);
int gp_host_map_delete(void *state, const void *key);
/* Iterate: next key after key (NULL: first); returns 0, or -ENOENT at the end. */
int gp_host_map_next_key(void *state, const void *key, void *next_key);

/* Record queues (RINGBUF, PERF_EVENT_ARRAY, bpftime's 1527): without env->on_record, records
 * stay in the map; consume calls cb for each in order (a nonzero return stops) and removes them.
 * Returns the number of records consumed or a negative errno. */
int gp_host_ringbuf_push(void *state, const void *data, size_t size);
int gp_host_ringbuf_consume(void *state, int (*cb)(void *user, const void *data, size_t size), void *user);

/* Check the encoding of every instruction (RFC 9669): known opcodes, unused fields zero,
 * registers in range, r10 never written, jumps and calls inside the program, ld_imm64 pairs whole.
 * gp_interp_run does this first. Returns 0 or -EINVAL with "insn N: reason" in err. */
int gp_interp_check(const struct bpf_insn *insns, size_t n, char *err, size_t errlen);

#endif
