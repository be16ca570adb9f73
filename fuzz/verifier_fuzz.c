/* libFuzzer target for the verifier: any bytes become a program for gp_verify, which must return
 * 0 or a negative errno with a log whose last line says why, never crash, never hang (bounded
 * budget), never read outside the instructions (ASan/UBSan).
 * Input: byte 0 = flags (bit 0: structured mode, bits 1-4: attach kind, bit 5: verbose log),
 * byte 1 = context size in 8-byte units (0..255) for the generic attach, the rest = instructions,
 * 8 bytes each. Structured mode keeps opcodes, registers and jump offsets mostly valid so that
 * inputs reach path exploration instead of the static checks.
 * Soundness oracle: a program verified in the generic mode runs on the host interpreter, whose
 * memory accesses are bounds-checked: a fault or a run past the step limit after the verifier
 * said "safe" is a verifier bug (abort).
 * Seeds: tests/verifier/fuzz-seeds/verifier/ (the conformance corpus, programs of the unit tests). */
#include "ebpf/interp.h"
#include "ebpf/verifier.h"

#include <stdio.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INSNS 1024

static const uint8_t valid_codes[] = {
	/* ALU64 / ALU, K and X */
	0x07, 0x0f, 0x17, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x47, 0x4f, 0x57, 0x5f, 0x67, 0x6f, 0x77, 0x7f,
	0x87, 0x97, 0x9f, 0xa7, 0xaf, 0xb7, 0xbf, 0xc7, 0xcf, 0xd4, 0xdc, 0xd7,
	0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c, 0x44, 0x4c, 0x54, 0x5c, 0x64, 0x6c, 0x74, 0x7c,
	0x84, 0x94, 0x9c, 0xa4, 0xac, 0xb4, 0xbc, 0xc4, 0xcc,
	/* loads, stores, atomics, ld_imm64 */
	0x61, 0x69, 0x71, 0x79, 0x81, 0x89, 0x91, 0x62, 0x6a, 0x72, 0x7a, 0x63, 0x6b, 0x73, 0x7b,
	0xc3, 0xdb, 0x18,
	/* jumps */
	0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d, 0x55, 0x5d, 0x65, 0x6d, 0x75, 0x7d,
	0xa5, 0xad, 0xb5, 0xbd, 0xc5, 0xcd, 0xd5, 0xdd, 0x16, 0x1e, 0x26, 0x2e, 0x56, 0x5e, 0xa6, 0xae,
	0x85, 0x95,
};

static const struct gp_map maps[] = {
	{.name = "array", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 16, .max_entries = 4},
	{.name = "hash", .type = BPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8, .max_entries = 64},
	{.name = "ring", .type = BPF_MAP_TYPE_RINGBUF, .key_size = 0, .value_size = 0, .max_entries = 4096},
	{.name = ".rodata", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1,
	 .initial = "hello\0\0", .initial_size = 8, .readonly = 1},
};
#define NMAPS (sizeof(maps) / sizeof(maps[0]))

static const int helper_ids[] = {1, 2, 3, 5, 6, 8, 14, 25, 130, 131, 132, 133, 501, 502, 503, 505,
				 509, 512, 9999};
static const int atomic_ops[] = {0x00, 0x01, 0x40, 0x41, 0x50, 0x51, 0xa0, 0xa1, 0xe1, 0xf1};

