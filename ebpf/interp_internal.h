/* Shared between the host interpreter (interp.c), its memory checks and the host helpers
 * (helpers_host.c). Not part of the public API. */
#ifndef GPUPROBE_EBPF_INTERP_INTERNAL_H
#define GPUPROBE_EBPF_INTERP_INTERNAL_H

#include "ebpf/interp.h"

#include <stdbool.h>

#define GP_INTERP_MAX_RESERVATIONS 64

/* A map handle (ld_imm64 BPF_PSEUDO_MAP_FD) is a tag, not an address: no memory region holds it,
 * so a program that dereferences one faults. */
#define GP_MAP_HANDLE_BASE 0x6770000000000000ull
#define GP_MAP_HANDLE(i) (GP_MAP_HANDLE_BASE + ((uint64_t)(i) << 4))

struct gp_reservation {
	uint8_t *data;
	size_t size;
	int map_index;
};

struct gp_vm {
	const struct gp_interp_env *env;
	const struct bpf_insn *insns;
	size_t ninsns;
	size_t pc;                          /* of the instruction being executed (for errors) */
	void **maps;                        /* nmaps host map states */
	size_t nmaps;
	uint8_t stack[GP_INTERP_MAX_FRAMES * GP_INTERP_STACK_SIZE];
	int depth;                          /* current frame, 0 = the program's own */
	uint64_t ctx_base, ctx_size;
	bool ctx_writable;
	struct gp_reservation resv[GP_INTERP_MAX_RESERVATIONS];
	bool exited;                        /* the exit helper (507) was called */
	char *err;
	size_t errlen;
};

/* Host pointer for [addr, addr + size) when that range lies inside one region the program may
 * access (write: a writable one); NULL otherwise. */
void *gp_vm_mem(struct gp_vm *vm, uint64_t addr, uint64_t size, bool write);

/* Record an error "insn N: message" and return -code. */
int gp_vm_fail(struct gp_vm *vm, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Map index for a handle, or -1. */
int gp_vm_map_index(const struct gp_vm *vm, uint64_t handle);

/* Run helper `id`. Returns 0 with *ret set, or a negative errno after gp_vm_fail. */
int gp_host_helper(struct gp_vm *vm, int id, const uint64_t args[5], uint64_t *ret);

/* Memory of a host map's values: [*base, *base + *size), and whether programs may write it. */
void gp_host_map_region(void *state, uint8_t **base, size_t *size, bool *writable);
const struct gp_map *gp_host_map_def(void *state);

#endif
