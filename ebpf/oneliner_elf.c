/* The one-liner's BPF ELF image, as clang would leave it: program sections (one per distinct
 * attach point, each probe a global function "oneliner_N" in it), their relocations (R_BPF_64_64
 * on each ld_imm64 against the map's symbol), .maps with libbpf's BTF map definitions, license,
 * and .BTF made with libbpf's BTF writer. Key types are gpuprobe's printing typedefs
 * (include/gpuprobe/output.h), an lhist map's variable carries the gp_lhist_step:N decl tag, so
 * the output prints each map as the probe author's objects do. libelf writes the file into a
 * memfd, whose bytes are returned. */
#include <bpf/btf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ebpf/oneliner_internal.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif
#define R_BPF_64_64 1
#define MAP_DEF_SIZE 32   /* four pointers: type, max_entries, key, value */

/* ---- BTF --------------------------------------------------------------------------------- */

struct btf_ids {
	int u32, u64, i32, idx, kernel, api, log2, lhist, nokey;
};

static int uint_ptr(struct btf *btf, const struct btf_ids *t, uint32_t v)
{
	int arr = btf__add_array(btf, t->idx, t->i32, v);
	return arr < 0 ? arr : btf__add_ptr(btf, arr);
}

static int key_type(struct btf *btf, const struct btf_ids *t, const struct ol_map *m)
{
	if (m->agg == A_HIST)
		return t->log2;
	if (m->agg == A_LHIST)
		return t->lhist;
	if (!m->nkeys)
		return t->nokey;
	if (m->nkeys == 1)
		return m->key_type == OL_KEY_KERNEL ? t->kernel : m->key_type == OL_KEY_API ? t->api : t->u64;
	char name[96];
	snprintf(name, sizeof name, "%s_key", m->name);
	int s = btf__add_struct(btf, name, m->key_size);
	for (size_t i = 0; s > 0 && i < m->nkeys; i++) {
		int ft = m->key_types[i] == OL_KEY_KERNEL ? t->kernel : m->key_types[i] == OL_KEY_API ? t->api : t->u64;
		if (btf__add_field(btf, m->key_names[i], ft, 8 * m->key_off[i], 0))
			return -1;
	}
	return s;
}

static int build_btf(const struct ol_program *p, void **raw, size_t *size)
{
	struct btf *btf = btf__new_empty();
	if (!btf)
		return -ENOMEM;
	struct btf_ids t;
	int rc = -EINVAL;
	t.u32 = btf__add_int(btf, "unsigned int", 4, 0);
	t.u64 = btf__add_int(btf, "unsigned long long", 8, 0);
	t.i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	t.idx = btf__add_int(btf, "__ARRAY_SIZE_TYPE__", 4, 0);
	t.kernel = btf__add_typedef(btf, "gp_kernel_id_t", t.u32);
	t.api = btf__add_typedef(btf, "gp_api_id_t", t.u32);
	t.log2 = btf__add_typedef(btf, "gp_log2_key_t", t.u32);
	t.lhist = btf__add_typedef(btf, "gp_lhist_key_t", t.u32);
	t.nokey = btf__add_typedef(btf, "gp_no_key_t", t.u32);
	if (t.u32 < 0 || t.u64 < 0 || t.i32 < 0 || t.idx < 0 || t.kernel < 0 || t.api < 0 || t.log2 < 0 ||
	    t.lhist < 0 || t.nokey < 0)
		goto out;
	int vars[OL_MAX_MAPS];
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct ol_map *m = &p->maps[i];
		int type = uint_ptr(btf, &t, m->type), max = uint_ptr(btf, &t, m->max_entries);
		int k = key_type(btf, &t, m);
		int kp = k > 0 ? btf__add_ptr(btf, k) : -1, vp = btf__add_ptr(btf, t.u64);
		if (type < 0 || max < 0 || kp < 0 || vp < 0)
			goto out;
		int s = btf__add_struct(btf, NULL, MAP_DEF_SIZE);
		if (s < 0 || btf__add_field(btf, "type", type, 0, 0) || btf__add_field(btf, "max_entries", max, 64, 0) ||
		    btf__add_field(btf, "key", kp, 128, 0) || btf__add_field(btf, "value", vp, 192, 0))
			goto out;
		if ((vars[i] = btf__add_var(btf, m->name, BTF_VAR_GLOBAL_ALLOCATED, s)) < 0)
			goto out;
		if (m->agg == A_LHIST) {
			char tag[48];
			snprintf(tag, sizeof tag, "gp_lhist_step:%llu", (unsigned long long)m->lstep);
			if (btf__add_decl_tag(btf, tag, vars[i], -1) < 0)
				goto out;
		}
	}
	if (btf__add_datasec(btf, ".maps", (uint32_t)(MAP_DEF_SIZE * p->nmaps)) < 0)
		goto out;
	for (size_t i = 0; i < p->nmaps; i++)
		if (btf__add_datasec_var_info(btf, vars[i], (uint32_t)(MAP_DEF_SIZE * i), MAP_DEF_SIZE))
			goto out;
	uint32_t n;
	const void *data = btf__raw_data(btf, &n);
	if (!data || !(*raw = malloc(n))) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(*raw, data, n);
	*size = n;
	rc = 0;
