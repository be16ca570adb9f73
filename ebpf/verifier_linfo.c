/* Source information for the verifier's log: where each instruction of a program came from in
 * the C source, from the object's BTF line info (.BTF.ext, written by clang -g), and the names of
 * its functions. The program's instructions are laid out as the loader laid them out
 * (object_reloc.c: the program's function, then each subprogram it calls, in the order first
 * called); that layout is found again here by following the program's own calls, each checked
 * against the ELF (same opcodes, same call targets), so that a line is never put on the wrong
 * instruction: anything that does not match gives no source information at all.
 *
 * .BTF.ext (little endian): a header (u16 magic 0xeB9F, u8 version, u8 flags, u32 hdr_len,
 * u32 func_info_off, u32 func_info_len, u32 line_info_off, u32 line_info_len), then at
 * hdr_len + line_info_off: u32 rec_size, and per code section { u32 sec_name_off, u32 num_info,
 * num_info records of rec_size bytes: u32 insn_off (bytes into the section), u32 file_name_off,
 * u32 line_off, u32 line_col (line << 10 | column) }. Names and lines are offsets into the string
 * section of .BTF (u16 magic, u8 version, u8 flags, u32 hdr_len, u32 type_off, u32 type_len,
 * u32 str_off, u32 str_len; strings at hdr_len + str_off). */
#include "ebpf/object_internal.h"
#include "ebpf/verifier.h"

#include "common/safe_open.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef R_BPF_64_32
#define R_BPF_64_32 10
#endif

#define BTF_MAGIC_LE 0xeB9F

struct linfo_rec {
	uint32_t idx;          /* instruction index in its section */
	uint32_t file, line_text, line_col;
	uint32_t id;           /* 1 + its position in .BTF.ext */
};

struct sec_lines {
	size_t sec;            /* ELF section index */
	struct linfo_rec *recs;
	size_t n;
};

