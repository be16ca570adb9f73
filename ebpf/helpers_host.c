/* Host implementations of the helpers of ebpf/helpers.def, for the interpreter. Every pointer a
 * program passes is checked against its memory regions before it is read or written. The GPU-only
 * helpers (501-513) get host stand-ins (one block, one thread, SM 0) so that device probes can be
 * unit-tested on the host. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ebpf/interp_internal.h"

#define PRINTK_MAX_LINE 512
#define STR_MAX 256

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int map_arg(struct gp_vm *vm, int id, uint64_t handle, void **state)
{
	int mi = gp_vm_map_index(vm, handle);
	if (mi < 0)
		return gp_vm_fail(vm, EINVAL, "helper %d: argument 1 is not a map", id);
	*state = vm->maps[mi];
	return mi;
}

static int mem_arg(struct gp_vm *vm, int id, int argno, uint64_t addr, uint64_t size, bool write, void **p)
{
	*p = gp_vm_mem(vm, addr, size, write);
	if (!*p && size)
		return gp_vm_fail(vm, EFAULT, "helper %d: argument %d: %llu bytes at 0x%llx outside the program's %smemory",
				  id, argno, (unsigned long long)size, (unsigned long long)addr, write ? "writable " : "");
	return 0;
}

static void emit_line(struct gp_vm *vm, const char *line)
{
	if (vm->env && vm->env->on_print)
		vm->env->on_print(vm->env->user, line);
	else
		fprintf(stderr, "%s\n", line);
}

/* Copy a NUL-terminated string the program points to (bounded by its region). */
static int read_str(struct gp_vm *vm, uint64_t addr, char *out, size_t cap)
{
	size_t i = 0;
	for (; i + 1 < cap; i++) {
		const char *c = gp_vm_mem(vm, addr + i, 1, false);
		if (!c)
			return -EFAULT;
		if (!*c)
			break;
		out[i] = *c;
	}
	out[i] = '\0';
	return 0;
}

/* bpf_trace_printk: the kernel's subset of printf (%d %i %u %x %X %ld %lu %lx %lld %llu %llx %p
 * %s %c %%), at most 3 arguments. */
static int trace_printk(struct gp_vm *vm, const uint64_t a[5], uint64_t *ret)
{
	void *p;
	if (a[1] == 0 || a[1] > PRINTK_MAX_LINE)
		return gp_vm_fail(vm, EINVAL, "trace_printk: format size %llu (1..%d)",
				  (unsigned long long)a[1], PRINTK_MAX_LINE);
	if (mem_arg(vm, 6, 1, a[0], a[1], false, &p))
		return -EFAULT;
	const char *fmt = p;
	size_t flen = strnlen(fmt, a[1]);
	char out[PRINTK_MAX_LINE + 1];
	size_t o = 0;
	int argi = 2;
	for (size_t i = 0; i < flen && o < PRINTK_MAX_LINE; i++) {
		if (fmt[i] != '%') {
			out[o++] = fmt[i];
			continue;
		}
		size_t j = i + 1;
		char spec[16] = "%";
		size_t s = 1;
		while (j < flen && strchr("-0123456789", fmt[j]) && s < 8)
			spec[s++] = fmt[j++];
		int longs = 0;
		while (j < flen && fmt[j] == 'l' && longs < 2) {
			longs++;
			j++;
		}
		if (j >= flen) {
			*ret = (uint64_t)-EINVAL;
			return 0;
		}
		char conv = fmt[j];
		char piece[PRINTK_MAX_LINE];
		if (conv == '%') {
			snprintf(piece, sizeof piece, "%%");
		} else {
			if (argi > 4) {
				*ret = (uint64_t)-EINVAL;   /* more conversions than arguments, as in Linux */
				return 0;
			}
			uint64_t v = a[argi++];
			spec[s] = '\0';
			char f[24];
			switch (conv) {
			case 'd': case 'i':
				snprintf(f, sizeof f, "%slld", spec);
				snprintf(piece, sizeof piece, f, longs ? (long long)v : (long long)(int32_t)v);
				break;
			case 'u': case 'x': case 'X':
				snprintf(f, sizeof f, "%sll%c", spec, conv);
				snprintf(piece, sizeof piece, f, longs ? (unsigned long long)v : (unsigned long long)(uint32_t)v);
				break;
			case 'p':
				snprintf(piece, sizeof piece, "0x%llx", (unsigned long long)v);
				break;
			case 'c':
				snprintf(piece, sizeof piece, "%c", (char)v);
				break;
			case 's': {
				char str[STR_MAX];
				if (read_str(vm, v, str, sizeof str))
					snprintf(str, sizeof str, "(efault)");
				snprintf(f, sizeof f, "%ss", spec);
				snprintf(piece, sizeof piece, f, str);
				break;
			}
			default:
				*ret = (uint64_t)-EINVAL;
				return 0;
			}
		}
		size_t pl = strlen(piece);
		if (pl > PRINTK_MAX_LINE - o)
			pl = PRINTK_MAX_LINE - o;
		memcpy(out + o, piece, pl);
		o += pl;
		i = j;
	}
	while (o && out[o - 1] == '\n')
		o--;
	out[o] = '\0';
	emit_line(vm, out);
	*ret = o;
	return 0;
}

