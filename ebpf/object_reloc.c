/* A program's final instructions: its own function, then every subprogram it calls (transitively),
 * appended once each, with BPF-to-BPF call offsets rewritten for the new layout and map
 * references resolved from the ELF relocations:
 *   R_BPF_64_64 on ld_imm64 against a map symbol (.maps / maps): src_reg = BPF_PSEUDO_MAP_FD,
 *       imm = map index;
 *   R_BPF_64_64 against a global data section or a symbol in it: src_reg = BPF_PSEUDO_MAP_VALUE,
 *       imm = map index, next imm = symbol value + the offset clang left in imm;
 *   R_BPF_64_32 on a call: the callee is at symbol value / 8 + imm + 1 in the symbol's section
 *       (global functions: imm = -1 against the function; static ones: against the section);
 *   calls without a relocation stay inside their section: target = own index + imm + 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object_internal.h"

#ifndef R_BPF_64_64
#define R_BPF_64_64 1
#endif
#ifndef R_BPF_64_32
#define R_BPF_64_32 10
#endif

struct placed {
	const struct elf_func *fn;
	size_t at;              /* index of its first instruction in the output */
};

struct builder {
	struct loader *ld;
	const char *prog;
	struct bpf_insn *out;
	size_t n, cap;
	struct placed *placed;
	size_t nplaced;
};

static const struct elf_func *func_at(const struct loader *ld, size_t sec, size_t idx)
{
	for (size_t i = 0; i < ld->nfuncs; i++)
		if (ld->funcs[i].sec == sec && ld->funcs[i].start <= idx && idx < ld->funcs[i].start + ld->funcs[i].len)
			return &ld->funcs[i];
	return NULL;
}

static int map_of_symbol(struct loader *ld, const GElf_Sym *sym)
{
	for (size_t i = 0; i < ld->nsym_maps; i++) {
		const struct map_sym *m = &ld->map_syms[i];
		if (m->sec == sym->st_shndx && m->off == sym->st_value)
			return (int)i;
	}
	return -1;
}

/* Append fn unless already there; returns its output index through *at. */
static int place(struct builder *b, const struct elf_func *fn, size_t *at)
{
	for (size_t i = 0; i < b->nplaced; i++)
		if (b->placed[i].fn == fn) {
			*at = b->placed[i].at;
			return 0;
		}
	struct loader *ld = b->ld;
	if (b->n + fn->len > GP_OBJ_MAX_PROG_INSNS)
		return ld_fail(ld, E2BIG, "program '%s': more than %u instructions with its subprograms", b->prog,
			       GP_OBJ_MAX_PROG_INSNS);
	if (b->n + fn->len > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + fn->len)
			cap *= 2;
		struct bpf_insn *p = realloc(b->out, cap * sizeof *p);
		if (!p)
			return ld_fail(ld, ENOMEM, "out of memory");
		b->out = p;
		b->cap = cap;
	}
	struct placed *pl = realloc(b->placed, (b->nplaced + 1) * sizeof *pl);
	if (!pl)
		return ld_fail(ld, ENOMEM, "out of memory");
	b->placed = pl;
	b->placed[b->nplaced++] = (struct placed){ .fn = fn, .at = b->n };
	memcpy(b->out + b->n, (const uint8_t *)ld->secs[fn->sec].data->d_buf + fn->start * sizeof *b->out,
	       fn->len * sizeof *b->out);
	*at = b->n;
	b->n += fn->len;
	return 0;
}

/* The relocation (if any) of instruction idx of section sec; the per-instruction index is built
 * (and every relocation of the section validated) on first use. */