out:
	btf__free(btf);
	return rc;
}

/* ---- ELF --------------------------------------------------------------------------------- */

struct strtab {
	char *buf;
	size_t len, cap;
	int failed;
};

static size_t str_add(struct strtab *s, const char *str)
{
	size_t l = strlen(str) + 1;
	if (s->len + l > s->cap) {
		size_t cap = (s->len + l) * 2 + 64;
		char *b = realloc(s->buf, cap);
		if (!b) {
			s->failed = 1;
			return 0;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, str, l);
	s->len += l;
	return s->len - l;
}

static Elf_Scn *add_scn(Elf *e, size_t name, uint32_t type, uint64_t flags, void *buf, size_t size,
			size_t align, size_t entsize)
{
	Elf_Scn *scn = elf_newscn(e);
	if (!scn)
		return NULL;
	Elf_Data *d = elf_newdata(scn);
	if (!d)
		return NULL;
	d->d_buf = buf;
	d->d_size = size;
	d->d_type = ELF_T_BYTE;
	d->d_align = align;
	d->d_version = EV_CURRENT;
	GElf_Shdr sh;
	if (!gelf_getshdr(scn, &sh))
		return NULL;
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align;
	sh.sh_entsize = entsize;
	return gelf_update_shdr(scn, &sh) ? scn : NULL;
}

static int set_link(Elf_Scn *scn, size_t link, size_t info)
{
	GElf_Shdr sh;
	if (!gelf_getshdr(scn, &sh))
		return -1;
	sh.sh_link = (uint32_t)link;
	sh.sh_info = (uint32_t)info;
	return gelf_update_shdr(scn, &sh) ? 0 : -1;
}

struct image {
	struct strtab str;
	/* per distinct section: its probes' code, concatenated */
	size_t nsecs;
	const char *secname[OL_MAX_PROBES];
	struct bpf_insn *code[OL_MAX_PROBES];
	size_t ninsns[OL_MAX_PROBES];
	Elf64_Rel *rels[OL_MAX_PROBES];
	size_t nrels[OL_MAX_PROBES];
	size_t probe_sec[OL_MAX_PROBES], probe_at[OL_MAX_PROBES];
	Elf64_Sym *syms;
	size_t nsyms;
	void *btf;
	size_t btf_size;
	void *maps;
};

static void image_free(struct image *im)
{
	free(im->str.buf);
	for (size_t i = 0; i < im->nsecs; i++) {
		free(im->code[i]);
		free(im->rels[i]);
	}
	free(im->syms);
	free(im->btf);
	free(im->maps);
}

/* Group the probes' code by section name; map relocations point at symbols 1 + nprobes + map. */
static int layout(const struct ol_program *p, const struct ol_code *codes, struct image *im)
{
	for (size_t i = 0; i < p->nprobes; i++) {
		size_t s = 0;
		while (s < im->nsecs && strcmp(im->secname[s], p->probes[i].section))
			s++;
		if (s == im->nsecs)
			im->secname[im->nsecs++] = p->probes[i].section;
		const struct ol_code *c = &codes[i];
		struct bpf_insn *code = realloc(im->code[s], (im->ninsns[s] + c->n) * sizeof *code);
		Elf64_Rel *rels = realloc(im->rels[s], (im->nrels[s] + c->nrelocs + 1) * sizeof *rels);
		if (code)
			im->code[s] = code;
		if (rels)
			im->rels[s] = rels;
		if (!code || !rels)
			return -ENOMEM;
		im->probe_sec[i] = s;
		im->probe_at[i] = im->ninsns[s];
		memcpy(code + im->ninsns[s], c->insns, c->n * sizeof *code);
		for (size_t r = 0; r < c->nrelocs; r++) {
			Elf64_Rel *rel = &rels[im->nrels[s]++];
			rel->r_offset = (im->ninsns[s] + c->relocs[r].insn) * sizeof(struct bpf_insn);
			rel->r_info = ELF64_R_INFO(1 + p->nprobes + c->relocs[r].map, R_BPF_64_64);
		}
		im->ninsns[s] += c->n;
	}
	return 0;
}

int ol_write_elf(const struct ol_program *p, const struct ol_code *codes, void **out, size_t *size, char *err,
		 size_t errlen)
{
	struct image im = {0};
	static char license[] = "GPL";
	int rc = -ENOMEM, fd = -1;
	Elf *e = NULL;
	*out = NULL;
	if ((rc = layout(p, codes, &im)) || (rc = build_btf(p, &im.btf, &im.btf_size))) {
		snprintf(err, errlen, rc == -ENOMEM ? "out of memory" : "cannot describe the maps in BTF");
		goto out;
	}
	rc = -ENOMEM;
	im.nsyms = 1 + p->nprobes + p->nmaps + 1;
	im.syms = calloc(im.nsyms, sizeof *im.syms);
	im.maps = calloc(p->nmaps ? p->nmaps : 1, MAP_DEF_SIZE);
	str_add(&im.str, "");   /* offset 0: the empty name */
	if (!im.syms || !im.maps || !im.str.buf)
		goto fail;
	/* section indexes: 1 .strtab, 2.. program sections, then their .rel, .maps, license, .BTF,
	 * .symtab */
	size_t strtab_idx = 1, prog0 = 2, rel0 = prog0 + im.nsecs, maps_idx = rel0 + im.nsecs;
	size_t lic_idx = maps_idx + 1, btf_idx = lic_idx + 1, sym_idx = btf_idx + 1;
	for (size_t i = 0; i < p->nprobes; i++) {
		char name[32];
		snprintf(name, sizeof name, "oneliner_%zu", i + 1);
		Elf64_Sym *s = &im.syms[1 + i];
		s->st_name = (uint32_t)str_add(&im.str, name);
		s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s->st_shndx = (uint16_t)(prog0 + im.probe_sec[i]);
		s->st_value = im.probe_at[i] * sizeof(struct bpf_insn);
		s->st_size = codes[i].n * sizeof(struct bpf_insn);
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		Elf64_Sym *s = &im.syms[1 + p->nprobes + i];
		s->st_name = (uint32_t)str_add(&im.str, p->maps[i].name);
		s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
		s->st_shndx = (uint16_t)maps_idx;
		s->st_value = MAP_DEF_SIZE * i;
		s->st_size = MAP_DEF_SIZE;
	}
	Elf64_Sym *ls = &im.syms[im.nsyms - 1];
	ls->st_name = (uint32_t)str_add(&im.str, "LICENSE");
	ls->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
	ls->st_shndx = (uint16_t)lic_idx;
	ls->st_size = sizeof license;
	size_t names[OL_MAX_PROBES], relnames[OL_MAX_PROBES];
	for (size_t s = 0; s < im.nsecs; s++) {
		char rel[160];
		snprintf(rel, sizeof rel, ".rel%s", im.secname[s]);
		names[s] = str_add(&im.str, im.secname[s]);
		relnames[s] = str_add(&im.str, rel);
	}
	size_t n_strtab = str_add(&im.str, ".strtab"), n_maps = str_add(&im.str, ".maps"),
	       n_lic = str_add(&im.str, "license"), n_btf = str_add(&im.str, ".BTF"),
	       n_sym = str_add(&im.str, ".symtab");
	if (!im.str.buf || im.str.failed)
		goto fail;

	if (elf_version(EV_CURRENT) == EV_NONE || (fd = memfd_create("gpuprobe-oneliner", MFD_CLOEXEC)) < 0 ||
	    !(e = elf_begin(fd, ELF_C_WRITE, NULL)))
		goto elf_fail;
	Elf64_Ehdr *eh = elf64_newehdr(e);
	if (!eh)
		goto elf_fail;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_REL;
	eh->e_machine = EM_BPF;
	eh->e_version = EV_CURRENT;
	eh->e_shstrndx = (uint16_t)strtab_idx;
	if (!add_scn(e, n_strtab, SHT_STRTAB, 0, im.str.buf, im.str.len, 1, 0))
		goto elf_fail;
	for (size_t s = 0; s < im.nsecs; s++)
		if (!add_scn(e, names[s], SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, im.code[s],
			     im.ninsns[s] * sizeof(struct bpf_insn), 8, 0))
			goto elf_fail;
	for (size_t s = 0; s < im.nsecs; s++) {
		Elf_Scn *r = add_scn(e, relnames[s], SHT_REL, 0, im.rels[s], im.nrels[s] * sizeof(Elf64_Rel), 8,
				     sizeof(Elf64_Rel));
		if (!r || set_link(r, sym_idx, prog0 + s))
			goto elf_fail;
	}
	Elf_Scn *symscn;
	if (!add_scn(e, n_maps, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, im.maps, MAP_DEF_SIZE * p->nmaps, 8, 0) ||
	    !add_scn(e, n_lic, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, license, sizeof license, 1, 0) ||
	    !add_scn(e, n_btf, SHT_PROGBITS, 0, im.btf, im.btf_size, 4, 0) ||
	    !(symscn = add_scn(e, n_sym, SHT_SYMTAB, 0, im.syms, im.nsyms * sizeof(Elf64_Sym), 8,
			       sizeof(Elf64_Sym))) ||
	    set_link(symscn, strtab_idx, 1))
		goto elf_fail;
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto elf_fail;
	elf_end(e);
	e = NULL;
	off_t len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || !(*out = malloc((size_t)len)) || pread(fd, *out, (size_t)len, 0) != len) {
		free(*out);
		*out = NULL;
		snprintf(err, errlen, "cannot read the object back: %s", strerror(errno));
		rc = -EIO;
		goto out;
	}
	*size = (size_t)len;
	rc = 0;
	goto out;
elf_fail:
	snprintf(err, errlen, "cannot write the object: %s", fd < 0 ? strerror(errno) : elf_errmsg(-1));
	rc = -EIO;
	goto out;
fail:
	snprintf(err, errlen, "out of memory");
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	image_free(&im);
	return rc;
}