static void structure(struct bpf_insn *v, size_t n, const uint8_t *raw)
{
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = raw + 8 * i;
		struct bpf_insn *in = &v[i];
		in->code = valid_codes[b[0] % sizeof(valid_codes)];
		in->dst_reg = b[1] % 11;
		in->src_reg = (b[1] >> 4) % 11;
		int16_t off = (int16_t)(b[2] | (b[3] << 8));
		int32_t imm = (int32_t)(b[4] | (b[5] << 8) | ((uint32_t)b[6] << 16) | ((uint32_t)b[7] << 24));
		uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
		in->off = 0;
		in->imm = imm;
		if (cls == BPF_ALU || cls == BPF_ALU64) {
			if (BPF_SRC(in->code) == BPF_K)
				in->src_reg = 0;
			else
				in->imm = 0;
			if (op == BPF_END)
				in->imm = 16 << (b[4] % 3), in->src_reg = 0;
			if (op == BPF_NEG)
				in->src_reg = 0, in->imm = 0;
			if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
				in->imm &= 63;
		} else if (cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) {
			in->off = (int16_t)(off % 64);
			if (cls == BPF_LDX || (cls == BPF_STX && BPF_MODE(in->code) != BPF_ATOMIC))
				in->imm = 0;
			if (cls == BPF_ST)
				in->src_reg = 0;
			if (BPF_MODE(in->code) == BPF_ATOMIC)
				in->imm = atomic_ops[b[4] % (sizeof(atomic_ops) / sizeof(atomic_ops[0]))];
			if (b[2] & 1)
				in->dst_reg = cls == BPF_LDX ? in->dst_reg : 10, in->off = (int16_t)(-8 * (1 + b[3] % 8));
		} else if (in->code == 0x18) {
			static const int value_maps[] = {0, 1, 3};
			in->src_reg = b[2] % 3;
			if (in->src_reg == BPF_PSEUDO_MAP_FD)
				in->imm = b[4] % (NMAPS + (b[5] == 0xff));   /* rarely one past the end */
			else if (in->src_reg == BPF_PSEUDO_MAP_VALUE)
				in->imm = value_maps[b[4] % 3];
			if (i + 1 < n) {
				memset(&v[i + 1], 0, sizeof(v[i + 1]));
				v[i + 1].imm = in->src_reg == BPF_PSEUDO_MAP_VALUE ? b[5] % 8
					       : in->src_reg ? 0 : imm;
				i++;
			}
		} else if (op == BPF_CALL) {
			in->dst_reg = 0;
			in->src_reg = (b[2] & 31) == 0 ? BPF_PSEUDO_CALL : 0;
			in->imm = in->src_reg ? (int32_t)((long)(b[4] % n) - (long)i - 1)
					      : helper_ids[b[4] % (sizeof(helper_ids) / sizeof(helper_ids[0]))];
		} else if (op == BPF_EXIT) {
			in->dst_reg = in->src_reg = 0;
			in->imm = 0;
		} else {
			/* jumps: mostly short, forward or backward, inside the program */
			long t = (long)(b[2] % n);
			in->off = (int16_t)(t - (long)i - 1);
			if (op == BPF_JA)
				in->dst_reg = in->src_reg = 0, in->imm = 0;
			else if (BPF_SRC(in->code) == BPF_K)
				in->src_reg = 0, in->imm = (int8_t)b[4];
			else
				in->imm = 0;
		}
	}
	/* a prologue that initializes registers and stack, so that bodies get past "!read_ok" */
	if (n > 40 && (raw[0] & 0x80)) {
		size_t k = 0;
		for (int r = 0; r <= 9; r++) {
			if (r == 1)
				continue;
			int8_t c = (int8_t)raw[8 * k + 4];
			v[k++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = r, .imm = c};
		}
		v[k++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 1};
		v[k++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 7, .src_reg = 10};
		v[k++] = (struct bpf_insn){.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 7, .imm = -64};
		for (int s = 1; s <= 8; s++)
			v[k++] = (struct bpf_insn){.code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = 10,
						   .off = (int16_t)(-8 * s), .imm = s};
		/* the body may not jump back into the prologue; memory goes through r6 (the
		 * generic memory, at least 64 bytes), r7 (fp-64) or r10 at plausible offsets */
		for (size_t i = k; i < n; i++) {
			uint8_t cls = BPF_CLASS(v[i].code), op = BPF_OP(v[i].code);
			const uint8_t *b = raw + 8 * i;
			static const uint8_t bases[] = {6, 7, 10};
			uint8_t base = bases[b[3] % 3];


			int16_t slot = (int16_t)(8 * (b[2] % 8));
			if (cls == BPF_LDX) {
				v[i].src_reg = base;
				v[i].off = base == 10 ? (int16_t)(slot - 64) : slot;
			} else if (cls == BPF_ST || cls == BPF_STX) {
				v[i].dst_reg = base;
				v[i].off = base == 10 ? (int16_t)(slot - 64) : slot;
			} else if ((cls == BPF_ALU || cls == BPF_ALU64) &&
				   (v[i].dst_reg == 1 || v[i].dst_reg == 6 || v[i].dst_reg == 7 || v[i].dst_reg == 10)) {
				v[i].dst_reg = (uint8_t)(8 + (b[1] & 1));
			}
			if ((cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL && op != BPF_EXIT &&
			    (long)i + 1 + v[i].off < (long)k)
				v[i].off = (int16_t)(k - i - 1 + (i % 7));
		}
	}
	if (n)
		v[n - 1] = (struct bpf_insn){.code = BPF_JMP | BPF_EXIT};
}

