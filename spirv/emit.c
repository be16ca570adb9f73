/* SPIR-V binary building: see emit.h. */
#include "spirv/emit.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void spv_emitter_init(spv_emitter *e)
{
	memset(e, 0, sizeof(*e));
	e->next_id = 1;
}

void spv_buf_free(spv_buf *b)
{
	free(b->w);
	b->w = NULL;
	b->n = b->cap = 0;
}

void spv_emitter_fini(spv_emitter *e)
{
	spv_buf *all[] = {&e->caps, &e->exts, &e->imports, &e->memmodel, &e->entries,
			  &e->modes, &e->names, &e->decos, &e->globals, &e->funcs};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		spv_buf_free(all[i]);
	for (size_t i = 0; i < e->nkeys; i++)
		free(e->keys[i].words);
	free(e->keys);
	free(e->khash);
	e->khash = NULL;
	e->khcap = 0;
	e->keys = NULL;
	e->nkeys = e->capkeys = 0;
}

uint32_t spv_id(spv_emitter *e) { return e->next_id++; }

static int buf_reserve(spv_buf *b, size_t more)
{
	if (b->n + more <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap * 2 : 64;
	while (cap < b->n + more)
		cap *= 2;
	uint32_t *w = realloc(b->w, cap * sizeof(*w));
	if (!w)
		abort(); /* out of memory: nothing sensible to do mid-module */
	b->w = w;
	b->cap = cap;
	return 0;
}

void spv_inst(spv_buf *b, SpvOp op, unsigned n, const uint32_t *ops)
{
	if (n + 1 > 0xffff) {
		b->too_long++;
		return;
	}
	buf_reserve(b, n + 1);
	b->w[b->n++] = ((uint32_t)(n + 1) << 16) | (uint32_t)op;
	if (n) /* ops may be NULL when there are none */
		memcpy(b->w + b->n, ops, n * sizeof(uint32_t));
	b->n += n;
}

void spv_op(spv_buf *b, SpvOp op, unsigned n, ...)
{
	uint32_t ops[32];
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n && i < 32; i++)
		ops[i] = va_arg(ap, uint32_t);
	va_end(ap);
	spv_inst(b, op, n < 32 ? n : 32, ops);
}

void spv_op_str(spv_buf *b, SpvOp op, unsigned nbefore, const uint32_t *before, const char *s,
		unsigned nafter, const uint32_t *after)
{
	size_t len = strlen(s);
	unsigned nstr = (unsigned)(len / 4 + 1); /* always a terminating NUL */
	unsigned n = nbefore + nstr + nafter;
	buf_reserve(b, n + 1);
	b->w[b->n++] = ((uint32_t)(n + 1) << 16) | (uint32_t)op;
	if (nbefore)
		memcpy(b->w + b->n, before, nbefore * sizeof(uint32_t));
	b->n += nbefore;
	memset(b->w + b->n, 0, nstr * sizeof(uint32_t));
	memcpy(b->w + b->n, s, len); /* little endian: bytes fill words low to high */
	b->n += nstr;
	if (nafter)
		memcpy(b->w + b->n, after, nafter * sizeof(uint32_t));
	b->n += nafter;
}

void spv_buf_append(spv_buf *dst, const spv_buf *src)
{
	dst->too_long += src->too_long;
	if (!src->n)
		return;
	buf_reserve(dst, src->n);
	memcpy(dst->w + dst->n, src->w, src->n * sizeof(uint32_t));
	dst->n += src->n;
}

/* Find or declare: key = opcode then operands; the instruction is written with the id placed
 * where result ids go (types: first operand; constants: second, after the result type). */