struct ctx {
	struct loader *ld;
	const struct gp_program *prog;
	const char *strs;      /* the BTF string section (a copy ending in NUL) */
	size_t strs_len;
	struct sec_lines *secs;
	size_t nsecs;
	const struct elf_func **placed_fn;
	size_t *placed_at;
	size_t nplaced;
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static const struct elf_sec *find_sec(struct loader *ld, const char *name)
{
	for (size_t i = 1; i < ld->shnum; i++)
		if (ld->secs[i].name && !strcmp(ld->secs[i].name, name))
			return &ld->secs[i];
	return NULL;
}

static const char *str_at(const struct ctx *c, uint32_t off)
{
	return off < c->strs_len ? c->strs + off : NULL;
}

/* The BTF string section, copied (NUL-terminated, control characters shown as '?'). */
static char *read_strings(struct loader *ld, size_t *len)
{
	const struct elf_sec *s = find_sec(ld, ".BTF");
	if (!s || !s->data || s->data->d_size < 24)
		return NULL;
	const uint8_t *p = s->data->d_buf;
	size_t size = s->data->d_size;
	if (rd16(p) != BTF_MAGIC_LE)
		return NULL;
	uint32_t hdr = rd32(p + 4), str_off = rd32(p + 16), str_len = rd32(p + 20);
	if (hdr < 24 || hdr > size || str_off > size - hdr || str_len > size - hdr - str_off)
		return NULL;
	char *out = malloc((size_t)str_len + 1);
	if (!out)
		return NULL;
	memcpy(out, p + hdr + str_off, str_len);
	out[str_len] = 0;
	for (size_t i = 0; i < str_len; i++)
		if (out[i] && ((unsigned char)out[i] < 0x20 || out[i] == 0x7f) && out[i] != '\t')
			out[i] = '?';
	*len = (size_t)str_len + 1;
	return out;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct linfo_rec *x = a, *y = b;
	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The line info of every code section; false when .BTF.ext has none or is malformed. */
static bool read_line_info(struct ctx *c)
{
	struct loader *ld = c->ld;
	const struct elf_sec *s = find_sec(ld, ".BTF.ext");
	if (!s || !s->data || s->data->d_size < 24)
		return false;
	const uint8_t *p = s->data->d_buf;
	size_t size = s->data->d_size;
	if (rd16(p) != BTF_MAGIC_LE)
		return false;
	uint32_t hdr = rd32(p + 4), off = rd32(p + 16), len = rd32(p + 20);
	if (hdr < 24 || hdr > size || off > size - hdr || len > size - hdr - off || len < 4)
		return false;
	const uint8_t *q = p + hdr + off, *end = q + len;
	uint32_t rec_size = rd32(q);
	q += 4;
	if (rec_size < 16 || rec_size > 256)
		return false;
	uint32_t id = 0;
	while (end - q >= 8) {
		uint32_t name_off = rd32(q), num = rd32(q + 4);
		q += 8;
		if (num > (size_t)(end - q) / rec_size)
			return false;
		const char *name = str_at(c, name_off);
		const struct elf_sec *code = name ? find_sec(ld, name) : NULL;
		size_t si = code ? (size_t)(code - ld->secs) : 0;
		if (code && code->exec && num) {
			struct sec_lines *sl = realloc(c->secs, (c->nsecs + 1) * sizeof(*sl));
			if (!sl)
				return false;
			c->secs = sl;
			sl = &c->secs[c->nsecs++];
			sl->sec = si;
			sl->n = 0;
			sl->recs = malloc(num * sizeof(*sl->recs));
			if (!sl->recs)
				return false;
			for (uint32_t k = 0; k < num; k++) {
				const uint8_t *r = q + (size_t)k * rec_size;
				uint32_t insn_off = rd32(r);
				if (insn_off % 8 || insn_off >= code->sh.sh_size)
					continue;
				sl->recs[sl->n++] = (struct linfo_rec){insn_off / 8, rd32(r + 4), rd32(r + 8),
								       rd32(r + 12), ++id};
			}
			qsort(sl->recs, sl->n, sizeof(*sl->recs), cmp_rec);
		} else {
			id += num;
		}
		q += (size_t)num * rec_size;
	}
	return c->nsecs > 0;
}

/* The record that covers instruction idx of function fn (the last one at or before it, inside
 * fn), or NULL. */
static const struct linfo_rec *rec_for(const struct ctx *c, const struct elf_func *fn, size_t idx)
{
	const struct sec_lines *sl = NULL;
	for (size_t i = 0; i < c->nsecs; i++)
		if (c->secs[i].sec == fn->sec)
			sl = &c->secs[i];
	if (!sl)
		return NULL;
	size_t lo = 0, hi = sl->n;   /* first record with idx > idx */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sl->recs[mid].idx <= idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || sl->recs[lo - 1].idx < fn->start)
		return NULL;
	return &sl->recs[lo - 1];
}

/* The relocation of instruction idx of section sec, if any. */
static bool reloc_of(struct loader *ld, size_t sec, size_t idx, GElf_Rel *out)
{
	const struct elf_sec *s = &ld->secs[sec];
	if (!s->rel)
		return false;
	const struct elf_sec *rs = &ld->secs[s->rel];
	if (!rs->data)
		return false;
	size_t nrel = rs->sh.sh_size / sizeof(Elf64_Rel);
	for (size_t i = 0; i < nrel && i < INT32_MAX; i++) {
		GElf_Rel r;
		if (gelf_getrel(rs->data, (int)i, &r) && r.r_offset == idx * 8) {
			*out = r;
			return true;
		}
	}
	return false;
}

static const struct elf_func *func_at(struct loader *ld, size_t sec, int64_t idx)
{
	for (size_t i = 0; i < ld->nfuncs; i++) {
		const struct elf_func *f = &ld->funcs[i];
		if (f->sec == sec && idx >= 0 && f->start <= (size_t)idx && (size_t)idx < f->start + f->len)
			return f;
	}
	return NULL;
}

/* The function a call (instruction idx of fn's section) goes to, and the instruction in it. */
static const struct elf_func *callee_of(struct loader *ld, const struct elf_func *fn, size_t idx,
					int64_t *tidx)
{
	const struct bpf_insn *orig = (const struct bpf_insn *)ld->secs[fn->sec].data->d_buf + idx;
	GElf_Rel rel;
	size_t tsec = fn->sec;
	if (reloc_of(ld, fn->sec, idx, &rel)) {
		GElf_Sym sym;
		if (GELF_R_TYPE(rel.r_info) != R_BPF_64_32 || ld_sym(ld, GELF_R_SYM(rel.r_info), &sym, NULL) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= ld->shnum || !ld->secs[sym.st_shndx].exec)
			return NULL;
		tsec = sym.st_shndx;
		*tidx = (int64_t)(sym.st_value / 8) + orig->imm + 1;
	} else {
		*tidx = (int64_t)idx + orig->imm + 1;
	}
	return func_at(ld, tsec, *tidx);
}

static bool place(struct ctx *c, const struct elf_func *fn, size_t at)
{
	for (size_t i = 0; i < c->nplaced; i++)
		if (c->placed_fn[i] == fn)
			return c->placed_at[i] == at;
	if (c->nplaced >= c->ld->nfuncs)
		return false;
	c->placed_fn[c->nplaced] = fn;
	c->placed_at[c->nplaced++] = at;
	return true;
}

/* Lay the program out again; false when it does not match the ELF. */
static bool layout(struct ctx *c)
{
	struct loader *ld = c->ld;
	const struct gp_program *prog = c->prog;
	const struct elf_func *main_fn = NULL;
	for (size_t i = 0; i < ld->nfuncs; i++)
		if (!strcmp(ld->funcs[i].name, prog->name) && !strcmp(ld->secs[ld->funcs[i].sec].name, prog->section))
			main_fn = &ld->funcs[i];
	c->placed_fn = calloc(ld->nfuncs + 1, sizeof(*c->placed_fn));
	c->placed_at = calloc(ld->nfuncs + 1, sizeof(*c->placed_at));
	if (!main_fn || !c->placed_fn || !c->placed_at || !place(c, main_fn, 0))
		return false;
	size_t total = 0;
	for (size_t pi = 0; pi < c->nplaced; pi++) {
		const struct elf_func *fn = c->placed_fn[pi];
		size_t base = c->placed_at[pi];
		const struct elf_sec *s = &ld->secs[fn->sec];
		if (!s->data || base + fn->len > prog->ninsns)
			return false;
		total += fn->len;
		const struct bpf_insn *orig = (const struct bpf_insn *)s->data->d_buf;
		for (size_t k = 0; k < fn->len; k++) {
			const struct bpf_insn *in = &prog->insns[base + k], *o = &orig[fn->start + k];
			if (in->code != o->code || in->dst_reg != o->dst_reg)
				return false;
			if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL) {
				if (o->src_reg != BPF_PSEUDO_CALL)
					return false;
				int64_t tidx;
				const struct elf_func *g = callee_of(ld, fn, fn->start + k, &tidx);
				if (!g)
					return false;
				int64_t t = (int64_t)(base + k) + 1 + in->imm;
				int64_t gat = t - (tidx - (int64_t)g->start);
				if (t < 0 || gat < 0 || !place(c, g, (size_t)gat))
					return false;
			}
			if (in->code == (BPF_LD | BPF_IMM | BPF_DW))
				k++;
		}
	}
	return total == prog->ninsns;
}

