/* Fatbins inside host ELF files (executables, shared libraries, relocatable objects).
 *
 * nvcc puts the containers in .nv_fatbin (several may be concatenated there: one per translation
 * unit, plus the runtime's own), relocatable-device-code builds add __nv_relfatbin, and
 * .nvFatBinSegment holds the wrappers the runtime registers, whose pointers are virtual addresses.
 * Some libraries (cuFFT keeps ~24000 fatbins in .ldata) embed containers in ordinary data sections
 * and load them with cuModuleLoadData themselves: those are found by scanning data sections for
 * the container magic and keeping every candidate that reads completely (a candidate that does
 * not is not an error: it is just bytes that look like a magic number).
 * This is a small hand-written ELF64 reader rather than libelf because every field is checked
 * against the image here, the image may be read-only, and only section headers are needed. */
#include "ptx-frontend/fatbin_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define EHDR_SIZE   64
#define SHDR_SIZE   64
#define SHT_NOBITS  8
#define SHT_PROGBITS 1
#define SHF_ALLOC   0x2
#define SHF_EXECINSTR 0x4
#define SHF_COMPRESSED 0x800

struct shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link;
};

#define MAX_SEGMENT_READS 256

struct elf_view {
	/* file offsets of containers read through .nvFatBinSegment, so the scan skips them */
	size_t segment_reads[MAX_SEGMENT_READS];
	size_t nsegment_reads;
	const uint8_t *p;
	size_t size, base;
	uint64_t shoff;
	size_t shnum, shentsize;
	struct shdr strtab;
};

static struct shdr shdr_at(const struct elf_view *v, size_t i)
{
	const uint8_t *s = v->p + v->shoff + i * v->shentsize;
	return (struct shdr){
		.name = fb_le32(s), .type = fb_le32(s + 4), .flags = fb_le64(s + 8), .addr = fb_le64(s + 16),
		.offset = fb_le64(s + 24), .size = fb_le64(s + 32), .link = fb_le32(s + 40),
	};
}

static bool section_in_file(const struct elf_view *v, const struct shdr *s)
{
	return s->type == SHT_NOBITS || (s->offset <= v->size && s->size <= v->size - s->offset);
}

static int open_view(struct elf_view *v, struct fb_range r, char *err, size_t errlen)
{
	size_t at = r.base_offset;
	*v = (struct elf_view){ .p = r.data, .size = r.size, .base = at };
	if (r.size < EHDR_SIZE)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: ELF header truncated (%d bytes needed, %zu available)",
				at, EHDR_SIZE, r.size);
	if (r.data[4] != 2 || r.data[5] != 1)
		return fb_error(err, errlen, ENOTSUP,
				"offset 0x%zx: only 64-bit little-endian ELF files are supported", at + 4);
	v->shoff = fb_le64(r.data + 0x28);
	v->shentsize = fb_le16(r.data + 0x3a);
	v->shnum = fb_le16(r.data + 0x3c);
	size_t shstrndx = fb_le16(r.data + 0x3e);
	if (v->shoff == 0)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: ELF file has no section headers", at + 0x28);
	if (v->shentsize < SHDR_SIZE)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: bad ELF section header size %zu", at + 0x3a,
				v->shentsize);
	if (v->shoff > r.size || r.size - v->shoff < v->shentsize)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: ELF section headers at 0x%llx lie past the end of the file", at + 0x28,
				(unsigned long long)v->shoff);
	struct shdr first = shdr_at(v, 0);
	if (v->shnum == 0) /* extended numbering: the count lives in section 0 */
		v->shnum = first.size;
	if (shstrndx == 0xffff)
		shstrndx = first.link;
	if (v->shnum > (r.size - v->shoff) / v->shentsize)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: %zu ELF section headers run past the end of the file", at + 0x28,
				v->shnum);
	if (shstrndx >= v->shnum)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: bad section name table index %zu", at + 0x3e,
				shstrndx);
	v->strtab = shdr_at(v, shstrndx);
	if (v->strtab.type == SHT_NOBITS || !section_in_file(v, &v->strtab))
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: section name table lies outside the file",
				at + (size_t)v->shoff + shstrndx * v->shentsize);
	return 0;
}

