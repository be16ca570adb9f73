/* The one-liner's parser (grammar: docs/oneliners.md) and its checks: builtins exist at the probe's
 * attach point, a map is used one way everywhere, aggregations get the arguments they take.
 *
 *   program := probe+
 *   probe   := ATTACH [ '/' expr '/' ] '{' [ stmt { ';' stmt } [';'] ] '}'
 *   stmt    := '@'[name] [ '[' expr { ',' expr } ']' ] '=' agg
 *   agg     := 'count' '(' ')' | 'sum' '(' expr ')' | 'hist' '(' expr ')'
 *            | 'lhist' '(' expr ',' INT ',' INT ',' INT ')'
 *   expr    := C's binary operators || && | ^ & == != < <= > >= << >> + - * / %, unary ! - ~,
 *              parentheses, integers, builtins; unsigned 64-bit arithmetic.
 * Inside a filter, a '/' followed by '{' ends the filter (bpftrace's rule); any other '/' divides. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object_internal.h"
#include "ebpf/oneliner_internal.h"
#include "gpuprobe/context.h"

struct parser {
	struct ol_lexer lx;
	struct ol_token cur;
	struct ol_program *p;
	struct ol_probe *probe;  /* being parsed */
	int in_filter;
	int depth;
	char *err;
	size_t errlen;
};

static int next(struct parser *ps, int attach_mode)
{
	return ol_lex(&ps->lx, attach_mode, &ps->cur);
}

static int expected(struct parser *ps, const char *what)
{
	char got[160];
	ol_tok_describe(&ps->cur, got, sizeof got);
	return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen, "expected %s, got %s", what, got);
}

static int expect(struct parser *ps, enum ol_tok k, const char *what)
{
	if (ps->cur.kind != k)
		return expected(ps, what);
	return next(ps, 0);
}

/* ---- builtins ---------------------------------------------------------------------------- */

static int thread_ids_at(enum gp_attach_kind k, uint32_t *off)
{
	switch (k) {
	case GP_ATTACH_KERNEL_ENTRY:
	case GP_ATTACH_KERNEL_EXIT: *off = offsetof(struct gp_kernel_ctx, thread); return 1;
	case GP_ATTACH_BLOCK_BEGIN:
	case GP_ATTACH_BLOCK_END: *off = offsetof(struct gp_block_ctx, thread); return 1;
	case GP_ATTACH_FUNC_ENTRY:
	case GP_ATTACH_FUNC_EXIT: *off = offsetof(struct gp_func_ctx, thread); return 1;
	case GP_ATTACH_MEM: *off = offsetof(struct gp_mem_ctx, thread); return 1;
	case GP_ATTACH_BARRIER: *off = offsetof(struct gp_barrier_ctx, thread); return 1;
	case GP_ATTACH_BASIC_BLOCK: *off = offsetof(struct gp_bb_ctx, thread); return 1;
	default: return 0;
	}
}

#define FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)

static const struct {
	const char *name;
	uint32_t off, size;       /* in struct gp_thread_ids */
	int key_type;
} thread_builtins[] = {
	{"kernel", FIELD(struct gp_thread_ids, kernel_hash), OL_KEY_KERNEL},
	{"block", offsetof(struct gp_thread_ids, block_idx), 4, 0},
	{"block_x", offsetof(struct gp_thread_ids, block_idx), 4, 0},
	{"block_y", offsetof(struct gp_thread_ids, block_idx) + 4, 4, 0},
	{"block_z", offsetof(struct gp_thread_ids, block_idx) + 8, 4, 0},
	{"thread", offsetof(struct gp_thread_ids, thread_idx), 4, 0},
	{"thread_x", offsetof(struct gp_thread_ids, thread_idx), 4, 0},
	{"thread_y", offsetof(struct gp_thread_ids, thread_idx) + 4, 4, 0},
	{"thread_z", offsetof(struct gp_thread_ids, thread_idx) + 8, 4, 0},
	{"sm", FIELD(struct gp_thread_ids, sm_id), 0},
	{"warp", FIELD(struct gp_thread_ids, warp_id), 0},
	{"lane", FIELD(struct gp_thread_ids, lane_id), 0},
};