static int reloc_for(struct loader *ld, size_t sec, size_t idx, GElf_Rel *rel, bool *found)
{
	*found = false;
	struct elf_sec *s = &ld->secs[sec];
	if (!s->rel)
		return 0;
	const struct elf_sec *rs = &ld->secs[s->rel];
	size_t ninsn = s->sh.sh_size / sizeof(struct bpf_insn);
	if (!s->rel_at) {
		s->rel_at = malloc((ninsn ? ninsn : 1) * sizeof *s->rel_at);
		if (!s->rel_at)
			return ld_fail(ld, ENOMEM, "out of memory");
		for (size_t i = 0; i < ninsn; i++)
			s->rel_at[i] = -1;
		size_t nrel = rs->sh.sh_size / sizeof(Elf64_Rel);
		for (size_t i = 0; i < nrel && i < INT32_MAX; i++) {
			GElf_Rel r;
			if (!gelf_getrel(rs->data, (int)i, &r))
				return ld_fail(ld, EINVAL, "relocation %zu of '%s' unreadable", i, rs->name);
			if (r.r_offset % 8 || r.r_offset >= s->sh.sh_size)
				return ld_fail(ld, EINVAL, "relocation %zu of '%s': offset %llu is not an instruction of '%s'",
					       i, rs->name, (unsigned long long)r.r_offset, s->name);
			uint32_t type = (uint32_t)GELF_R_TYPE(r.r_info);
			if (type != R_BPF_64_64 && type != R_BPF_64_32)
				return ld_fail(ld, EINVAL, "relocation %zu of '%s': type %u not supported in code", i,
					       rs->name, type);
			size_t at = r.r_offset / sizeof(struct bpf_insn);
			if (s->rel_at[at] >= 0)
				return ld_fail(ld, EINVAL, "two relocations for insn %zu of '%s'", at, s->name);
			s->rel_at[at] = (int32_t)i;
		}
	}
	if (idx >= ninsn || s->rel_at[idx] < 0)
		return 0;
	if (!gelf_getrel(rs->data, s->rel_at[idx], rel))
		return ld_fail(ld, EINVAL, "relocation of insn %zu of '%s' unreadable", idx, s->name);
	*found = true;
	return 0;
}

/* Resolve the ld_imm64 at out[at] (from sec/idx) against its relocation. */
static int resolve_ld64(struct builder *b, size_t at, size_t sec, size_t idx, const GElf_Rel *rel)
{
	struct loader *ld = b->ld;
	struct bpf_insn *in = &b->out[at];
	GElf_Sym sym;
	const char *name;
	if (ld_sym(ld, GELF_R_SYM(rel->r_info), &sym, &name))
		return -EINVAL;
	if (in->code != (BPF_LD | BPF_IMM | BPF_DW) || idx + 1 >= ld->secs[sec].sh.sh_size / 8)
		return ld_fail(ld, EINVAL, "program '%s': 64-bit relocation against '%s' is not on a complete ld_imm64"
			       " (section '%s', insn %zu)", b->prog, name, ld->secs[sec].name, idx);
	if (sym.st_shndx == SHN_UNDEF)
		return ld_fail(ld, EINVAL, "program '%s': extern '%s' is not supported (insn %zu of '%s')", b->prog, name,
			       idx, ld->secs[sec].name);
	if (sym.st_shndx >= ld->shnum)
		return ld_fail(ld, EINVAL, "program '%s': symbol '%s' in special section %u", b->prog, name,
			       (unsigned)sym.st_shndx);
	const struct elf_sec *target = &ld->secs[sym.st_shndx];
	if (sym.st_shndx == ld->btf_maps_sec || sym.st_shndx == ld->legacy_maps_sec) {
		int mi = map_of_symbol(ld, &sym);
		if (mi < 0)
			return ld_fail(ld, EINVAL, "program '%s': relocation against '%s' at offset %llu of '%s' names no map",
				       b->prog, name, (unsigned long long)sym.st_value, target->name);
		in[0].src_reg = BPF_PSEUDO_MAP_FD;
		in[0].imm = mi;
		in[1].imm = 0;
		return 0;
	}
	if (target->data_map >= 0) {
		int64_t off = (int64_t)sym.st_value + in[0].imm;
		if (off < 0 || (uint64_t)off > target->sh.sh_size)
			return ld_fail(ld, EINVAL, "program '%s': reference to '%s'%+d is outside section '%s' (%llu bytes)",
				       b->prog, name, in[0].imm, target->name, (unsigned long long)target->sh.sh_size);
		in[0].src_reg = BPF_PSEUDO_MAP_VALUE;
		in[0].imm = target->data_map;
		in[1].imm = (int32_t)off;
		return 0;
	}
	if (target->exec)
		return ld_fail(ld, EINVAL, "program '%s': function pointer to '%s' (insn %zu of '%s') is not supported",
			       b->prog, name, idx, ld->secs[sec].name);
	return ld_fail(ld, EINVAL, "program '%s': relocation against '%s' in section '%s', which is neither a map nor"
		       " global data", b->prog, name, target->name);
}