static void quiet_print(void *user, const char *line)
{
	(void)user;
	(void)line;
}

static void quiet_record(void *user, int map_index, const void *data, size_t size)
{
	(void)user;
	(void)map_index;
	(void)data;
	(void)size;
}

unsigned long verifier_fuzz_accepted_runs;   /* read by tests/verifier/fuzz_replay.c */

/* The verifier accepted a generic program: the interpreter must not fault or spin. */
static void run_verified(const struct bpf_insn *insns, size_t n, uint32_t mem_size)
{
	verifier_fuzz_accepted_runs++;
	static uint8_t mem[256 * 8 + 8];
	memset(mem, 0x5a, sizeof(mem));
	struct gp_interp_env env = {0};
	env.maps = maps;
	env.nmaps = NMAPS;
	env.max_steps = 20000000;
	env.on_print = quiet_print;
	env.on_record = quiet_record;
	env.ctx_size = mem_size;
	env.ctx_writable = 1;
	uint64_t ret = 0;
	char err[256] = "";
	int r = gp_interp_run(insns, n, mem_size ? (uint64_t)(uintptr_t)mem : 0, mem_size, &env, &ret, err,
			      sizeof(err));
	if (r == -EFAULT || r == -E2BIG) {
		fprintf(stderr, "verified program failed on the interpreter (%d): %s\n", r, err);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint8_t flags = data[0];
	size_t n = (size - 2) / 8;
	if (n > FUZZ_MAX_INSNS)
		n = FUZZ_MAX_INSNS;
	struct bpf_insn *insns = malloc((n ? n : 1) * sizeof(*insns));
	if (!insns)
		return 0;
	memcpy(insns, data + 2, n * sizeof(*insns));
	if (flags & 1)
		structure(insns, n, data + 2);
	static char log[1 << 16];
	uint8_t atomic_only[NMAPS];
	struct gp_verify_opts o = {0};
	o.attach = (enum gp_attach_kind)((flags >> 1) % (GP_ATTACH_HOST_EXIT + 1));
	o.ctx_size = o.attach == GP_ATTACH_NONE ? 8u * data[1] : gp_attach_ctx_size(o.attach);
	if (o.attach == GP_ATTACH_NONE && (flags & 0x81) == 0x81 && o.ctx_size < 64)
		o.ctx_size = 64;   /* the structured prologue's memory */
	o.r2_is_ctx_size = 1;
	o.maps = maps;
	o.nmaps = NMAPS;
	o.log = log;
	o.log_size = (flags & 0x40) ? 300 : sizeof(log);   /* small logs must still end with the reason */
	o.log_level = (flags >> 5) & 1;
	o.max_insns = 20000;
	o.max_states = 5000;
	o.map_atomic_only = atomic_only;
	int r = gp_verify(insns, n, &o);
	if (r != 0 && r != -EINVAL && r != -EACCES && r != -E2BIG && r != -ENOMEM)
		abort();
	if (!memchr(log, 0, sizeof(log)))
		abort();
	if (r && log[0] == 0)
		abort();   /* a rejection always says why */
	if (o.insns_processed > o.max_insns + 1)
		abort();
	if (r == 0 && o.attach == GP_ATTACH_NONE)
		run_verified(insns, n, o.ctx_size);
	free(insns);
	return 0;
}