/* Fields of one attach point's own context. */
static const struct {
	const char *name;
	unsigned kinds;           /* 1u << enum gp_attach_kind */
	uint32_t off, size;
	int key_type;
	const char *where;        /* for "only at ..." */
} ctx_builtins[] = {
#define K(k) (1u << (k))
	{"addr", K(GP_ATTACH_MEM), FIELD(struct gp_mem_ctx, addr), 0, "gpu/mem"},
	{"size", K(GP_ATTACH_MEM), FIELD(struct gp_mem_ctx, size), 0, "gpu/mem"},
	{"space", K(GP_ATTACH_MEM), FIELD(struct gp_mem_ctx, space), 0, "gpu/mem"},
	{"dir", K(GP_ATTACH_MEM), FIELD(struct gp_mem_ctx, dir), 0, "gpu/mem"},
	{"line", K(GP_ATTACH_MEM), FIELD(struct gp_mem_ctx, line), 0, "gpu/mem, gpu/bb and gpu/barrier"},
	{"line", K(GP_ATTACH_BASIC_BLOCK), FIELD(struct gp_bb_ctx, line), 0, NULL},
	{"line", K(GP_ATTACH_BARRIER), FIELD(struct gp_barrier_ctx, line), 0, NULL},
	{"bb", K(GP_ATTACH_BASIC_BLOCK), FIELD(struct gp_bb_ctx, bb_index), 0, "gpu/bb"},
	{"insns", K(GP_ATTACH_BASIC_BLOCK), FIELD(struct gp_bb_ctx, ninsns), 0, "gpu/bb"},
	{"barrier", K(GP_ATTACH_BARRIER), FIELD(struct gp_barrier_ctx, barrier_id), 0, "gpu/barrier"},
	{"time", K(GP_ATTACH_KERNEL_ENTRY) | K(GP_ATTACH_KERNEL_EXIT), FIELD(struct gp_kernel_ctx, timestamp), 0, NULL},
	{"time", K(GP_ATTACH_BLOCK_BEGIN) | K(GP_ATTACH_BLOCK_END), FIELD(struct gp_block_ctx, timestamp), 0, NULL},
	{"time", K(GP_ATTACH_BARRIER), FIELD(struct gp_barrier_ctx, timestamp), 0, NULL},
	{"time", K(GP_ATTACH_HOST_ENTRY) | K(GP_ATTACH_HOST_EXIT), FIELD(struct gp_host_ctx, timestamp), 0, NULL},
	{"api", K(GP_ATTACH_HOST_ENTRY) | K(GP_ATTACH_HOST_EXIT), FIELD(struct gp_host_ctx, api_id), OL_KEY_API, "host/entry and host/exit"},
	{"pid", K(GP_ATTACH_HOST_ENTRY) | K(GP_ATTACH_HOST_EXIT), FIELD(struct gp_host_ctx, pid), 0, "host/entry and host/exit"},
	{"tid", K(GP_ATTACH_HOST_ENTRY) | K(GP_ATTACH_HOST_EXIT), FIELD(struct gp_host_ctx, tid), 0, "host/entry and host/exit"},
	{"result", K(GP_ATTACH_HOST_EXIT), FIELD(struct gp_host_ctx, result), 0, "host/exit"},
	{"retval", K(GP_ATTACH_HOST_EXIT), FIELD(struct gp_host_ctx, ret), 0, "host/exit and gpu/func_exit"},
	{"retval", K(GP_ATTACH_FUNC_EXIT), FIELD(struct gp_func_ctx, ret), 0, NULL},
#undef K
};

static const char *const device_where = "GPU attach points (gpu/...)";