static uint64_t key_hash(SpvOp op, unsigned n, const uint32_t *ops)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)op;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ ops[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static void khash_put(spv_emitter *e, size_t idx)
{
	struct spv_key *k = &e->keys[idx];
	uint64_t h = key_hash((SpvOp)k->words[0], k->n - 1, k->words + 1);
	size_t j;
	for (j = h & (e->khcap - 1); e->khash[j]; j = (j + 1) & (e->khcap - 1))
		;
	e->khash[j] = (uint32_t)idx + 1;
}

static uint32_t intern(spv_emitter *e, SpvOp op, unsigned n, const uint32_t *ops, int id_pos)
{
	/* a hash index: large initializers declare tens of thousands of constants */
	if ((e->nkeys + 1) * 2 > e->khcap) {
		free(e->khash);
		e->khcap = e->khcap ? e->khcap * 2 : 256;
		e->khash = calloc(e->khcap, sizeof(*e->khash));
		if (!e->khash)
			abort();
		for (size_t i = 0; i < e->nkeys; i++)
			khash_put(e, i);
	}
	uint64_t h = key_hash(op, n, ops);
	for (size_t j = h & (e->khcap - 1); e->khash[j]; j = (j + 1) & (e->khcap - 1)) {
		struct spv_key *k = &e->keys[e->khash[j] - 1];
		if (k->n == n + 1 && k->words[0] == (uint32_t)op &&
		    !memcmp(k->words + 1, ops, n * sizeof(uint32_t)))
			return k->id;
	}
	if (e->nkeys == e->capkeys) {
		e->capkeys = e->capkeys ? e->capkeys * 2 : 64;
		e->keys = realloc(e->keys, e->capkeys * sizeof(*e->keys));
		if (!e->keys)
			abort();
	}
	struct spv_key *k = &e->keys[e->nkeys++];
	k->words = malloc((n + 1) * sizeof(uint32_t));
	if (!k->words)
		abort();
	k->words[0] = op;
	memcpy(k->words + 1, ops, n * sizeof(uint32_t));
	k->n = n + 1;
	k->id = spv_id(e);
	khash_put(e, e->nkeys - 1);
	uint32_t w[40];
	unsigned m = 0;
	for (unsigned i = 0; i <= n; i++) {
		if ((int)i == id_pos)
			w[m++] = k->id;
		if (i < n)
			w[m++] = ops[i];
	}
	spv_inst(&e->globals, op, m, w);
	return k->id;
}

uint32_t spv_type(spv_emitter *e, SpvOp op, unsigned n, ...)
{
	uint32_t ops[32];
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n && i < 32; i++)
		ops[i] = va_arg(ap, uint32_t);
	va_end(ap);
	return intern(e, op, n, ops, 0);
}

uint32_t spv_t_void(spv_emitter *e) { return spv_type(e, SpvOpTypeVoid, 0); }
uint32_t spv_t_bool(spv_emitter *e) { return spv_type(e, SpvOpTypeBool, 0); }

uint32_t spv_t_int(spv_emitter *e, unsigned bits)
{
	if (bits == 8)
		spv_capability(e, SpvCapabilityInt8);
	else if (bits == 16)
		spv_capability(e, SpvCapabilityInt16);
	else if (bits == 64)
		spv_capability(e, SpvCapabilityInt64);
	return spv_type(e, SpvOpTypeInt, 2, bits, 0u); /* Kernel: signedness is always 0 */
}

uint32_t spv_t_float(spv_emitter *e, unsigned bits)
{
	if (bits == 64)
		spv_capability(e, SpvCapabilityFloat64);
	else if (bits == 16)
		spv_capability(e, SpvCapabilityFloat16Buffer);
	return spv_type(e, SpvOpTypeFloat, 1, bits);
}

uint32_t spv_t_ptr(spv_emitter *e, SpvStorageClass sc, uint32_t pointee)
{
	if (sc == SpvStorageClassGeneric)
		spv_capability(e, SpvCapabilityGenericPointer);
	return spv_type(e, SpvOpTypePointer, 2, (uint32_t)sc, pointee);
}

uint32_t spv_t_vec(spv_emitter *e, uint32_t elem, unsigned n)
{
	return spv_type(e, SpvOpTypeVector, 2, elem, n);
}

