/* The host interpreter: exact RFC 9669 semantics, every memory access bounds-checked against the
 * regions the program may reach, BPF-to-BPF calls with their own 512-byte frames, a step limit.
 * Registers hold host addresses for pointers; the checks in gp_vm_mem are what keep a program
 * from touching anything else. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/interp_internal.h"

#ifndef BPF_JMP32
#define BPF_JMP32 0x06
#endif

int gp_vm_fail(struct gp_vm *vm, int code, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (vm->err && vm->errlen)
		snprintf(vm->err, vm->errlen, "insn %zu: %s", vm->pc, msg);
	return -code;
}

static bool in_region(uint64_t addr, uint64_t size, uint64_t base, uint64_t len)
{
	return addr >= base && size <= len && addr - base <= len - size;
}

void *gp_vm_mem(struct gp_vm *vm, uint64_t addr, uint64_t size, bool write)
{
	if (size == 0)
		return NULL;
	/* The stack: frames 0..depth (a callee may use pointers into its callers' frames). */
	uint64_t sbase = (uint64_t)(uintptr_t)vm->stack;
	if (in_region(addr, size, sbase, (uint64_t)(vm->depth + 1) * GP_INTERP_STACK_SIZE))
		return (void *)(uintptr_t)addr;
	if (vm->ctx_size && in_region(addr, size, vm->ctx_base, vm->ctx_size))
		return write && !vm->ctx_writable ? NULL : (void *)(uintptr_t)addr;
	for (size_t i = 0; i < vm->nmaps; i++) {
		if (!vm->maps[i])
			continue;
		uint8_t *base;
		size_t len;
		bool writable;
		gp_host_map_region(vm->maps[i], &base, &len, &writable);
		if (base && in_region(addr, size, (uint64_t)(uintptr_t)base, len))
			return write && !writable ? NULL : (void *)(uintptr_t)addr;
	}
	for (int i = 0; i < GP_INTERP_MAX_RESERVATIONS; i++)
		if (vm->resv[i].data && in_region(addr, size, (uint64_t)(uintptr_t)vm->resv[i].data, vm->resv[i].size))
			return (void *)(uintptr_t)addr;
	if (vm->env && vm->env->scratch &&
	    in_region(addr, size, (uint64_t)(uintptr_t)vm->env->scratch, vm->env->scratch_size))
		return (void *)(uintptr_t)addr;
	return NULL;
}

int gp_interp_map_handle_index(uint64_t handle, size_t nmaps)
{
	if (handle < GP_MAP_HANDLE_BASE || (handle - GP_MAP_HANDLE_BASE) % 16)
		return -1;
	uint64_t i = (handle - GP_MAP_HANDLE_BASE) / 16;
	return i < nmaps ? (int)i : -1;
}

int gp_vm_map_index(const struct gp_vm *vm, uint64_t handle)
{
	if (handle < GP_MAP_HANDLE_BASE || (handle - GP_MAP_HANDLE_BASE) % 16)
		return -1;
	uint64_t i = (handle - GP_MAP_HANDLE_BASE) / 16;
	return i < vm->nmaps ? (int)i : -1;
}

static uint64_t load_sized(const void *p, unsigned size)
{
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t d;
	switch (size) {
	case 1: memcpy(&b, p, 1); return b;
	case 2: memcpy(&h, p, 2); return h;
	case 4: memcpy(&w, p, 4); return w;
	default: memcpy(&d, p, 8); return d;
	}
}