/* 0: found; else -EINVAL with the message. */
static int find_builtin(struct parser *ps, const char *name, size_t pos, struct ol_builtin *b)
{
	enum gp_attach_kind k = ps->probe->attach;
	memset(b, 0, sizeof *b);
	b->name = NULL;
	for (size_t i = 0; i < sizeof thread_builtins / sizeof thread_builtins[0]; i++) {
		if (strcmp(thread_builtins[i].name, name))
			continue;
		uint32_t base;
		if (!thread_ids_at(k, &base))
			return ol_error(ps->lx.src, pos, ps->err, ps->errlen,
					"'%s' is available at %s only (this probe is %s)", name, device_where,
					ps->probe->section);
		b->name = thread_builtins[i].name;
		b->how = OL_LOAD_CTX;
		b->off = base + thread_builtins[i].off;
		b->size = thread_builtins[i].size;
		b->key_type = thread_builtins[i].key_type;
		return 0;
	}
	/* arg0..arg7: host and device-function arguments */
	if (!strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '7' && !name[4]) {
		unsigned n = (unsigned)(name[3] - '0');
		if (k == GP_ATTACH_HOST_ENTRY || k == GP_ATTACH_HOST_EXIT)
			b->off = (uint32_t)(offsetof(struct gp_host_ctx, args) + 8 * n);
		else if (k == GP_ATTACH_FUNC_ENTRY)
			b->off = (uint32_t)(offsetof(struct gp_func_ctx, args) + 8 * n);
		else
			return ol_error(ps->lx.src, pos, ps->err, ps->errlen,
					"'%s' is available at host/entry, host/exit and gpu/func_entry only (this probe is %s)",
					name, ps->probe->section);
		b->name = "arg";
		b->how = OL_LOAD_CTX;
		b->size = 8;
		return 0;
	}
	const char *where = NULL;
	int known = 0;
	for (size_t i = 0; i < sizeof ctx_builtins / sizeof ctx_builtins[0]; i++) {
		if (strcmp(ctx_builtins[i].name, name))
			continue;
		known = 1;
		if (ctx_builtins[i].where)
			where = ctx_builtins[i].where;
		if (!(ctx_builtins[i].kinds & (1u << k)))
			continue;
		b->name = ctx_builtins[i].name;
		b->how = OL_LOAD_CTX;
		b->off = ctx_builtins[i].off;
		b->size = ctx_builtins[i].size;
		b->key_type = ctx_builtins[i].key_type;
		return 0;
	}
	if (!strcmp(name, "time") && thread_ids_at(k, &(uint32_t){0})) {
		/* contexts without a timestamp: %globaltimer through the helper */
		b->name = "time";
		b->how = OL_LOAD_HELPER;
		b->helper = 502;
		return 0;
	}
	if (known)
		return ol_error(ps->lx.src, pos, ps->err, ps->errlen, "'%s' is available at %s only (this probe is %s)",
				name, where ? where : "GPU attach points", ps->probe->section);
	return ol_error(ps->lx.src, pos, ps->err, ps->errlen,
			"unknown name '%s' (builtins: kernel, block, block_x/y/z, thread, thread_x/y/z, sm, "
			"warp, lane, time, addr, size, space, dir, line, bb, insns, barrier, api, pid, tid, "
			"arg0-arg7, result, retval)", name);
}

/* ---- expressions ------------------------------------------------------------------------- */

static struct ol_expr *node(struct parser *ps, enum ol_expr_kind kind, size_t pos)
{
	struct ol_program *p = ps->p;
	if (p->nnodes == p->capnodes) {
		size_t cap = p->capnodes ? 2 * p->capnodes : 64;
		struct ol_expr **n = realloc(p->nodes, cap * sizeof *n);
		if (!n)
			return NULL;
		p->nodes = n;
		p->capnodes = cap;
	}
	struct ol_expr *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	p->nodes[p->nnodes++] = e;
	e->kind = kind;
	e->pos = pos;
	return e;
}

static int parse_expr(struct parser *ps, struct ol_expr **out);

static int oom(struct parser *ps)
{
	snprintf(ps->err, ps->errlen, "out of memory");
	return -ENOMEM;
}