static int resolve_call(struct builder *b, size_t at, size_t sec, size_t idx, const GElf_Rel *rel, bool has_rel)
{
	struct loader *ld = b->ld;
	const struct bpf_insn *in = &b->out[at];
	size_t tsec = sec;
	int64_t tidx;
	if (has_rel) {
		GElf_Sym sym;
		const char *name;
		if (ld_sym(ld, GELF_R_SYM(rel->r_info), &sym, &name))
			return -EINVAL;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= ld->shnum || !ld->secs[sym.st_shndx].exec ||
		    sym.st_value % 8)
			return ld_fail(ld, EINVAL, "program '%s': call to '%s', which is not a BPF function", b->prog, name);
		tsec = sym.st_shndx;
		tidx = (int64_t)(sym.st_value / 8) + in->imm + 1;
	} else {
		tidx = (int64_t)idx + in->imm + 1;
	}
	const struct elf_func *fn = tidx >= 0 ? func_at(ld, tsec, (size_t)tidx) : NULL;
	if (!fn)
		return ld_fail(ld, EINVAL, "program '%s': call at insn %zu of '%s' goes to insn %lld of '%s', which is in"
			       " no function", b->prog, idx, ld->secs[sec].name, (long long)tidx, ld->secs[tsec].name);
	size_t fat;
	int rc = place(b, fn, &fat);
	if (rc)
		return rc;
	int64_t rel_off = (int64_t)(fat + ((size_t)tidx - fn->start)) - (int64_t)(at + 1);
	b->out[at].imm = (int32_t)rel_off;
	return 0;
}

int ld_build_program(struct loader *ld, const struct elf_func *main_fn, struct bpf_insn **out, size_t *n)
{
	struct builder b = { .ld = ld, .prog = main_fn->name };
	size_t at;
	int rc = place(&b, main_fn, &at);
	/* Walk placed functions in order; placing a callee appends it, so this reaches them all. */
	for (size_t pi = 0; !rc && pi < b.nplaced; pi++) {
		const struct elf_func *fn = b.placed[pi].fn;
		size_t base = b.placed[pi].at;
		for (size_t k = 0; !rc && k < fn->len; k++) {
			size_t idx = fn->start + k, o = base + k;
			GElf_Rel rel;
			bool has_rel;
			if ((rc = reloc_for(ld, fn->sec, idx, &rel, &has_rel)))
				break;
			const struct bpf_insn in = b.out[o];
			bool is_call = in.code == (BPF_JMP | BPF_CALL) && in.src_reg == BPF_PSEUDO_CALL;
			if (has_rel && GELF_R_TYPE(rel.r_info) == R_BPF_64_64) {
				if (k + 1 >= fn->len)
					rc = ld_fail(ld, EINVAL, "program '%s': ld_imm64 at the end of function '%s'", b.prog,
						     fn->name);
				else
					rc = resolve_ld64(&b, o, fn->sec, idx, &rel);
			} else if (has_rel && !is_call) {
				rc = ld_fail(ld, EINVAL, "program '%s': call relocation on a non-call instruction (insn %zu of '%s')",
					     b.prog, idx, ld->secs[fn->sec].name);
			} else if (is_call) {
				rc = resolve_call(&b, o, fn->sec, idx, &rel, has_rel);
			}
			if (!rc && in.code == (BPF_LD | BPF_IMM | BPF_DW))
				k++;   /* skip the second half */
		}
	}
	free(b.placed);
	if (rc) {
		free(b.out);
		return rc;
	}
	*out = b.out;
	*n = b.n;
	return 0;
}