/* The section's name, or "" when it does not lie inside the name table. */
static const char *section_name(const struct elf_view *v, const struct shdr *s)
{
	if (s->name >= v->strtab.size)
		return "";
	const char *n = (const char *)v->p + v->strtab.offset + s->name;
	return memchr(n, 0, v->strtab.size - s->name) ? n : "";
}

static bool is_fatbin_section(const char *name)
{
	return !strcmp(name, ".nv_fatbin") || !strcmp(name, "__nv_relfatbin");
}

/* Index of the loaded, file-backed section holding virtual address va, or SIZE_MAX. */
static size_t section_of_address(const struct elf_view *v, uint64_t va)
{
	for (size_t i = 1; i < v->shnum; i++) {
		struct shdr s = shdr_at(v, i);
		if ((s.flags & SHF_ALLOC) && s.type != SHT_NOBITS && va >= s.addr && va - s.addr < s.size)
			return i;
	}
	return SIZE_MAX;
}

/* Wrappers in .nvFatBinSegment whose fatbin lies in a section not read already (any fatbin
 * section was read whole): read that one container. */
static int read_segment(struct fatbin *fb, struct elf_view *v, const struct shdr *seg, char *err,
			size_t errlen)
{
	for (uint64_t off = 0; seg->size - off >= 24; off += 24) {
		const uint8_t *w = v->p + seg->offset + off;
		if (fb_le32(w) != FATBIN_WRAPPER_MAGIC)
			continue;
		uint64_t va = fb_le64(w + 8);
		size_t idx = va ? section_of_address(v, va) : SIZE_MAX;
		if (idx == SIZE_MAX)
			continue; /* unrelocated (an object file) or pointing nowhere we can read */
		struct shdr s = shdr_at(v, idx);
		if (is_fatbin_section(section_name(v, &s)) || !section_in_file(v, &s))
			continue;
		size_t inner = (size_t)(va - s.addr);
		struct fb_range c = { v->p + s.offset + inner, (size_t)s.size - inner, v->base + (size_t)s.offset + inner };
		size_t used;
		int rc = fb_read_container(fb, c, &used, err, errlen);
		if (rc)
			return rc;
		if (v->nsegment_reads < MAX_SEGMENT_READS)
			v->segment_reads[v->nsegment_reads++] = c.base_offset;
	}
	return 0;
}

/* Containers embedded in a data section: every complete one is kept. */
static void scan_embedded(struct fatbin *fb, const struct elf_view *v, const struct shdr *s)
{
	static const uint8_t magic[4] = { 0x50, 0xed, 0x55, 0xba };
	const uint8_t *base = v->p + s->offset, *p = base, *end = base + s->size;
	while ((p = memmem(p, (size_t)(end - p), magic, sizeof(magic)))) {
		size_t off = (size_t)(p - base), used = 0, count = fb->count, containers = fb->containers;
		struct fb_range c = { p, (size_t)(end - p), v->base + (size_t)s->offset + off };
		bool seen = false;
		for (size_t i = 0; i < v->nsegment_reads; i++)
			seen |= v->segment_reads[i] == c.base_offset;
		if (fb_read_container(fb, c, &used, NULL, 0) == 0 && fb->count > count) {
			if (seen) { /* already read through a wrapper */
				fb->count = count;
				fb->containers = containers;
			}
			p += used;
			continue;
		}
		fb->count = count; /* not a container after all: forget what it added */
		fb->containers = containers;
		p++;
	}
}