static int parse_unary(struct parser *ps, struct ol_expr **out)
{
	int rc;
	struct ol_token t = ps->cur;
	if (++ps->depth > OL_MAX_DEPTH)
		return ol_error(ps->lx.src, t.pos, ps->err, ps->errlen,
				"expression nested deeper than %d levels", OL_MAX_DEPTH);
	switch (t.kind) {
	case T_MINUS:
	case T_TILDE:
	case T_BANG: {
		if ((rc = next(ps, 0)))
			return rc;
		struct ol_expr *e = node(ps, E_UNARY, t.pos);
		if (!e)
			return oom(ps);
		e->op = t.kind;
		if ((rc = parse_unary(ps, &e->l)))
			return rc;
		*out = e;
		break;
	}
	case T_INT: {
		struct ol_expr *e = node(ps, E_INT, t.pos);
		if (!e)
			return oom(ps);
		e->value = t.value;
		*out = e;
		if ((rc = next(ps, 0)))
			return rc;
		break;
	}
	case T_IDENT: {
		struct ol_expr *e = node(ps, E_BUILTIN, t.pos);
		if (!e)
			return oom(ps);
		if ((rc = find_builtin(ps, t.text, t.pos, &e->b)))
			return rc;
		*out = e;
		if ((rc = next(ps, 0)))
			return rc;
		if (ps->cur.kind == T_LPAREN)
			return ol_error(ps->lx.src, t.pos, ps->err, ps->errlen,
					"'%s' is a builtin, not a function", t.text);
		break;
	}
	case T_LPAREN: {
		int saved = ps->in_filter;
		ps->in_filter = 0;   /* (a / b) divides even in a filter */
		if ((rc = next(ps, 0)) || (rc = parse_expr(ps, out)))
			return rc;
		ps->in_filter = saved;
		if ((rc = expect(ps, T_RPAREN, "')'")))
			return rc;
		break;
	}
	default:
		return expected(ps, "a number, a builtin or '('");
	}
	ps->depth--;
	return 0;
}

/* Binary levels, loosest first. */
static const enum ol_tok levels[][4] = {   /* T_EOF (0) ends a row */
	{T_OROR}, {T_ANDAND}, {T_PIPE}, {T_CARET}, {T_AMP}, {T_EQ, T_NE},
	{T_LT, T_LE, T_GT, T_GE}, {T_SHL, T_SHR}, {T_PLUS, T_MINUS},
	{T_STAR, T_SLASH, T_PERCENT},
};
#define NLEVELS (sizeof levels / sizeof levels[0])

static int at_level(struct parser *ps, size_t lv)
{
	enum ol_tok k = ps->cur.kind;
	if (k == T_EOF)
		return 0;
	if (k == T_SLASH && ps->in_filter) {
		/* the filter's closing '/' is followed by '{' */
		const char *s = ps->lx.src + ps->cur.pos + 1;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '{' || !*s)
			return 0;
	}
	for (int i = 0; i < 4; i++)
		if (levels[lv][i] == k)
			return 1;
	return 0;
}

static int parse_level(struct parser *ps, size_t lv, struct ol_expr **out)
{
	if (lv == NLEVELS)
		return parse_unary(ps, out);
	int rc = parse_level(ps, lv + 1, out);
	if (rc)
		return rc;
	while (at_level(ps, lv)) {
		struct ol_token t = ps->cur;
		struct ol_expr *e = node(ps, E_BINARY, t.pos);
		if (!e)
			return oom(ps);
		e->op = t.kind;
		e->l = *out;
		if ((rc = next(ps, 0)) || (rc = parse_level(ps, lv + 1, &e->r)))
			return rc;
		*out = e;
	}
	return 0;
}

static int parse_expr(struct parser *ps, struct ol_expr **out)
{
	return parse_level(ps, 0, out);
}

/* ---- statements -------------------------------------------------------------------------- */

static const char *const agg_names[] = {"count", "sum", "hist", "lhist"};

static int const_arg(struct parser *ps, const char *what, uint64_t *v)
{
	int neg = 0;
	if (ps->cur.kind == T_MINUS)
		neg = 1;
	if (neg || ps->cur.kind != T_INT) {
		if (neg)
			return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen,
					"lhist(): %s must be 0 or more", what);
		char w[64];
		snprintf(w, sizeof w, "a number for lhist()'s %s", what);
		return expected(ps, w);
	}
	*v = ps->cur.value;
	return next(ps, 0);
}