uint32_t spv_t_array(spv_emitter *e, uint32_t elem, uint32_t len)
{
	return spv_type(e, SpvOpTypeArray, 2, elem, len);
}

uint32_t spv_t_func(spv_emitter *e, uint32_t ret, unsigned nparams, const uint32_t *params)
{
	uint32_t ops[32];
	ops[0] = ret;
	for (unsigned i = 0; i < nparams && i < 31; i++)
		ops[i + 1] = params[i];
	return intern(e, SpvOpTypeFunction, 1 + (nparams < 31 ? nparams : 31), ops, 0);
}

uint32_t spv_c_int(spv_emitter *e, unsigned bits, uint64_t v)
{
	uint32_t t = spv_t_int(e, bits);
	if (bits < 64)
		v &= (1ull << bits) - 1;
	if (bits == 64)
		return intern(e, SpvOpConstant, 3, (uint32_t[]){t, (uint32_t)v, (uint32_t)(v >> 32)}, 1);
	return intern(e, SpvOpConstant, 2, (uint32_t[]){t, (uint32_t)v}, 1);
}

uint32_t spv_c_float(spv_emitter *e, unsigned bits, uint64_t raw)
{
	uint32_t t = spv_t_float(e, bits);
	if (bits == 64)
		return intern(e, SpvOpConstant, 3, (uint32_t[]){t, (uint32_t)raw, (uint32_t)(raw >> 32)}, 1);
	return intern(e, SpvOpConstant, 2, (uint32_t[]){t, (uint32_t)raw & (bits == 16 ? 0xffffu : ~0u)}, 1);
}

uint32_t spv_c_bool(spv_emitter *e, int v)
{
	uint32_t t = spv_t_bool(e);
	return intern(e, v ? SpvOpConstantTrue : SpvOpConstantFalse, 1, &t, 1);
}

uint32_t spv_c_null(spv_emitter *e, uint32_t type)
{
	return intern(e, SpvOpConstantNull, 1, &type, 1);
}

void spv_name(spv_emitter *e, uint32_t id, const char *name)
{
	spv_op_str(&e->names, SpvOpName, 1, &id, name, 0, NULL);
}

void spv_decorate(spv_emitter *e, uint32_t id, SpvDecoration d, unsigned n, ...)
{
	uint32_t ops[8] = {id, (uint32_t)d};
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n && i < 6; i++)
		ops[2 + i] = va_arg(ap, uint32_t);
	va_end(ap);
	spv_inst(&e->decos, SpvOpDecorate, 2 + (n < 6 ? n : 6), ops);
}

void spv_capability(spv_emitter *e, SpvCapability c)
{
	for (size_t i = 0; i < e->caps.n; i += 2)
		if (e->caps.w[i + 1] == (uint32_t)c)
			return;
	spv_op(&e->caps, SpvOpCapability, 1, (uint32_t)c);
}

unsigned spv_emitter_too_long(const spv_emitter *e)
{
	const spv_buf *all[] = {&e->caps, &e->exts, &e->imports, &e->memmodel, &e->entries,
				&e->modes, &e->names, &e->decos, &e->globals, &e->funcs};
	unsigned n = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		n += all[i]->too_long;
	return n;
}

uint32_t *spv_emitter_finish(spv_emitter *e, size_t *nwords)
{
	if (spv_emitter_too_long(e)) {
		*nwords = 0;
		return NULL;
	}
	spv_buf out = {0};
	uint32_t header[5] = {SpvMagicNumber, 0x00010000u /* SPIR-V 1.0: OpenCL 1.2/2.0 ingest it */,
			      0 /* generator: unregistered */, e->next_id, 0};
	buf_reserve(&out, 5);
	memcpy(out.w, header, sizeof(header));
	out.n = 5;
	spv_buf *order[] = {&e->caps, &e->exts, &e->imports, &e->memmodel, &e->entries,
			    &e->modes, &e->names, &e->decos, &e->globals, &e->funcs};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		spv_buf_append(&out, order[i]);
	*nwords = out.n;
	return out.w;
}
