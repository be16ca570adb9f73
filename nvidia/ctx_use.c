/* gp_ctx_unread_words: a forward data-flow pass over the program that tracks which registers
 * hold the context pointer (r1 at entry, copies of it by mov) and records the bytes each load
 * through such a register reads. Anything it does not follow makes the answer "unknown". */
#include "nvidia/ctx_use.h"

#include "ebpf/object.h"
#include "gpuprobe/context.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CLS(code) ((code) & 0x07)
#define OP(code) ((code) & 0xf0)

static unsigned size_bytes(uint8_t code)
{
	switch (code & 0x18) {
	case BPF_W: return 4;
	case BPF_H: return 2;
	case BPF_B: return 1;
	default: return 8;
	}
}

/* Merge state s into in[j]; 1 when in[j] grew. */
static int flow(uint32_t *in, size_t n, size_t j, uint32_t s)
{
	if (j >= n)
		return 0;
	uint32_t v = in[j] | s | 1u << 16;   /* bit 16: reached */
	if (v == in[j])
		return 0;
	in[j] = v;
	return 1;
}

uint64_t gp_ctx_unread_words(const struct bpf_insn *insns, size_t n)
{
	if (!n)
		return 0;
	uint32_t *in = calloc(n, sizeof(*in));
	if (!in)
		return 0;
	uint64_t read = 0;
	int unknown = 0, changed = 1;
	in[0] = 1u << BPF_REG_1 | 1u << 16;
	while (changed && !unknown) {
		changed = 0;
		for (size_t i = 0; i < n && !unknown; i++) {
			if (!(in[i] & 1u << 16))
				continue;
			const struct bpf_insn *x = &insns[i];
			uint32_t s = in[i] & 0xffff, dst = 1u << x->dst_reg, src = 1u << x->src_reg;
			uint8_t c = x->code;
			size_t next = i + 1;
			switch (CLS(c)) {
			case BPF_LD:
				if (c != (BPF_LD | BPF_IMM | BPF_DW)) {
					unknown = 1;
					break;
				}
				s &= ~dst;
				next = i + 2;
				break;
			case BPF_LDX:
				if (s & src) {
					unsigned sz = size_bytes(c);
					if (x->off < 0 || x->off + sz > 256) {
						unknown = 1;
						break;
					}
					for (unsigned b = (unsigned)x->off / 4; b <= (x->off + sz - 1) / 4; b++)
						read |= 1ull << b;
				}
				s &= ~dst;
				break;
			case BPF_ST:
				break;
			case BPF_STX:
				if (s & src) {
					unknown = 1;   /* the context pointer stored to memory */
					break;
				}
				if ((c & 0xe0) == BPF_ATOMIC) {
					if (x->imm == BPF_CMPXCHG)
						s &= ~1u;
					else if (x->imm & BPF_FETCH)
						s &= ~src;
				}
				break;
			case BPF_ALU:
			case BPF_ALU64:
				if (OP(c) == BPF_MOV && (c & BPF_X) && CLS(c) == BPF_ALU64 && x->off == 0 &&
				    (s & src)) {
					s |= dst;
				} else if (OP(c) == BPF_MOV) {
					s &= ~dst;
				} else if ((s & dst) || ((c & BPF_X) && (s & src))) {
					unknown = 1;   /* arithmetic on the context pointer */
				}
				break;
			case BPF_JMP:
			case BPF_JMP32:
				if (OP(c) == BPF_CALL) {
					/* bpf_gpu_read_param(ctx, ...) reads ctx->params and params_size
					 * (words 0-2 of struct gp_kernel_ctx) */
					if (x->src_reg == 0 && x->imm == 514 && (s & 0x3e) == 1u << BPF_REG_1) {
						read |= 0x7;
						s &= ~0x3fu;
						break;
					}
					/* helpers take at most r1-r5; BPF-to-BPF calls are not followed */
					if (x->src_reg == BPF_PSEUDO_CALL || (s & 0x3e)) {
						unknown = 1;
						break;
					}
					s &= ~0x3fu;
				} else if (OP(c) == BPF_EXIT) {
					next = n;
				} else if (OP(c) == BPF_JA) {
					next = CLS(c) == BPF_JMP ? i + 1 + x->off : i + 1 + x->imm;
				} else {
					changed |= flow(in, n, i + 1 + x->off, s);
				}
				break;
			}
			if (!unknown)
				changed |= flow(in, n, next, s);
		}
	}
	free(in);
	return unknown ? 0 : ~read;
}

static void set_bytes(uint64_t out[2], size_t off, size_t len)
{
	for (size_t b = off; b < off + len && b < 128; b++)
		out[b / 64] |= 1ull << (b % 64);
}

/* The lane-independent fields of struct gp_thread_ids at off. */
static void thread_ids_uniform(uint64_t out[2], size_t off)
{
	set_bytes(out, off + offsetof(struct gp_thread_ids, block_idx), 12);
	set_bytes(out, off + offsetof(struct gp_thread_ids, sm_id), 8);   /* sm_id, warp_id */
	set_bytes(out, off + offsetof(struct gp_thread_ids, kernel_hash), 4);
}

void gp_ctx_uniform_bytes(int attach, uint64_t out[2])
{
	out[0] = out[1] = 0;
	switch (attach) {
	case GP_ATTACH_MEM:
		set_bytes(out, offsetof(struct gp_mem_ctx, size),
			  offsetof(struct gp_mem_ctx, thread) - offsetof(struct gp_mem_ctx, size));
		thread_ids_uniform(out, offsetof(struct gp_mem_ctx, thread));
		break;
	case GP_ATTACH_BASIC_BLOCK:
		set_bytes(out, 0, offsetof(struct gp_bb_ctx, thread));
		thread_ids_uniform(out, offsetof(struct gp_bb_ctx, thread));
		set_bytes(out, offsetof(struct gp_bb_ctx, ninsns), 4);
		break;
	case GP_ATTACH_BARRIER:
		set_bytes(out, 0, offsetof(struct gp_barrier_ctx, thread));
		thread_ids_uniform(out, offsetof(struct gp_barrier_ctx, thread));
		break;
	case GP_ATTACH_KERNEL_ENTRY:
	case GP_ATTACH_KERNEL_EXIT:
		/* the launch's (parameters, grid, block) and the block's, kernel's ids: a counter
		 * keyed by ctx->thread.kernel_hash adds through one address in every lane */
		set_bytes(out, 0, offsetof(struct gp_kernel_ctx, thread));
		thread_ids_uniform(out, offsetof(struct gp_kernel_ctx, thread));
		break;
	case GP_ATTACH_BLOCK_BEGIN:
	case GP_ATTACH_BLOCK_END:
		set_bytes(out, 0, offsetof(struct gp_block_ctx, thread));
		thread_ids_uniform(out, offsetof(struct gp_block_ctx, thread));
		break;
	default:
		break;
	}
}