static int bad_name_for_keys(const struct ol_map *m)
{
	/* maps whose keys are plain u64 print by the name rules (include/gpuprobe/output.h):
	 * a name that reads as a kernel table or a histogram would print them wrong */
	if (m->agg != A_COUNT && m->agg != A_SUM)
		return 0;
	if (m->nkeys != 1 || m->key_type != OL_KEY_U64)
		return 0;   /* typed: gp_no_key_t, a kernel or API id, a tuple */
	size_t n = strlen(m->name);
	return strstr(m->name, "kernel") || strstr(m->name, "lhist_") ||
	       (n >= 4 && !strcmp(m->name + n - 4, "hist"));
}

/* The map a statement names, created on first use, else checked against it. */
static int resolve_map(struct parser *ps, struct ol_stmt *st, const char *name, enum ol_agg agg,
		       uint64_t lmin, uint64_t lmax, uint64_t lstep, size_t name_pos)
{
	struct ol_program *p = ps->p;
	struct ol_map want = {0};
	snprintf(want.name, sizeof want.name, "%s", *name ? name : agg_names[agg]);
	want.agg = agg;
	want.nkeys = st->nkeys;
	want.key_type = st->nkeys == 1 && st->keys[0]->kind == E_BUILTIN ? st->keys[0]->b.key_type : OL_KEY_U64;
	want.lmin = lmin;
	want.lmax = lmax;
	want.lstep = lstep;
	want.pos = name_pos;
	uint32_t at = 0, align = 4;
	for (size_t i = 0; i < st->nkeys && st->nkeys > 1; i++) {
		const struct ol_expr *k = st->keys[i];
		want.key_types[i] = k->kind == E_BUILTIN ? k->b.key_type : OL_KEY_U64;
		uint32_t size = want.key_types[i] == OL_KEY_U64 ? 8 : 4;
		at = (at + size - 1) / size * size;
		want.key_off[i] = at;
		at += size;
		align = size > align ? size : align;
		/* the member's name: the builtin's, once; else k<i> */
		const char *n = k->kind == E_BUILTIN && strcmp(k->b.name, "arg") ? k->b.name : NULL;
		for (size_t j = 0; n && j < i; j++)
			if (!strcmp(want.key_names[j], n))
				n = NULL;
		if (n)
			snprintf(want.key_names[i], sizeof want.key_names[i], "%s", n);
		else
			snprintf(want.key_names[i], sizeof want.key_names[i], "k%zu", i);
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		struct ol_map *m = &p->maps[i];
		if (strcmp(m->name, want.name))
			continue;
		if (m->agg != agg || m->nkeys != want.nkeys || m->key_type != want.key_type ||
		    memcmp(m->key_types, want.key_types, sizeof m->key_types) ||
		    m->lmin != lmin || m->lmax != lmax || m->lstep != lstep)
			return ol_error(ps->lx.src, name_pos, ps->err, ps->errlen,
					"@%s is used differently before (column %zu): one map, one aggregation "
					"with the same keys", want.name, m->pos + 1);
		st->map = i;
		return 0;
	}
	if (p->nmaps == OL_MAX_MAPS)
		return ol_error(ps->lx.src, name_pos, ps->err, ps->errlen, "more than %d maps", OL_MAX_MAPS);
	if (bad_name_for_keys(&want))
		return ol_error(ps->lx.src, name_pos, ps->err, ps->errlen,
				"@%s: a map named with 'kernel', 'lhist_' or ending in 'hist' prints by its name, "
				"and its keys are not that: choose another name", want.name);
	switch (agg) {
	case A_COUNT:
	case A_SUM:
		if (!want.nkeys) {
			want.type = BPF_MAP_TYPE_ARRAY;
			want.max_entries = 1;
			want.key_size = 4;
		} else {
			want.type = BPF_MAP_TYPE_HASH;
			want.max_entries = OL_HASH_ENTRIES;
			want.key_size = want.nkeys == 1 ? (want.key_type != OL_KEY_U64 ? 4 : 8)
							 : (at + align - 1) / align * align;   /* as C pads it */
		}
		break;
	case A_HIST:
		want.type = BPF_MAP_TYPE_ARRAY;
		want.max_entries = 65;
		want.key_size = 4;
		break;
	case A_LHIST:
		want.type = BPF_MAP_TYPE_HASH;
		want.max_entries = (uint32_t)((lmax - 1) / lstep - lmin / lstep + 1);
		want.key_size = 4;
		break;
	}
	p->maps[p->nmaps] = want;
	st->map = p->nmaps++;
	return 0;
}