static void store_sized(void *p, unsigned size, uint64_t v)
{
	uint8_t b = (uint8_t)v;
	uint16_t h = (uint16_t)v;
	uint32_t w = (uint32_t)v;
	switch (size) {
	case 1: memcpy(p, &b, 1); break;
	case 2: memcpy(p, &h, 2); break;
	case 4: memcpy(p, &w, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

static unsigned size_bytes(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

static uint64_t sext(uint64_t v, unsigned bits)
{
	if (bits >= 64)
		return v;
	uint64_t m = 1ull << (bits - 1);
	v &= (1ull << bits) - 1;
	return (v ^ m) - m;
}

static uint64_t bswap(uint64_t v, int width)
{
	switch (width) {
	case 16: return __builtin_bswap16((uint16_t)v);
	case 32: return __builtin_bswap32((uint32_t)v);
	default: return __builtin_bswap64(v);
	}
}

/* One ALU operation with exact ISA semantics. is64: ALU64; the result of ALU32 is zero-extended. */
static uint64_t alu(uint8_t op, bool is64, int16_t off, uint64_t dst, uint64_t src)
{
	if (!is64) {
		uint32_t a = (uint32_t)dst, b = (uint32_t)src, r;
		switch (op) {
		case BPF_ADD: r = a + b; break;
		case BPF_SUB: r = a - b; break;
		case BPF_MUL: r = a * b; break;
		case BPF_DIV:
			if (b == 0)
				r = 0;
			else if (off == 1)
				r = ((int32_t)a == INT32_MIN && (int32_t)b == -1) ? a : (uint32_t)((int32_t)a / (int32_t)b);
			else
				r = a / b;
			break;
		case BPF_MOD:
			if (b == 0)
				r = a;
			else if (off == 1)
				r = (int32_t)b == -1 ? 0 : (uint32_t)((int32_t)a % (int32_t)b);
			else
				r = a % b;
			break;
		case BPF_OR: r = a | b; break;
		case BPF_AND: r = a & b; break;
		case BPF_XOR: r = a ^ b; break;
		case BPF_LSH: r = a << (b & 31); break;
		case BPF_RSH: r = a >> (b & 31); break;
		case BPF_ARSH: r = (uint32_t)((int32_t)a >> (b & 31)); break;
		case BPF_NEG: r = (uint32_t)0 - a; break;
		case BPF_MOV: r = off ? (uint32_t)sext(b, (unsigned)off) : b; break;
		default: r = 0; break;
		}
		return r;
	}
	switch (op) {
	case BPF_ADD: return dst + src;
	case BPF_SUB: return dst - src;
	case BPF_MUL: return dst * src;
	case BPF_DIV:
		if (src == 0)
			return 0;
		if (off == 1)
			return ((int64_t)dst == INT64_MIN && (int64_t)src == -1) ? dst
				: (uint64_t)((int64_t)dst / (int64_t)src);
		return dst / src;
	case BPF_MOD:
		if (src == 0)
			return dst;
		if (off == 1)
			return (int64_t)src == -1 ? 0 : (uint64_t)((int64_t)dst % (int64_t)src);
		return dst % src;
	case BPF_OR: return dst | src;
	case BPF_AND: return dst & src;
	case BPF_XOR: return dst ^ src;
	case BPF_LSH: return dst << (src & 63);
	case BPF_RSH: return dst >> (src & 63);
	case BPF_ARSH: return (uint64_t)((int64_t)dst >> (src & 63));
	case BPF_NEG: return (uint64_t)0 - dst;
	case BPF_MOV: return off ? sext(src, (unsigned)off) : src;
	default: return 0;
	}
}

static bool jump_taken(uint8_t op, bool is32, uint64_t a, uint64_t b)
{
	if (is32) {
		uint32_t x = (uint32_t)a, y = (uint32_t)b;
		switch (op) {
		case BPF_JEQ: return x == y;
		case BPF_JNE: return x != y;
		case BPF_JGT: return x > y;
		case BPF_JGE: return x >= y;
		case BPF_JLT: return x < y;
		case BPF_JLE: return x <= y;
		case BPF_JSGT: return (int32_t)x > (int32_t)y;
		case BPF_JSGE: return (int32_t)x >= (int32_t)y;
		case BPF_JSLT: return (int32_t)x < (int32_t)y;
		case BPF_JSLE: return (int32_t)x <= (int32_t)y;
		case BPF_JSET: return (x & y) != 0;
		}
		return false;
	}
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSGT: return (int64_t)a > (int64_t)b;
	case BPF_JSGE: return (int64_t)a >= (int64_t)b;
	case BPF_JSLT: return (int64_t)a < (int64_t)b;
	case BPF_JSLE: return (int64_t)a <= (int64_t)b;
	case BPF_JSET: return (a & b) != 0;
	}
	return false;
}

static int atomic_op(struct gp_vm *vm, const struct bpf_insn *in, uint64_t *reg)
{
	unsigned size = size_bytes(in->code);
	uint64_t addr = reg[in->dst_reg] + (uint64_t)(int64_t)in->off;
	void *p = gp_vm_mem(vm, addr, size, true);
	if (!p)
		return gp_vm_fail(vm, EFAULT, "atomic access of %u bytes at 0x%llx outside the program's memory",
				  size, (unsigned long long)addr);
	uint64_t mask = size == 4 ? 0xffffffffull : ~0ull;
	uint64_t old = load_sized(p, size), src = reg[in->src_reg] & mask, nv;
	switch (in->imm & ~BPF_FETCH) {
	case BPF_ADD: nv = old + src; break;
	case BPF_OR: nv = old | src; break;
	case BPF_AND: nv = old & src; break;
	case BPF_XOR: nv = old ^ src; break;
	case BPF_XCHG & ~BPF_FETCH: nv = src; break;
	case BPF_CMPXCHG & ~BPF_FETCH:
		nv = old == (reg[BPF_REG_0] & mask) ? src : old;
		store_sized(p, size, nv);
		reg[BPF_REG_0] = old;   /* zero-extended for the 32-bit form */
		return 0;
	default:
		return gp_vm_fail(vm, EINVAL, "unknown atomic operation 0x%x", (unsigned)in->imm);
	}
	store_sized(p, size, nv);
	if (in->imm & BPF_FETCH)
		reg[in->src_reg] = old;
	return 0;
}

struct frame {
	uint64_t saved[4];   /* r6..r9 of the caller */
	size_t ret_pc;
};

static int run(struct gp_vm *vm, uint64_t r1, uint64_t r2, uint64_t *ret)
{
	const struct gp_interp_env *env = vm->env;
	uint64_t max_steps = env && env->max_steps ? env->max_steps : GP_INTERP_DEFAULT_STEPS;
	uint64_t reg[11] = { 0 };
	struct frame frames[GP_INTERP_MAX_FRAMES];
	reg[1] = r1;
	reg[2] = r2;
	reg[10] = (uint64_t)(uintptr_t)vm->stack + GP_INTERP_STACK_SIZE;
	size_t pc = 0;
	for (uint64_t steps = 0;; steps++) {
		if (steps >= max_steps)
			return gp_vm_fail(vm, E2BIG, "step limit of %llu instructions reached",
					  (unsigned long long)max_steps);
		if (pc >= vm->ninsns)
			return gp_vm_fail(vm, EINVAL, "execution fell off the end of the program");
		vm->pc = pc;
		const struct bpf_insn *in = &vm->insns[pc];
		uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
		bool x = BPF_SRC(in->code) == BPF_X;
		pc++;
		switch (cls) {
		case BPF_ALU:
		case BPF_ALU64: {
			bool is64 = cls == BPF_ALU64;
			if (op == BPF_END) {
				uint64_t v = reg[in->dst_reg];
				if (is64 || x) /* bswap, or to big endian on this little-endian host */
					v = bswap(v, in->imm);
				reg[in->dst_reg] = in->imm == 64 ? v : v & ((1ull << in->imm) - 1);
				break;
			}
			uint64_t src = x ? reg[in->src_reg]
					 : (is64 ? (uint64_t)(int64_t)in->imm : (uint64_t)(uint32_t)in->imm);
			reg[in->dst_reg] = alu(op, is64, in->off, reg[in->dst_reg], src);
			break;
		}
		case BPF_LD: {
			/* lddw; checked: the second half exists */
			const struct bpf_insn *hi = &vm->insns[pc];
			pc++;
			uint64_t v = (uint64_t)(uint32_t)in->imm | ((uint64_t)(uint32_t)hi->imm << 32);
			if (in->src_reg == BPF_PSEUDO_MAP_FD || in->src_reg == BPF_PSEUDO_MAP_IDX) {
				if ((uint32_t)in->imm >= vm->nmaps)
					return gp_vm_fail(vm, EINVAL, "map index %u out of range (%zu maps)",
							  (unsigned)in->imm, vm->nmaps);
				v = GP_MAP_HANDLE((uint32_t)in->imm);
			} else if (in->src_reg == BPF_PSEUDO_MAP_VALUE || in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE) {
				uint32_t mi = (uint32_t)in->imm;
				if (mi >= vm->nmaps || !vm->maps[mi])
					return gp_vm_fail(vm, EINVAL, "map index %u out of range (%zu maps)", mi, vm->nmaps);
				uint8_t *base;
				size_t len;
				bool writable;
				gp_host_map_region(vm->maps[mi], &base, &len, &writable);
				if ((uint32_t)hi->imm > len)   /* the end is a valid pointer, as in C */
					return gp_vm_fail(vm, EINVAL, "offset %u beyond the %zu bytes of map %u's value",
							  (uint32_t)hi->imm, len, mi);
				v = (uint64_t)(uintptr_t)base + (uint32_t)hi->imm;
			}
			reg[in->dst_reg] = v;
			break;
		}
		case BPF_LDX: {
			unsigned size = size_bytes(in->code);
			uint64_t addr = reg[in->src_reg] + (uint64_t)(int64_t)in->off;
			void *p = gp_vm_mem(vm, addr, size, false);
			if (!p)
				return gp_vm_fail(vm, EFAULT, "read of %u bytes at 0x%llx outside the program's memory",
						  size, (unsigned long long)addr);
			uint64_t v = load_sized(p, size);
			reg[in->dst_reg] = BPF_MODE(in->code) == BPF_MEMSX ? sext(v, size * 8) : v;
			break;
		}
		case BPF_ST:
		case BPF_STX: {
			if (BPF_MODE(in->code) == BPF_ATOMIC) {
				int rc = atomic_op(vm, in, reg);
				if (rc)
					return rc;
				break;
			}
			unsigned size = size_bytes(in->code);
			uint64_t addr = reg[in->dst_reg] + (uint64_t)(int64_t)in->off;
			void *p = gp_vm_mem(vm, addr, size, true);
			if (!p)
				return gp_vm_fail(vm, EFAULT, "write of %u bytes at 0x%llx outside the program's writable memory",
						  size, (unsigned long long)addr);
			store_sized(p, size, cls == BPF_ST ? (uint64_t)(int64_t)in->imm : reg[in->src_reg]);
			break;
		}
		case BPF_JMP:
		case BPF_JMP32: {
			bool is32 = cls == BPF_JMP32;
			if (op == BPF_JA) {
				pc = (size_t)((int64_t)pc + (is32 ? in->imm : in->off));
				break;
			}
			if (op == BPF_EXIT) {
				if (vm->depth == 0) {
					*ret = reg[0];
					return 0;
				}
				struct frame *f = &frames[--vm->depth];
				memcpy(&reg[6], f->saved, sizeof f->saved);
				reg[10] -= GP_INTERP_STACK_SIZE;
				pc = f->ret_pc;
				break;
			}
			if (op == BPF_CALL) {
				if (!x && in->src_reg == BPF_PSEUDO_CALL) {
					if (vm->depth + 1 >= GP_INTERP_MAX_FRAMES)
						return gp_vm_fail(vm, E2BIG, "call depth above %d frames", GP_INTERP_MAX_FRAMES);
					struct frame *f = &frames[vm->depth++];
					memcpy(f->saved, &reg[6], sizeof f->saved);
					f->ret_pc = pc;
					reg[10] += GP_INTERP_STACK_SIZE;
					pc = (size_t)((int64_t)pc + in->imm);
					break;
				}
				uint64_t id = x ? reg[in->dst_reg] : (uint64_t)(int64_t)in->imm;
				if (id > INT32_MAX)
					return gp_vm_fail(vm, EINVAL, "callx to helper id %llu", (unsigned long long)id);
				uint64_t args[5] = { reg[1], reg[2], reg[3], reg[4], reg[5] };
				uint64_t r0 = 0;
				int rc = gp_host_helper(vm, (int)id, args, &r0);
				if (rc)
					return rc;
				if (vm->exited) {
					*ret = 0;
					return 0;
				}
				reg[0] = r0;
				/* r1-r5 are clobbered by calls; the verifier keeps programs from reading them. */
				break;
			}
			uint64_t b = x ? reg[in->src_reg] : (uint64_t)(int64_t)in->imm;
			if (jump_taken(op, is32, reg[in->dst_reg], b))
				pc = (size_t)((int64_t)pc + in->off);
			break;
		}
		default:
			return gp_vm_fail(vm, EINVAL, "unknown instruction class");
		}
	}
}

int gp_interp_run(const struct bpf_insn *insns, size_t n, uint64_t r1, uint64_t r2,
		  const struct gp_interp_env *env, uint64_t *ret, char *err, size_t errlen)
{
	int rc = gp_interp_check(insns, n, err, errlen);
	if (rc)
		return rc;
	struct gp_vm *vm = calloc(1, sizeof *vm);
	if (!vm) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	vm->env = env;
	vm->insns = insns;
	vm->ninsns = n;
	vm->err = err;
	vm->errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
	size_t nmaps = env ? env->nmaps : 0;
	bool own_maps = nmaps && !env->map_state;
	vm->nmaps = nmaps;
	if (nmaps) {
		vm->maps = own_maps ? calloc(nmaps, sizeof *vm->maps) : env->map_state;
		if (!vm->maps) {
			free(vm);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		for (size_t i = 0; i < nmaps; i++) {
			if (vm->maps[i])
				continue;
			char merr[200];
			vm->maps[i] = gp_host_map_create(&env->maps[i], merr, sizeof merr);
			if (!vm->maps[i]) {
				snprintf(err, errlen, "%s", merr);
				rc = -EINVAL;
				goto out;
			}
		}
	}
	if (env && env->ctx_size) {
		vm->ctx_base = r1;
		vm->ctx_size = env->ctx_size;
		vm->ctx_writable = env->ctx_writable;
	} else if (r1) {
		vm->ctx_base = r1;
		vm->ctx_size = r2;
		vm->ctx_writable = true;
	}
	uint64_t r0 = 0;
	rc = run(vm, r1, r2, &r0);
	if (!rc && ret)
		*ret = r0;
out:
	for (int i = 0; i < GP_INTERP_MAX_RESERVATIONS; i++)
		free(vm->resv[i].data);
	if (own_maps) {
		for (size_t i = 0; i < nmaps; i++)
			gp_host_map_free(vm->maps[i]);
		free(vm->maps);
	}
	free(vm);
	return rc;
}
