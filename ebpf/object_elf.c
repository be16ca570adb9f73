/* ELF side of the loader (libelf): sections, the symbol table and the functions in code
 * sections, validated so that later passes can index them without further checks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object_internal.h"
#include "ptx-frontend/escape.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

int ld_fail(struct loader *ld, int code, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (ld->err && ld->errlen) {
		snprintf(ld->err, ld->errlen, "%s: %s", ld->name, msg);
		/* names come from the object: keep the message one printable line, and say which
		 * bytes they held (an escape sequence or a C1 control would reach the terminal) */
		gp_escape_line(ld->err, ld->errlen);
	}
	return -code;
}

bool ld_name_ok(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int ld_sym(struct loader *ld, size_t idx, GElf_Sym *sym, const char **name)
{
	if (idx >= ld->nsyms || !gelf_getsym(ld->symdata, (int)idx, sym))
		return ld_fail(ld, EINVAL, "symbol %zu out of range (%zu symbols)", idx, ld->nsyms);
	if (name) {
		const char *n = elf_strptr(ld->elf, ld->strtab, sym->st_name);
		*name = n ? n : "";
	}
	return 0;
}

static int cmp_func(const void *a, const void *b)
{
	const struct elf_func *x = a, *y = b;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int read_sections(struct loader *ld)
{
	size_t shstrndx;
	if (elf_getshdrnum(ld->elf, &ld->shnum) || elf_getshdrstrndx(ld->elf, &shstrndx))
		return ld_fail(ld, EINVAL, "bad ELF section headers: %s", elf_errmsg(-1));
	if (ld->shnum < 2 || ld->shnum > 65536)
		return ld_fail(ld, EINVAL, "%zu ELF sections", ld->shnum);
	ld->secs = calloc(ld->shnum, sizeof *ld->secs);
	if (!ld->secs)
		return ld_fail(ld, ENOMEM, "out of memory");
	size_t symtab = 0;
	for (size_t i = 1; i < ld->shnum; i++) {
		struct elf_sec *s = &ld->secs[i];
		Elf_Scn *scn = elf_getscn(ld->elf, i);
		s->data_map = -1;
		if (!scn || !gelf_getshdr(scn, &s->sh))
			return ld_fail(ld, EINVAL, "bad ELF section header %zu: %s", i, elf_errmsg(-1));
		s->name = elf_strptr(ld->elf, shstrndx, s->sh.sh_name);
		if (!s->name)
			return ld_fail(ld, EINVAL, "section %zu has no name", i);
		if (s->sh.sh_type != SHT_NOBITS && s->sh.sh_size) {
			s->data = elf_getdata(scn, NULL);
			if (!s->data || s->data->d_size != s->sh.sh_size || (!s->data->d_buf && s->data->d_size))
				return ld_fail(ld, EINVAL, "section '%s': data unreadable (truncated object?)", s->name);
		}
		s->exec = s->sh.sh_type == SHT_PROGBITS && (s->sh.sh_flags & SHF_EXECINSTR);
		if (s->exec && s->sh.sh_size % sizeof(struct bpf_insn))
			return ld_fail(ld, EINVAL, "code section '%s': size %llu is not a multiple of 8", s->name,
				       (unsigned long long)s->sh.sh_size);
		if (s->sh.sh_type == SHT_SYMTAB) {
			if (symtab)
				return ld_fail(ld, EINVAL, "more than one symbol table");
			symtab = i;
		}
		if (strcmp(s->name, ".maps") == 0)
			ld->btf_maps_sec = i;
		else if (strcmp(s->name, "maps") == 0)
			ld->legacy_maps_sec = i;
	}
	if (!symtab)
		return ld_fail(ld, EINVAL, "no symbol table (not a clang-built BPF object?)");
	struct elf_sec *st = &ld->secs[symtab];
	if (!st->data || st->sh.sh_entsize != sizeof(Elf64_Sym) || st->sh.sh_link == 0 || st->sh.sh_link >= ld->shnum ||
	    ld->secs[st->sh.sh_link].sh.sh_type != SHT_STRTAB)
		return ld_fail(ld, EINVAL, "malformed symbol table");
	ld->symdata = st->data;
	ld->nsyms = st->sh.sh_size / sizeof(Elf64_Sym);
	ld->strtab = st->sh.sh_link;
	/* Relocation sections: .rel<sec> for code sections (others, e.g. .rel.BTF, are not ours). */
	for (size_t i = 1; i < ld->shnum; i++) {
		struct elf_sec *s = &ld->secs[i];
		if (s->sh.sh_type == SHT_RELA && s->sh.sh_info < ld->shnum && ld->secs[s->sh.sh_info].exec)
			return ld_fail(ld, EINVAL, "section '%s': RELA relocations are not used by BPF objects", s->name);
		if (s->sh.sh_type != SHT_REL)
			continue;
		if (s->sh.sh_info == 0 || s->sh.sh_info >= ld->shnum)
			return ld_fail(ld, EINVAL, "relocation section '%s' names section %u", s->name, (unsigned)s->sh.sh_info);
		struct elf_sec *t = &ld->secs[s->sh.sh_info];
		if (!t->exec)
			continue;
		if (s->sh.sh_link != symtab || s->sh.sh_entsize != sizeof(Elf64_Rel) || s->sh.sh_size % sizeof(Elf64_Rel))
			return ld_fail(ld, EINVAL, "relocation section '%s' is malformed", s->name);
		if (t->rel)
			return ld_fail(ld, EINVAL, "two relocation sections for '%s'", t->name);
		t->rel = i;
	}
	return 0;
}

static int read_functions(struct loader *ld)
{
	size_t cap = 0;
	for (size_t i = 1; i < ld->nsyms; i++) {
		GElf_Sym sym;
		const char *name;
		if (ld_sym(ld, i, &sym, &name))
			return -EINVAL;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= ld->shnum || !ld->secs[sym.st_shndx].exec)
			return ld_fail(ld, EINVAL, "function '%s' is not in a code section", name);
		const struct elf_sec *s = &ld->secs[sym.st_shndx];
		if (sym.st_value % 8 || sym.st_size % 8 || sym.st_size == 0 || sym.st_value > s->sh.sh_size ||
		    sym.st_size > s->sh.sh_size - sym.st_value)
			return ld_fail(ld, EINVAL, "function '%s': offset %llu size %llu outside section '%s' (%llu bytes)",
				       name, (unsigned long long)sym.st_value, (unsigned long long)sym.st_size, s->name,
				       (unsigned long long)s->sh.sh_size);
		if (ld->nfuncs == cap) {
			cap = cap ? cap * 2 : 16;
			struct elf_func *p = realloc(ld->funcs, cap * sizeof *p);
			if (!p)
				return ld_fail(ld, ENOMEM, "out of memory");
			ld->funcs = p;
		}
		ld->funcs[ld->nfuncs++] = (struct elf_func){
			.name = name, .sec = sym.st_shndx, .start = sym.st_value / 8, .len = sym.st_size / 8,
			.global = GELF_ST_BIND(sym.st_info) != STB_LOCAL,
		};
	}
	if (ld->nfuncs)
		qsort(ld->funcs, ld->nfuncs, sizeof *ld->funcs, cmp_func);
	for (size_t i = 1; i < ld->nfuncs; i++) {
		const struct elf_func *a = &ld->funcs[i - 1], *b = &ld->funcs[i];
		if (a->sec == b->sec && a->start + a->len > b->start)
			return ld_fail(ld, EINVAL, "functions '%s' and '%s' overlap", a->name, b->name);
	}
	return 0;
}

#ifndef R_BPF_64_64
#define R_BPF_64_64 1
#endif
#ifndef R_BPF_64_32
#define R_BPF_64_32 10
#endif

/* Every relocation of every code section, before libbpf sees them (so the messages are ours, and
 * the same for objects libbpf is shown without relocations). */
static int check_relocations(struct loader *ld)
{
	for (size_t si = 1; si < ld->shnum; si++) {
		const struct elf_sec *s = &ld->secs[si];
		if (!s->exec || !s->rel)
			continue;
		const struct elf_sec *rs = &ld->secs[s->rel];
		size_t nrel = rs->sh.sh_size / sizeof(Elf64_Rel), ninsn = s->sh.sh_size / sizeof(struct bpf_insn);
		const uint8_t *code = s->data ? s->data->d_buf : NULL;   /* may be misaligned: memcpy */
		for (size_t i = 0; i < nrel; i++) {
			GElf_Rel r;
			GElf_Sym sym;
			const char *name;
			if (!gelf_getrel(rs->data, (int)i, &r))
				return ld_fail(ld, EINVAL, "relocation %zu of '%s' unreadable", i, rs->name);
			if (r.r_offset % 8 || r.r_offset >= s->sh.sh_size)
				return ld_fail(ld, EINVAL, "relocation %zu of '%s': offset %llu is not an instruction of '%s'",
					       i, rs->name, (unsigned long long)r.r_offset, s->name);
			uint32_t type = (uint32_t)GELF_R_TYPE(r.r_info);
			if (type != R_BPF_64_64 && type != R_BPF_64_32)
				return ld_fail(ld, EINVAL, "relocation %zu of '%s': type %u not supported in code", i, rs->name,
					       type);
			if (ld_sym(ld, GELF_R_SYM(r.r_info), &sym, &name))
				return -EINVAL;
			size_t idx = r.r_offset / 8;
			const char *fn = s->name;
			for (size_t f = 0; f < ld->nfuncs; f++)
				if (ld->funcs[f].sec == si && ld->funcs[f].start <= idx && idx < ld->funcs[f].start + ld->funcs[f].len)
					fn = ld->funcs[f].name;
			struct bpf_insn insn;
			memcpy(&insn, code + idx * sizeof insn, sizeof insn);
			const struct bpf_insn *in = &insn;
			if (type == R_BPF_64_64 && (in->code != (BPF_LD | BPF_IMM | BPF_DW) || idx + 1 >= ninsn))
				return ld_fail(ld, EINVAL, "program '%s': 64-bit relocation against '%s' is not on a complete"
					       " ld_imm64 (section '%s', insn %zu)", fn, name, s->name, idx);
			if (type == R_BPF_64_32 && (in->code != (BPF_JMP | BPF_CALL) || in->src_reg != BPF_PSEUDO_CALL))
				return ld_fail(ld, EINVAL, "program '%s': call relocation against '%s' on a non-call instruction"
					       " (section '%s', insn %zu)", fn, name, s->name, idx);
		}
	}
	return 0;
}

int ld_read_elf(struct loader *ld)
{
	GElf_Ehdr eh;
	if (elf_kind(ld->elf) != ELF_K_ELF || !gelf_getehdr(ld->elf, &eh))
		return ld_fail(ld, EINVAL, "not an ELF file");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return ld_fail(ld, EINVAL, "not a 64-bit ELF object (BPF objects are ELF64)");
	if (eh.e_machine != EM_BPF)
		return ld_fail(ld, EINVAL, "not a BPF object (ELF machine %u, expected %u): build it with clang -target bpf",
			       (unsigned)eh.e_machine, EM_BPF);
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return ld_fail(ld, EINVAL, "big-endian BPF object: build it with clang -target bpf (little endian)");
	if (eh.e_type != ET_REL)
		return ld_fail(ld, EINVAL, "not a relocatable object (ELF type %u)", (unsigned)eh.e_type);
	if (read_sections(ld) || read_functions(ld) || check_relocations(ld))
		return -EINVAL;
	return 0;
}
