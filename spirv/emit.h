/* A SPIR-V module builder: word buffers per logical-layout section, fresh ids, and types and
 * constants that are declared once however often they are asked for. It knows nothing of PTX. */
#ifndef GPUPROBE_SPIRV_EMIT_H
#define GPUPROBE_SPIRV_EMIT_H

#include <stddef.h>
#include <stdint.h>
#include <spirv/unified1/spirv.h>

typedef struct spv_buf {
	uint32_t *w;
	size_t n, cap;
	unsigned too_long; /* instructions of more than 65,535 words asked for (their word count overflows) */
} spv_buf;

/* One dedup entry: a type or constant instruction (opcode + operands without the result id). */
struct spv_key {
	uint32_t *words;
	unsigned n;
	uint32_t id;
};

typedef struct spv_emitter {
	uint32_t next_id;
	/* Sections in the order SPIR-V's logical layout wants them. */
	spv_buf caps, exts, imports, memmodel, entries, modes, names, decos, globals, funcs;
	struct spv_key *keys;
	size_t nkeys, capkeys;
	uint32_t *khash;            /* open hash of key indexes + 1 (0: empty), khcap slots */
	size_t khcap;
	uint32_t opencl_std;        /* id of the OpenCL.std import */
	int oom;
} spv_emitter;

void spv_emitter_init(spv_emitter *e);
void spv_emitter_fini(spv_emitter *e);
uint32_t spv_id(spv_emitter *e);

/* Append one instruction: opcode and n operand words. */
void spv_inst(spv_buf *b, SpvOp op, unsigned n, const uint32_t *ops);
/* The same with operands listed inline: spv_op(b, SpvOpIAdd, 4, type, id, a, b). */
void spv_op(spv_buf *b, SpvOp op, unsigned n, ...);
/* An instruction whose operands end in a literal string (OpName, OpEntryPoint, OpExtension). */
void spv_op_str(spv_buf *b, SpvOp op, unsigned nbefore, const uint32_t *before, const char *s,
		unsigned nafter, const uint32_t *after);
void spv_buf_append(spv_buf *dst, const spv_buf *src);
void spv_buf_free(spv_buf *b);

/* Declared once: identical requests return the same id. */
uint32_t spv_type(spv_emitter *e, SpvOp op, unsigned n, ...);
uint32_t spv_t_void(spv_emitter *e);
uint32_t spv_t_bool(spv_emitter *e);
uint32_t spv_t_int(spv_emitter *e, unsigned bits);
uint32_t spv_t_float(spv_emitter *e, unsigned bits);
uint32_t spv_t_ptr(spv_emitter *e, SpvStorageClass sc, uint32_t pointee);
uint32_t spv_t_vec(spv_emitter *e, uint32_t elem, unsigned n);
uint32_t spv_t_array(spv_emitter *e, uint32_t elem, uint32_t len);
uint32_t spv_t_func(spv_emitter *e, uint32_t ret, unsigned nparams, const uint32_t *params);

uint32_t spv_c_int(spv_emitter *e, unsigned bits, uint64_t v);
uint32_t spv_c_float(spv_emitter *e, unsigned bits, uint64_t raw_bits);
uint32_t spv_c_bool(spv_emitter *e, int v);
uint32_t spv_c_null(spv_emitter *e, uint32_t type);

void spv_name(spv_emitter *e, uint32_t id, const char *name);
void spv_decorate(spv_emitter *e, uint32_t id, SpvDecoration d, unsigned n, ...);
void spv_capability(spv_emitter *e, SpvCapability c);   /* once each */

/* The module's words (header included), malloc'd; *nwords set. NULL on OOM, or when an
 * instruction was too long for SPIR-V's 16-bit word count (spv_emitter_too_long says so). */
uint32_t *spv_emitter_finish(spv_emitter *e, size_t *nwords);
unsigned spv_emitter_too_long(const spv_emitter *e);

#endif