static void deliver(struct gp_vm *vm, int mi, void *state, const void *data, size_t size, uint64_t *ret)
{
	if (vm->env && vm->env->on_record) {
		vm->env->on_record(vm->env->user, mi, data, size);
		*ret = 0;
	} else {
		*ret = (uint64_t)(int64_t)gp_host_ringbuf_push(state, data, size);
	}
}

static int u64_outs(struct gp_vm *vm, int id, const uint64_t a[5], const uint64_t v[3], uint64_t *ret)
{
	for (int i = 0; i < 3; i++) {
		void *p;
		if (mem_arg(vm, id, i + 1, a[i], 8, true, &p))
			return -EFAULT;
		memcpy(p, &v[i], 8);
	}
	*ret = 0;
	return 0;
}

int gp_host_helper(struct gp_vm *vm, int id, const uint64_t a[5], uint64_t *ret)
{
	const struct gp_interp_env *env = vm->env;
	if (env && env->helper) {
		int handled = 0;
		uint64_t r = env->helper(env->user, id, a, &handled);
		if (handled) {
			*ret = r;
			return 0;
		}
	}
	void *state = NULL, *key, *value, *data;
	int mi;
	*ret = 0;
	switch (id) {
	case 1: /* map_lookup_elem */
		if ((mi = map_arg(vm, id, a[0], &state)) < 0)
			return mi;
		if (mem_arg(vm, id, 2, a[1], gp_host_map_def(state)->key_size, false, &key))
			return -EFAULT;
		*ret = (uint64_t)(uintptr_t)gp_host_map_lookup(state, key);
		return 0;
	case 2: /* map_update_elem */
		if ((mi = map_arg(vm, id, a[0], &state)) < 0)
			return mi;
		if (mem_arg(vm, id, 2, a[1], gp_host_map_def(state)->key_size, false, &key) ||
		    mem_arg(vm, id, 3, a[2], gp_host_map_def(state)->value_size, false, &value))
			return -EFAULT;
		*ret = (uint64_t)(int64_t)gp_host_map_update(state, key, value, a[3]);
		return 0;
	case 3: /* map_delete_elem */
		if ((mi = map_arg(vm, id, a[0], &state)) < 0)
			return mi;
		if (mem_arg(vm, id, 2, a[1], gp_host_map_def(state)->key_size, false, &key))
			return -EFAULT;
		*ret = (uint64_t)(int64_t)gp_host_map_delete(state, key);
		return 0;
	case 5: /* ktime_get_ns */
		*ret = clock_ns(CLOCK_MONOTONIC);
		return 0;
	case 6:
		return trace_printk(vm, a, ret);
	case 8: /* get_smp_processor_id: the host is one "CPU" */
		*ret = 0;
		return 0;
	case 14: /* get_current_pid_tgid */
		*ret = ((uint64_t)(uint32_t)getpid() << 32) | (uint32_t)syscall(SYS_gettid);
		return 0;
	case 25: /* perf_event_output(ctx, map, flags, data, size) */
		if ((mi = map_arg(vm, id, a[1], &state)) < 0)
			return mi;
		if (mem_arg(vm, id, 4, a[3], a[4], false, &data))
			return -EFAULT;
		deliver(vm, mi, state, data, a[4], ret);
		return 0;
	case 130: /* ringbuf_output(map, data, size, flags) */
		if ((mi = map_arg(vm, id, a[0], &state)) < 0)
			return mi;
		if (mem_arg(vm, id, 2, a[1], a[2], false, &data))
			return -EFAULT;
		deliver(vm, mi, state, data, a[2], ret);
		return 0;
	case 131: { /* ringbuf_reserve(map, size, flags) */
		if ((mi = map_arg(vm, id, a[0], &state)) < 0)
			return mi;
		const struct gp_map *def = gp_host_map_def(state);
		if (a[1] == 0 || a[1] > (def->max_entries ? def->max_entries : 4096u) || a[2])
			return 0;   /* NULL, as Linux for sizes the ring cannot hold */
		for (int i = 0; i < GP_INTERP_MAX_RESERVATIONS; i++)
			if (!vm->resv[i].data) {
				vm->resv[i].data = calloc(1, a[1]);
				if (!vm->resv[i].data)
					return 0;
				vm->resv[i].size = a[1];
				vm->resv[i].map_index = mi;
				*ret = (uint64_t)(uintptr_t)vm->resv[i].data;
				return 0;
			}
		return 0;
	}
	case 132: /* ringbuf_submit(data, flags) */
	case 133: /* ringbuf_discard(data, flags) */
		for (int i = 0; i < GP_INTERP_MAX_RESERVATIONS; i++)
			if (vm->resv[i].data && (uint64_t)(uintptr_t)vm->resv[i].data == a[0]) {
				if (id == 132) {
					uint64_t r;
					deliver(vm, vm->resv[i].map_index, vm->maps[vm->resv[i].map_index],
						vm->resv[i].data, vm->resv[i].size, &r);
				}
				free(vm->resv[i].data);
				vm->resv[i].data = NULL;
				return 0;
			}
		return gp_vm_fail(vm, EINVAL, "helper %d: argument 1 is not a ring buffer reservation", id);
	case 501: { /* puts */
		char str[STR_MAX];
		if (read_str(vm, a[0], str, sizeof str))
			return gp_vm_fail(vm, EFAULT, "helper 501: argument 1 is not a readable string");
		emit_line(vm, str);
		return 0;
	}
	case 502: /* get_globaltimer */
		*ret = clock_ns(CLOCK_REALTIME);
		return 0;
	case 503: /* get_block_idx: one block */
	case 505: /* get_thread_idx: one thread */ {
		const uint64_t v[3] = { 0, 0, 0 };
		return u64_outs(vm, id, a, v, ret);
	}
	case 504: /* get_block_dim */
	case 508: /* get_grid_dim */ {
		const uint64_t v[3] = { 1, 1, 1 };
		return u64_outs(vm, id, a, v, ret);
	}
	case 506: /* membar */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return 0;
	case 507: /* exit: ends the program */
		vm->exited = true;
		return 0;
	case 509: /* get_sm_id */
	case 510: /* get_warp_id */
	case 511: /* get_lane_id */
		return 0;
	case 512: /* get_clock */
		*ret = clock_ns(CLOCK_MONOTONIC_RAW);
		return 0;
	case 513: /* get_active_mask: a lone lane */
		*ret = 1;
		return 0;
	case 515: /* gpu_warp_unique: a warp of one lane holds each value once */
	case 516: /* gpu_warp_count: ... in one lane */
		*ret = 1;
		return 0;
	}
	return gp_vm_fail(vm, EINVAL, "unknown helper %d", id);
}