static int parse_stmt(struct parser *ps)
{
	struct ol_probe *pr = ps->probe;
	int rc;
	if (ps->cur.kind != T_AT)
		return expected(ps, "'@map = ...' (a statement) or '}'");
	if (pr->nstmts == OL_MAX_STMTS)
		return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen, "more than %d statements in one probe",
				OL_MAX_STMTS);
	struct ol_stmt *st = &pr->stmts[pr->nstmts++];
	char name[64];
	snprintf(name, sizeof name, "%.63s", ps->cur.text);
	size_t name_pos = ps->cur.pos;
	st->pos = name_pos;
	if ((rc = next(ps, 0)))
		return rc;
	if (ps->cur.kind == T_LBRACK) {
		do {
			if ((rc = next(ps, 0)))
				return rc;
			if (st->nkeys == OL_MAX_KEYS)
				return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen, "more than %d keys",
						OL_MAX_KEYS);
			if ((rc = parse_expr(ps, &st->keys[st->nkeys++])))
				return rc;
		} while (ps->cur.kind == T_COMMA);
		if ((rc = expect(ps, T_RBRACK, "',' or ']' after a key")))
			return rc;
	}
	if ((rc = expect(ps, T_ASSIGN, "'=' after the map")))
		return rc;
	if (ps->cur.kind != T_IDENT)
		return expected(ps, "count(), sum(), hist() or lhist() after '='");
	int agg = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(ps->cur.text, agg_names[i]))
			agg = i;
	if (agg < 0)
		return expected(ps, "count(), sum(), hist() or lhist() after '='");
	if ((rc = next(ps, 0)) || (rc = expect(ps, T_LPAREN, "'(' after the function's name")))
		return rc;
	uint64_t lmin = 0, lmax = 0, lstep = 0;
	if (agg == A_COUNT) {
		if (ps->cur.kind != T_RPAREN)
			return expected(ps, "')': count() takes no argument");
	} else {
		if (ps->cur.kind == T_RPAREN)
			return expected(ps, agg == A_LHIST ? "lhist(value, min, max, step)" : "a value to aggregate");
		if ((rc = parse_expr(ps, &st->arg)))
			return rc;
		if (agg == A_LHIST) {
			size_t at = ps->cur.pos;
			if ((rc = expect(ps, T_COMMA, "',' and lhist()'s min, max and step")) ||
			    (rc = const_arg(ps, "min", &lmin)) ||
			    (rc = expect(ps, T_COMMA, "',' and lhist()'s max and step")) ||
			    (rc = const_arg(ps, "max", &lmax)) ||
			    (rc = expect(ps, T_COMMA, "',' and lhist()'s step")) ||
			    (rc = const_arg(ps, "step", &lstep)))
				return rc;
			if (!lstep)
				return ol_error(ps->lx.src, at, ps->err, ps->errlen, "lhist(): step must be 1 or more");
			if (lmax <= lmin)
				return ol_error(ps->lx.src, at, ps->err, ps->errlen, "lhist(): max must be more than min");
			if ((lmax - 1) / lstep - lmin / lstep + 1 > OL_MAX_LHIST_BUCKETS)
				return ol_error(ps->lx.src, at, ps->err, ps->errlen,
						"lhist(): more than %d buckets ((max - min) / step)", OL_MAX_LHIST_BUCKETS);
			if ((lmax - 1) / lstep > UINT32_MAX)
				return ol_error(ps->lx.src, at, ps->err, ps->errlen, "lhist(): max / step must be below 2^32");
		}
		if (ps->cur.kind != T_RPAREN)
			return expected(ps, agg == A_LHIST ? "')' after lhist()'s step" : "')'");
	}
	if ((rc = next(ps, 0)))
		return rc;
	if ((agg == A_HIST || agg == A_LHIST) && st->nkeys)
		return ol_error(ps->lx.src, name_pos, ps->err, ps->errlen,
				"%s() maps take no key: @%s = %s(...)", agg_names[agg], name, agg_names[agg]);
	return resolve_map(ps, st, name, (enum ol_agg)agg, lmin, lmax, lstep, name_pos);
}