int fb_read_elf(struct fatbin *fb, struct fb_range r, char *err, size_t errlen)
{
	struct elf_view v;
	int rc = open_view(&v, r, err, errlen);
	if (rc)
		return rc;
	bool found = false;
	for (size_t i = 1; i < v.shnum; i++) {
		struct shdr s = shdr_at(&v, i);
		const char *name = section_name(&v, &s);
		bool seg = !strcmp(name, ".nvFatBinSegment");
		if (!seg && !is_fatbin_section(name))
			continue;
		size_t hdr_at = v.base + (size_t)v.shoff + i * v.shentsize;
		if (s.type == SHT_NOBITS)
			continue;
		if (!section_in_file(&v, &s))
			return fb_error(err, errlen, EINVAL,
					"offset 0x%zx: section %s (0x%llx bytes at 0x%llx) runs past the end of the file",
					hdr_at, name, (unsigned long long)s.size, (unsigned long long)s.offset);
		if (s.flags & SHF_COMPRESSED)
			return fb_error(err, errlen, ENOTSUP,
					"offset 0x%zx: section %s is ELF-compressed (SHF_COMPRESSED), which is not supported",
					hdr_at, name);
		if (seg)
			continue; /* after every fatbin section has been read */
		size_t before = fb->containers;
		struct fb_range sec = { v.p + s.offset, (size_t)s.size, v.base + (size_t)s.offset };
		rc = fb_read_containers(fb, sec, err, errlen);
		if (rc)
			return rc;
		found |= fb->containers > before;
	}
	for (size_t i = 1; i < v.shnum; i++) {
		struct shdr s = shdr_at(&v, i);
		if (s.type == SHT_NOBITS || strcmp(section_name(&v, &s), ".nvFatBinSegment"))
			continue;
		size_t before = fb->containers;
		rc = read_segment(fb, &v, &s, err, errlen);
		if (rc)
			return rc;
		found |= fb->containers > before;
	}
	for (size_t i = 1; i < v.shnum; i++) {
		struct shdr s = shdr_at(&v, i);
		const char *name = section_name(&v, &s);
		if (s.type != SHT_PROGBITS || !(s.flags & SHF_ALLOC) || (s.flags & (SHF_EXECINSTR | SHF_COMPRESSED)) ||
		    is_fatbin_section(name) || !strcmp(name, ".nvFatBinSegment") || !section_in_file(&v, &s))
			continue;
		size_t before = fb->containers;
		scan_embedded(fb, &v, &s);
		found |= fb->containers > before;
	}
	if (!found && fb_le16(v.p + 18) == 190) /* EM_CUDA */
		return fb_error(err, errlen, ENOENT, "offset 0x%zx: a cubin (EM_CUDA ELF), not a file holding fatbins",
				v.base + 18);
	if (!found)
		return fb_error(err, errlen, ENOENT,
				"offset 0x%zx: ELF file has no fatbin (no .nv_fatbin section: not a CUDA binary?)",
				v.base);
	return 0;
}

size_t fb_elf_image_size(const uint8_t *p, size_t size)
{
	if (size < EHDR_SIZE || memcmp(p, "\177ELF", 4) || p[4] != 2 || p[5] != 1)
		return 0;
	uint64_t phoff = fb_le64(p + 0x20), shoff = fb_le64(p + 0x28);
	size_t phentsize = fb_le16(p + 0x36), phnum = fb_le16(p + 0x38);
	size_t shentsize = fb_le16(p + 0x3a), shnum = fb_le16(p + 0x3c);
	uint64_t end = EHDR_SIZE;
	/* Any header table must lie within size; each extent is checked before it is read. */
#define EXTENT(off, len)                                                     \
	do {                                                                  \
		uint64_t o_ = (off), l_ = (len);                              \
		if (o_ > size || l_ > size - o_)                              \
			return 0;                                             \
		if (o_ + l_ > end)                                            \
			end = o_ + l_;                                        \
	} while (0)
	if (phoff && phnum) {
		if (phentsize < 56 || phnum > SIZE_MAX / phentsize)
			return 0;
		EXTENT(phoff, phnum * phentsize);
		for (size_t i = 0; i < phnum; i++) {
			const uint8_t *ph = p + phoff + i * phentsize;
			EXTENT(fb_le64(ph + 8), fb_le64(ph + 32));
		}
	}
	if (shoff) {
		if (shentsize < SHDR_SIZE)
			return 0;
		EXTENT(shoff, shentsize);
		if (shnum == 0)
			shnum = fb_le64(p + shoff + 32);
		if (shnum > SIZE_MAX / shentsize)
			return 0;
		EXTENT(shoff, shnum * shentsize);
		for (size_t i = 1; i < shnum; i++) {
			const uint8_t *sh = p + shoff + i * shentsize;
			if (fb_le32(sh + 4) != SHT_NOBITS)
				EXTENT(fb_le64(sh + 24), fb_le64(sh + 32));
		}
	}
#undef EXTENT
	return (size_t)end;
}