static void ctx_free(struct ctx *c)
{
	for (size_t i = 0; i < c->nsecs; i++)
		free(c->secs[i].recs);
	free(c->secs);
	free(c->placed_fn);
	free(c->placed_at);
}

void gp_verify_srcinfo_free(struct gp_verify_srcinfo *si)
{
	if (!si)
		return;
	free(si->lines);
	free(si->func_names);
	free(si->strings);
	free(si);
}

/* Function names go after the BTF strings in si->strings. */
static struct gp_verify_srcinfo *build(struct ctx *c, char *strs)
{
	const struct gp_program *prog = c->prog;
	size_t names = 0;
	for (size_t i = 0; i < c->nplaced; i++)
		names += strlen(c->placed_fn[i]->name) + 1;
	struct gp_verify_srcinfo *si = calloc(1, sizeof(*si));
	char *all = si ? realloc(strs, c->strs_len + names) : NULL;
	if (!all) {
		free(si);
		free(strs);
		return NULL;
	}
	si->strings = all;
	si->n = prog->ninsns;
	si->lines = calloc(prog->ninsns, sizeof(*si->lines));
	si->func_names = calloc(prog->ninsns, sizeof(*si->func_names));
	if (!si->lines || !si->func_names) {
		gp_verify_srcinfo_free(si);
		return NULL;
	}
	c->strs = all;
	char *np = all + c->strs_len;
	bool any = false;
	for (size_t pi = 0; pi < c->nplaced; pi++) {
		const struct elf_func *fn = c->placed_fn[pi];
		size_t base = c->placed_at[pi];
		size_t l = strlen(fn->name) + 1;
		memcpy(np, fn->name, l);
		for (char *q = np; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
		si->func_names[base] = np;
		np += l;
		for (size_t k = 0; k < fn->len; k++) {
			const struct linfo_rec *r = rec_for(c, fn, fn->start + k);
			const char *text = r ? str_at(c, r->line_text) : NULL;
			const char *file = r ? str_at(c, r->file) : NULL;
			if (!text || !*text)
				continue;
			struct gp_verify_line *ln = &si->lines[base + k];
			ln->text = text;
			if (file) {
				const char *slash = strrchr(file, '/');
				ln->file = slash ? slash + 1 : file;
			}
			ln->line = r->line_col >> 10;
			ln->col = r->line_col & 0x3ff;
			ln->rec = r->id;
			any = true;
		}
	}
	if (!any) {   /* names only are still worth having (recursion messages) */
		free(si->lines);
		si->lines = NULL;
	}
	return si;
}

struct gp_verify_srcinfo *gp_verify_srcinfo_load_mem(const void *data, size_t size,
						     const struct gp_program *prog)
{
	if (!data || !prog || !prog->ninsns || size < sizeof(Elf64_Ehdr) || size > GP_OBJ_MAX_FILE ||
	    memcmp(data, ELFMAG, SELFMAG) || elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	void *image = malloc(size);
	if (!image)
		return NULL;
	memcpy(image, data, size);   /* libelf may keep pointers into it */
	char err[64];
	struct loader ld = {.name = "srcinfo", .err = err, .errlen = sizeof(err)};
	struct ctx c = {.ld = &ld, .prog = prog};
	struct gp_verify_srcinfo *si = NULL;
	char *strs = NULL;
	ld.elf = elf_memory(image, size);
	if (!ld.elf || ld_read_elf(&ld) || !layout(&c))
		goto out;
	strs = read_strings(&ld, &c.strs_len);
	c.strs = strs;
	if (strs)
		read_line_info(&c);   /* without it: function names only */
	else
		c.strs_len = 0;
	si = build(&c, strs);     /* takes strs */
	strs = NULL;
out:
	free(strs);
	ctx_free(&c);
	if (ld.secs)
		for (size_t i = 0; i < ld.shnum; i++)
			free(ld.secs[i].rel_at);
	free(ld.secs);
	free(ld.funcs);
	free(ld.map_syms);
	if (ld.elf)
		elf_end(ld.elf);
	free(image);
	return si;
}

struct gp_verify_srcinfo *gp_verify_srcinfo_load(const char *path, const struct gp_program *prog)
{
	char err[256];
	int fd = gp_open_read(path, 0, err, sizeof(err));
	if (fd < 0)
		return NULL;
	void *data = NULL;
	size_t len = 0;
	int rc = gp_read_all(fd, GP_OBJ_MAX_FILE, &data, &len);
	close(fd);
	if (rc)
		return NULL;
	struct gp_verify_srcinfo *si = gp_verify_srcinfo_load_mem(data, len, prog);
	free(data);
	return si;
}