static int parse_probe(struct parser *ps)
{
	struct ol_program *p = ps->p;
	int rc;
	if (ps->cur.kind != T_ATTACH)
		return expected(ps, "an attach point (e.g. gpu/entry/*)");
	if (p->nprobes == OL_MAX_PROBES)
		return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen, "more than %d probes", OL_MAX_PROBES);
	struct ol_probe *pr = &p->probes[p->nprobes++];
	ps->probe = pr;
	snprintf(pr->section, sizeof pr->section, "%s", ps->cur.text);
	char *target = NULL, msg[400];
	unsigned filt;
	int after;
	if (gp_parse_attach(pr->section, &pr->attach, &target, &filt, &after, msg, sizeof msg))
		return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen, "%s", msg);
	free(target);
	if (pr->attach == GP_ATTACH_NONE)
		return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen,
				"'%s' is not an attach point (gpu/entry/GLOB, gpu/exit/GLOB, gpu/block_begin/GLOB, "
				"gpu/block_end/GLOB, gpu/mem/FILTERS/GLOB, gpu/bb/GLOB, gpu/barrier/GLOB, "
				"gpu/func_entry/GLOB, host/entry/cuAPI, host/exit/cuAPI ...)", pr->section);
	if (strncmp(pr->section, "gpu/", 4) && strncmp(pr->section, "host/", 5))
		return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen,
				"'%s': one-liners attach at gpu/... and host/... points (bpftime's kprobe/uprobe "
				"forms: gpu/entry, gpu/exit, host/entry/cuAPI)", pr->section);
	if ((rc = next(ps, 0)))
		return rc;
	if (ps->cur.kind == T_SLASH) {
		ps->in_filter = 1;
		if ((rc = next(ps, 0)) || (rc = parse_expr(ps, &pr->filter)))
			return rc;
		ps->in_filter = 0;
		if (ps->cur.kind != T_SLASH)
			return expected(ps, "'/' to end the filter");
		if ((rc = next(ps, 0)))
			return rc;
	}
	if ((rc = expect(ps, T_LBRACE, "'{' after the attach point (or a /filter/ before it)")))
		return rc;
	while (ps->cur.kind != T_RBRACE) {
		if ((rc = parse_stmt(ps)))
			return rc;
		if (ps->cur.kind == T_SEMI) {
			if ((rc = next(ps, 0)))
				return rc;
		} else if (ps->cur.kind != T_RBRACE) {
			return expected(ps, "';' or '}' after a statement");
		}
	}
	if (!pr->nstmts)
		return ol_error(ps->lx.src, ps->cur.pos, ps->err, ps->errlen,
				"empty probe: expected a statement such as @[kernel] = count()");
	/* the next probe's attach point, or the end (a ';' between probes is allowed) */
	if ((rc = next(ps, 1)))
		return rc;
	while (ps->cur.kind == T_SEMI)
		if ((rc = next(ps, 1)))
			return rc;
	return 0;
}

int ol_parse(const char *src, struct ol_program *p, char *err, size_t errlen)
{
	struct parser ps = {.lx = {.src = src, .err = err, .errlen = errlen}, .p = p, .err = err, .errlen = errlen};
	int rc = next(&ps, 1);
	if (rc)
		return rc;
	if (ps.cur.kind == T_EOF)
		return ol_error(src, 0, err, errlen, "empty program: expected an attach point such as gpu/entry/*");
	while (ps.cur.kind != T_EOF)
		if ((rc = parse_probe(&ps)))
			return rc;
	return 0;
}

void ol_program_free(struct ol_program *p)
{
	for (size_t i = 0; i < p->nnodes; i++)
		free(p->nodes[i]);
	free(p->nodes);
	p->nodes = NULL;
	p->nnodes = p->capnodes = 0;
}
