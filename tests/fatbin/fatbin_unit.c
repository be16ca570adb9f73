/* Unit tests of the fatbin reader on the small real fatbins in fuzz-seeds/fatbin/: reading,
 * wrappers, concatenation, sizes of bare images, and every truncation and many corruptions,
 * each of which must give one error line naming an offset (exact text checked for several).
 * Usage: fatbin_unit SEED_DIR */
#include "ptx-frontend/fatbin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;
static const char *seed_dir;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		checks++;                                                   \
		if (!(cond)) {                                              \
			failures++;                                         \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
		}                                                           \
	} while (0)

static uint8_t *load(const char *name, size_t *len)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", seed_dir, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		exit(2);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i); }
static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* Open image and decode every entry: 0 on success, else the error in err. */
static int read_all(const void *img, size_t size, size_t *entries, char *err, size_t errlen)
{
	struct fatbin *fb;
	int rc = fatbin__open_mem(img, size, &fb, err, errlen);
	if (rc)
		return rc;
	if (entries)
		*entries = fatbin__entry_count(fb);
	for (size_t i = 0; i < fatbin__entry_count(fb) && !rc; i++) {
		void *data;
		size_t len;
		rc = fatbin__entry_data(fatbin__entry(fb, i), &data, &len, err, errlen);
		if (!rc)
			free(data);
	}
	fatbin__close(fb);
	return rc;
}

static bool names_offset(const char *err) { return !strncmp(err, "offset 0x", 9); }

/* Reading the seeds: kinds, targets, compression, decoded contents. */
static void test_seeds(void)
{
	static const struct {
		const char *file;
		unsigned sm;
		enum fatbin_compression ptx, cubin;
	} seeds[] = {
		{ "tiny_default.fatbin", 75, FATBIN_COMPRESS_ZSTD, FATBIN_COMPRESS_NONE },
		{ "tiny_speed.fatbin", 80, FATBIN_COMPRESS_LZ4, FATBIN_COMPRESS_NONE },
		{ "tiny_size.fatbin", 90, FATBIN_COMPRESS_ZSTD, FATBIN_COMPRESS_ZSTD },
		{ "tiny_none.fatbin", 90, FATBIN_COMPRESS_NONE, FATBIN_COMPRESS_NONE },
		{ "tiny_object.o", 75, FATBIN_COMPRESS_ZSTD, FATBIN_COMPRESS_NONE },
		{ "tiny_rdc.o", 75, FATBIN_COMPRESS_ZSTD, FATBIN_COMPRESS_ZSTD },
		{ "tiny_lib.a", 75, FATBIN_COMPRESS_ZSTD, FATBIN_COMPRESS_NONE }, /* first member: tiny_object.o */
	};
	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		char path[1024], err[512];
		snprintf(path, sizeof(path), "%s/%s", seed_dir, seeds[s].file);
		struct fatbin *fb;
		int rc = fatbin__open_file(path, &fb, err, sizeof(err));
		CHECK(rc == 0, "%s: %s", seeds[s].file, err);
		if (rc)
			continue;
		size_t want_entries = strstr(seeds[s].file, ".a") ? 4 : 2;
		CHECK(fatbin__entry_count(fb) == want_entries, "%s: %zu entries", seeds[s].file, fatbin__entry_count(fb));
		for (size_t i = 0; i < 2 && i < fatbin__entry_count(fb); i++) {
			const struct fatbin_entry *e = fatbin__entry(fb, i);
			CHECK(e->sm == seeds[s].sm, "%s: entry %zu sm %u", seeds[s].file, i, e->sm);
			void *data;
			size_t len;
			rc = fatbin__entry_data(e, &data, &len, err, sizeof(err));
			CHECK(rc == 0, "%s: entry %zu: %s", seeds[s].file, i, err);
			if (rc)
				continue;
			const uint8_t *d = data;
			if (e->kind == FATBIN_KIND_PTX) {
				CHECK(e->compression == seeds[s].ptx, "%s: PTX compression %d", seeds[s].file, e->compression);
				CHECK(d[len] == 0 && len > 0 && d[len - 1] != 0, "%s: PTX not NUL-stripped", seeds[s].file);
				CHECK(strstr(data, ".entry tiny(") && strstr(data, ".entry _Z4fillILi3EEvPi("),
				      "%s: PTX lacks the kernels", seeds[s].file);
				CHECK(strlen(data) == len, "%s: PTX has inner NULs", seeds[s].file);
			} else {
				CHECK(e->kind == FATBIN_KIND_ELF, "%s: kind %d", seeds[s].file, e->kind);
				CHECK(e->compression == seeds[s].cubin, "%s: cubin compression %d", seeds[s].file,
				      e->compression);
				CHECK(len >= 64 && !memcmp(d, "\177ELF", 4) && d[18] == 190 && d[19] == 0,
				      "%s: cubin is not an EM_CUDA ELF", seeds[s].file);
				CHECK(len >= 64 && ((get32(d + 48) >> 8) & 0xff) == seeds[s].sm, "%s: cubin SM",
				      seeds[s].file);
			}
			free(data);
		}
		fatbin__close(fb);
	}
	/* The options nvcc records for the JIT (rdc PTX) */
	char path[1024], err[512];
	snprintf(path, sizeof(path), "%s/tiny_rdc.o", seed_dir);
	struct fatbin *fb;
	if (!fatbin__open_file(path, &fb, err, sizeof(err))) {
		const struct fatbin_entry *e = fatbin__entry(fb, 1);
		CHECK(e->kind == FATBIN_KIND_PTX && e->options && !strncmp(e->options, "--compile-only", 14),
		      "rdc PTX options not read");
		fatbin__close(fb);
	}
	/* LTO IR (code=lto_90): kept as an entry, reported as not decodable */
	snprintf(path, sizeof(path), "%s/tiny_lto.o", seed_dir);
	if (!fatbin__open_file(path, &fb, err, sizeof(err))) {
		const struct fatbin_entry *e = fatbin__entry(fb, 0);
		void *data = NULL;
		size_t len;
		CHECK(fatbin__entry_count(fb) == 1 && e->kind == FATBIN_KIND_LTOIR && e->sm == 90, "LTO entry");
		CHECK(fatbin__entry_data(e, &data, &len, err, sizeof(err)) == -ENOTSUP &&
		      !strcmp(err, "offset 0x5b0: LTO IR payload is encoded (flags 0x18011) and cannot be read"),
		      "LTO data: \"%s\"", err);
		fatbin__close(fb);
	} else {
		CHECK(0, "tiny_lto.o: %s", err);
	}
	/* sm_90a: the arch-specific flag */
	size_t n;
	uint8_t *m = load("tiny_multi.fatbin", &n);
	if (!fatbin__open_mem(m, n, &fb, err, sizeof(err))) {
		char t[32];
		CHECK(!strcmp(fatbin_entry_target(fatbin__entry(fb, 0), t, sizeof(t)), "sm_90a"), "target %s", t);
		CHECK(!strcmp(fatbin_entry_target(fatbin__entry(fb, 1), t, sizeof(t)), "sm_100"), "target %s", t);
		fatbin__close(fb);
	} else {
		CHECK(0, "tiny_multi: %s", err);
	}
	free(m);
}

/* A size-unknown image reads the same as a sized one. */
static void test_unknown_size(void)
{
	size_t n, a = 0, b = 0;
	char err[512];
	uint8_t *img = load("tiny_default.fatbin", &n);
	CHECK(read_all(img, n, &a, err, sizeof(err)) == 0, "sized: %s", err);
	CHECK(read_all(img, SIZE_MAX, &b, err, sizeof(err)) == 0, "unsized: %s", err);
	CHECK(a == 2 && b == 2, "entries %zu/%zu", a, b);
	free(img);
}

static void expect_error(const void *img, size_t size, const char *want, const char *what)
{
	char err[512] = "";
	int rc = read_all(img, size, NULL, err, sizeof(err));
	CHECK(rc < 0 && !strcmp(err, want), "%s: got \"%s\" (rc %d), want \"%s\"", what, err, rc, want);
}

/* Every prefix of a real fatbin is an error naming an offset; with the container's size field
 * shrunk to match, only cuts at an entry boundary read (and then fewer entries). */
static void test_truncation(const char *file)
{
	size_t n;
	uint8_t *img = load(file, &n);
	size_t ok_cuts = 0;
	for (size_t cut = 0; cut < n; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);
		memcpy(p, img, cut);
		char err[512] = "";
		int rc = read_all(p, cut, NULL, err, sizeof(err));
		CHECK(rc < 0 && names_offset(err), "%s cut at %zu: rc %d \"%s\"", file, cut, rc, err);
		if (cut >= 16 && get32(img) == 0xBA55ED50) {
			put64(p + 8, cut - 16);
			size_t entries = 0;
			rc = read_all(p, cut, &entries, err, sizeof(err));
			if (rc == 0)
				ok_cuts++;
			else
				CHECK(names_offset(err), "%s resized cut at %zu: \"%s\"", file, cut, err);
		}
		free(p);
	}
	if (get32(img) == 0xBA55ED50)
		CHECK(ok_cuts == 2, "%s: %zu cuts read (want 2: the empty container and one entry)", file, ok_cuts);
	free(img);
}

/* Exact messages for corrupt header fields of tiny_default.fatbin (cubin entry at 0x10, PTX
 * entry at 0x1138) and tiny_speed.fatbin (LZ4 PTX entry at 0x12b8). */
static void test_corrupt_fields(void)
{
	size_t n;
	uint8_t *img = load("tiny_default.fatbin", &n);
	uint8_t *p = malloc(n);
	char want[512];
	const size_t ptx = 0x1138;
	CHECK(get32(img + ptx) == 0x01010001, "seed layout changed: PTX entry not at 0x1138");

#define FRESH() memcpy(p, img, n)
	FRESH(); put32(p, 0);
	expect_error(p, n, "offset 0x0: not a fatbin: magic 0x00000000 (expected a fatbin 0xba55ed50, a wrapper "
		     "0x466243b1, an ELF file or an archive)", "magic");
	FRESH(); p[4] = 2;
	expect_error(p, n, "offset 0x4: unsupported fatbin version 2 (expected 1)", "version");
	FRESH(); p[6] = 8;
	expect_error(p, n, "offset 0x6: bad fatbin header size 8 (expected 16)", "header size");
	FRESH(); put64(p + 8, n);
	snprintf(want, sizeof(want), "offset 0x0: fatbin of 0x%zx bytes runs past the end of the image (0x%zx bytes left)",
		 n, n - 16);
	expect_error(p, n, want, "container size");
	FRESH(); put32(p + 0x10 + 4, 0x10);
	expect_error(p, n, "offset 0x10: entry header size 0x10 is too small (at least 0x40)", "entry header size");
	FRESH(); put32(p + 0x10 + 4, 0x100000);
	snprintf(want, sizeof(want), "offset 0x10: entry header size 0x100000 runs past the container end (0x%zx left)",
		 n - 0x10);
	expect_error(p, n, want, "entry header size large");
	FRESH(); put64(p + 0x10 + 8, 0xffffffffffffull);
	snprintf(want, sizeof(want), "offset 0x10: entry payload of 0xffffffffffff bytes runs past the container "
		 "end (0x%zx left)", n - 0x10 - 0x40);
	expect_error(p, n, want, "entry payload size");
	FRESH(); put64(p + ptx + 0x28, get64(p + ptx + 0x28) | 0x2000);
	expect_error(p, n, "offset 0x1138: entry flags 0xa011 ask for both zstd and LZ4 compression", "flags");
	uint64_t psize = get64(img + ptx + 8);
	uint32_t csize = get32(img + ptx + 0x10);
	uint64_t usize = get64(img + ptx + 0x38);
	FRESH(); put32(p + ptx + 0x10, (uint32_t)psize + 1);
	snprintf(want, sizeof(want), "offset 0x1138: compressed size 0x%x does not fit the payload of 0x%llx bytes",
		 (uint32_t)psize + 1, (unsigned long long)psize);
	expect_error(p, n, want, "compressed size");
	FRESH(); put64(p + ptx + 0x38, 0);
	expect_error(p, n, "offset 0x1138: bad uncompressed size 0x0 for a compressed entry", "uncompressed 0");
	FRESH(); put64(p + ptx + 0x38, usize + 1);
	snprintf(want, sizeof(want), "offset 0x1138: zstd frame holds 0x%llx bytes, the entry says 0x%llx",
		 (unsigned long long)usize, (unsigned long long)usize + 1);
	expect_error(p, n, want, "uncompressed size");
	FRESH(); put32(p + ptx + 0x50, 0);
	expect_error(p, n, "offset 0x1138: payload is not a zstd frame", "zstd magic");
	FRESH(); memset(p + ptx + 0x50 + 8, 0xff, csize - 8);
	char err[512] = "";
	CHECK(read_all(p, n, NULL, err, sizeof(err)) < 0 && !strncmp(err, "offset 0x1138: zstd: ", 21),
	      "zstd body: \"%s\"", err);
	free(p);
	free(img);

	img = load("tiny_speed.fatbin", &n);
	p = malloc(n);
	const size_t lz = 0x12b8;
	CHECK(get32(img + lz) == 0x01010001 && (get64(img + lz + 0x28) & 0x2000), "seed layout changed: LZ4 entry");
	usize = get64(img + lz + 0x38);
	FRESH(); put64(p + lz + 0x38, usize + 1);
	snprintf(want, sizeof(want), "offset 0x12b8: LZ4 block gave 0x%llx bytes, the entry says 0x%llx",
		 (unsigned long long)usize, (unsigned long long)usize + 1);
	expect_error(p, n, want, "LZ4 size");
	FRESH(); put64(p + lz + 0x38, 0x1000000);
	snprintf(want, sizeof(want), "offset 0x12b8: uncompressed size 0x1000000 cannot come from a 0x%x-byte LZ4 block",
		 get32(img + lz + 0x10));
	expect_error(p, n, want, "LZ4 ratio");
	FRESH(); memset(p + lz + 0x50, 0xff, 16);
	CHECK(read_all(p, n, NULL, err, sizeof(err)) < 0 && !strncmp(err, "offset 0x12b8: corrupt LZ4 block", 32),
	      "LZ4 body: \"%s\"", err);
#undef FRESH
	free(p);
	free(img);
}

/* Flip every byte (and, with a fixed seed, many random multi-byte changes): each result either
 * reads or gives an error naming an offset. Run under ASan this also proves no out-of-bounds read. */
static void test_flips(const char *file)
{
	size_t n;
	uint8_t *img = load(file, &n);
	uint8_t *p = malloc(n);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(p, img, n);
		p[i] ^= 0xff;
		char err[512] = "";
		if (read_all(p, n, NULL, err, sizeof(err)) < 0 && !names_offset(err)) {
			if (!bad++)
				CHECK(0, "%s flip at %zu: \"%s\"", file, i, err);
		}
	}
	unsigned seed = 12345;
	for (int iter = 0; iter < 2000; iter++) {
		memcpy(p, img, n);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 8) % n;
			seed = seed * 1103515245 + 12345;
			p[at] = (uint8_t)(seed >> 16);
		}
		char err[512] = "";
		if (read_all(p, n, NULL, err, sizeof(err)) < 0 && !names_offset(err)) {
			if (!bad++)
				CHECK(0, "%s random change %d: \"%s\"", file, iter, err);
		}
	}
	CHECK(bad == 0, "%s: %zu corruptions gave errors without an offset", file, bad);
	free(p);
	free(img);
}

/* Wrappers: v1, v2 with a prelinked list, bad pointers and versions; concatenated containers. */
static void test_wrappers_and_concat(void)
{
	size_t n, entries;
	char err[512], want[512];
	uint8_t *fat = load("tiny_default.fatbin", &n);
	size_t list_at = 24 + n, b_at = list_at + 16, total = b_at + n;
	uint8_t *img = calloc(1, total);
	put32(img, FATBIN_WRAPPER_MAGIC);
	put32(img + 4, 1);
	put64(img + 8, (uint64_t)(uintptr_t)(img + 24));
	memcpy(img + 24, fat, n);
	memcpy(img + b_at, fat, n);
	CHECK(read_all(img, total, &entries, err, sizeof(err)) == 0 && entries == 2, "wrapper v1: %s", err);
	CHECK(read_all(img, SIZE_MAX, &entries, err, sizeof(err)) == 0 && entries == 2, "wrapper v1 unsized: %s", err);
	struct fatbin *fb;
	if (!fatbin__open_mem(img, total, &fb, err, sizeof(err))) {
		CHECK(fatbin__entry(fb, 0)->offset == 24 + 16, "entry offset %zu", fatbin__entry(fb, 0)->offset);
		fatbin__close(fb);
	}
	put32(img + 4, 2);
	put64(img + 16, (uint64_t)(uintptr_t)(img + list_at));
	put64(img + list_at, (uint64_t)(uintptr_t)(img + b_at));
	CHECK(read_all(img, total, &entries, err, sizeof(err)) == 0 && entries == 4, "wrapper v2: %s (%zu)", err,
	      entries);
	CHECK(read_all(img, SIZE_MAX, &entries, err, sizeof(err)) == 0 && entries == 4, "wrapper v2 unsized: %s", err);
	put64(img + list_at, 0x10);
	snprintf(want, sizeof(want), "offset 0x%zx: wrapper pointer 0x10 lies outside the image (a wrapper is only "
		 "readable in the process that holds it)", list_at);
	expect_error(img, total, want, "v2 list pointer");
	put64(img + list_at, (uint64_t)(uintptr_t)(img + b_at));
	put32(img + 4, 3);
	expect_error(img, total, "offset 0x4: unsupported wrapper version 3 (expected 1 or 2)", "wrapper version");
	put32(img + 4, 1);
	put64(img + 8, 0);
	expect_error(img, total, "offset 0x8: wrapper points to no fatbin (NULL)", "wrapper NULL");
	put64(img + 8, 0x1234);
	snprintf(want, sizeof(want), "offset 0x8: wrapper pointer 0x1234 lies outside the image (a wrapper is only "
		 "readable in the process that holds it)");
	expect_error(img, total, want, "wrapper outside");
	expect_error(img, 20, "offset 0x0: fatbin wrapper truncated (24 bytes needed, 20 available)", "wrapper short");
	free(img);

	/* Two containers with zero padding between them, then junk. */
	img = calloc(1, 2 * n + 8 + 8);
	memcpy(img, fat, n);
	memcpy(img + n + 8, fat, n);
	CHECK(read_all(img, 2 * n + 8, &entries, err, sizeof(err)) == 0 && entries == 4, "concat: %s", err);
	CHECK(read_all(img, 2 * n + 16, &entries, err, sizeof(err)) == 0 && entries == 4, "trailing zeros: %s", err);
	img[n + 2] = 7;
	snprintf(want, sizeof(want), "offset 0x%zx: expected a fatbin (magic 0xba55ed50), found 0x00000007", n + 2);
	expect_error(img, 2 * n + 8, want, "junk between containers");
	free(img);
	free(fat);
}

static void test_elf_errors(void)
{
	size_t n;
	char path[1024], err[512], want[1200];
	snprintf(path, sizeof(path), "%s/tiny_sm75.cubin", seed_dir);
	struct fatbin *fb;
	snprintf(want, sizeof(want), "%s: offset 0x12: a cubin (EM_CUDA ELF), not a file holding fatbins", path);
	int rc = fatbin__open_file(path, &fb, err, sizeof(err));
	CHECK(rc < 0 && !strcmp(err, want), "cubin as fatbin: \"%s\"", err);
	CHECK(fatbin__open_file("/nonexistent/x", &fb, err, sizeof(err)) == -2 &&
	      !strcmp(err, "/nonexistent/x: No such file or directory"), "missing file: \"%s\"", err);
	uint8_t *img = load("tiny_lib.a", &n);
	uint8_t *a = malloc(n);
	memcpy(a, img, n);
	a[8 + 58] = 'x';
	expect_error(a, n, "offset 0x8: corrupt archive member header", "ar header");
	memcpy(a, img, n);
	memcpy(a + 8 + 48, "999999999 ", 10);
	expect_error(a, n, "offset 0x8: archive member of 999999999 bytes runs past the end of the file", "ar size");
	expect_error(img, 8, "offset 0x0: archive has no member with a fatbin", "empty archive");
	free(a);
	free(img);
	img = load("tiny_object.o", &n);
	for (size_t i = 0; i + 11 < n; i++) { /* no fatbin left anywhere: an ordinary ELF file */
		if (!memcmp(img + i, ".nv_fatbin", 11))
			img[i + 1] = 'X';
		if (get32(img + i) == FATBIN_CONTAINER_MAGIC)
			img[i] = 0;
	}
	expect_error(img, n, "offset 0x0: ELF file has no fatbin (no .nv_fatbin section: not a CUDA binary?)",
		     "host ELF without fatbin");
	free(img);
	img = load("tiny_object.o", &n);
	img[4] = 1;
	expect_error(img, n, "offset 0x4: only 64-bit little-endian ELF files are supported", "ELF32");
	img[4] = 2;
	put64(img + 0x28, n);
	snprintf(want, sizeof(want), "offset 0x28: ELF section headers at 0x%zx lie past the end of the file", n);
	expect_error(img, n, want, "shoff");
	free(img);
}

static void test_module_image(void)
{
	size_t n;
	char err[512];
	uint8_t *cubin = load("tiny_sm75.cubin", &n);
	size_t size = 0;
	CHECK(module_image_classify(cubin, n) == MODULE_IMAGE_CUBIN, "cubin class");
	CHECK(module_image_classify(cubin, SIZE_MAX) == MODULE_IMAGE_CUBIN, "cubin class unsized");
	CHECK(module_image_size(cubin, MODULE_IMAGE_CUBIN, &size) == 0 && size == n, "cubin size %zu != %zu", size, n);
	free(cubin);
	uint8_t *fat = load("tiny_default.fatbin", &n);
	CHECK(module_image_classify(fat, n) == MODULE_IMAGE_FATBIN, "fatbin class");
	CHECK(module_image_size(fat, MODULE_IMAGE_FATBIN, &size) == 0 && size == n, "fatbin size %zu != %zu", size, n);
	struct fatbin *fb;
	if (!fatbin__open_mem(fat, n, &fb, err, sizeof(err))) {
		void *ptx;
		size_t len;
		if (!fatbin__entry_data(fatbin__entry(fb, 1), &ptx, &len, err, sizeof(err))) {
			CHECK(module_image_classify(ptx, len + 1) == MODULE_IMAGE_PTX, "PTX class");
			CHECK(module_image_classify(ptx, SIZE_MAX) == MODULE_IMAGE_PTX, "PTX class unsized");
			CHECK(module_image_size(ptx, MODULE_IMAGE_PTX, &size) == 0 && size == len + 1, "PTX size");
			free(ptx);
		}
		fatbin__close(fb);
	}
	free(fat);
	uint8_t w[24] = { 0 };
	put32(w, FATBIN_WRAPPER_MAGIC);
	CHECK(module_image_classify(w, sizeof(w)) == MODULE_IMAGE_WRAPPER, "wrapper class");
	CHECK(module_image_size(w, MODULE_IMAGE_WRAPPER, &size) == 0 && size == 24, "wrapper size");
	CHECK(module_image_classify("\x01\x02\x03\x04junk", 8) == MODULE_IMAGE_UNKNOWN, "junk class");
	CHECK(module_image_classify("hello world", 12) == MODULE_IMAGE_UNKNOWN, "text class");
	CHECK(module_image_classify("//\n.version 9.0\n", 17) == MODULE_IMAGE_PTX, "tiny PTX class");
	expect_error("ab", 2, "offset 0x0: image too small (2 bytes)", "tiny image");
}

/* Inputs the fuzzer found (regressions/): each must read or give an error naming an offset.
 * The file list says what each must give. */
static void test_regressions(const char *dir)
{
	static const struct {
		const char *file, *want;
	} cases[] = {
		/* found by fuzz_fatbin: a container header cut short (module_image_size was called on it) */
		{ "short-header.bin", "offset 0x0: fatbin header truncated (16 bytes needed, 11 available)" },
	};
	const char *saved = seed_dir;
	seed_dir = dir;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n;
		uint8_t *p = load(cases[i].file, &n);
		expect_error(p, n, cases[i].want, cases[i].file);
		free(p);
	}
	seed_dir = saved;
}

/* A container built here: entries of the given kind, SM and flags, each a short raw payload. */
struct synth { uint16_t kind; uint32_t sm; uint64_t flags; };

static uint8_t *build_container(const struct synth *e, size_t n, size_t *len)
{
	size_t size = 16 + n * (0x40 + 16);
	uint8_t *p = calloc(1, size), *q = p + 16;
	put32(p, FATBIN_CONTAINER_MAGIC);
	p[4] = 1;
	p[6] = 16;
	put64(p + 8, size - 16);
	for (size_t i = 0; i < n; i++, q += 0x40 + 16) {
		q[0] = (uint8_t)e[i].kind;
		q[2] = 1;
		q[3] = 1;
		put32(q + 4, 0x40);
		put64(q + 8, 16);
		put32(q + 0x1c, e[i].sm);
		put64(q + 0x28, e[i].flags | 0x11);
		snprintf((char *)q + 0x40, 16, "entry %zu", i);
	}
	*len = size;
	return p;
}

static void test_best_ptx(void)
{
	static const struct synth entries[] = {
		{ FATBIN_KIND_PTX, 75, 0 },
		{ FATBIN_KIND_PTX, 90, FATBIN_FLAG_ARCH_SPECIFIC },
		{ FATBIN_KIND_PTX, 100, FATBIN_FLAG_FAMILY },
		{ FATBIN_KIND_PTX, 80, 0 },
		{ FATBIN_KIND_ELF, 90, 0 },
	};
	static const struct { unsigned device; int want; } cases[] = {
		{ 70, -1 }, { 75, 0 }, { 86, 3 }, { 89, 3 }, { 90, 1 }, { 100, 2 }, { 103, 2 }, { 120, 3 },
	};
	size_t len;
	char err[512];
	uint8_t *img = build_container(entries, 5, &len);
	struct fatbin *fb;
	if (fatbin__open_mem(img, len, &fb, err, sizeof(err))) {
		CHECK(0, "synthetic container: %s", err);
		free(img);
		return;
	}
	CHECK(fatbin__entry_count(fb) == 5, "synthetic: %zu entries", fatbin__entry_count(fb));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fatbin_entry *got = fatbin__best_ptx(fb, cases[i].device);
		const struct fatbin_entry *want = cases[i].want < 0 ? NULL : fatbin__entry(fb, (size_t)cases[i].want);
		CHECK(got == want, "best PTX for sm_%u: entry %ld, want %d", cases[i].device,
		      got ? (long)(got - fatbin__entry(fb, 0)) : -1L, cases[i].want);
	}
	/* the lowest portable target, whatever the device (the own driver's fallback): sm_75's, not
	 * the arch- or family-specific ones */
	CHECK(fatbin__lowest_portable_ptx(fb) == fatbin__entry(fb, 0), "lowest portable PTX: entry 0");
	static const struct synth newer[] = {
		{ FATBIN_KIND_ELF, 90, 0 }, { FATBIN_KIND_PTX, 121, 0 }, { FATBIN_KIND_PTX, 120, FATBIN_FLAG_ARCH_SPECIFIC },
		{ FATBIN_KIND_PTX, 120, 0 },
	};
	size_t len2;
	uint8_t *img2 = build_container(newer, 4, &len2);
	struct fatbin *fb2;
	if (!fatbin__open_mem(img2, len2, &fb2, err, sizeof(err))) {
		CHECK(!fatbin__best_ptx(fb2, 90), "newer PTX only: none for sm_90");
		CHECK(fatbin__lowest_portable_ptx(fb2) == fatbin__entry(fb2, 3), "newer PTX only: compute_120, not 120a or 121");
		fatbin__close(fb2);
	} else {
		CHECK(0, "synthetic container (newer PTX only): %s", err);
	}
	free(img2);
	static const struct synth none[] = { { FATBIN_KIND_ELF, 90, 0 }, { FATBIN_KIND_PTX, 90, FATBIN_FLAG_ARCH_SPECIFIC } };
	img2 = build_container(none, 2, &len2);
	if (!fatbin__open_mem(img2, len2, &fb2, err, sizeof(err))) {
		CHECK(!fatbin__lowest_portable_ptx(fb2), "machine code and sm_90a PTX only: no portable PTX");
		fatbin__close(fb2);
	}
	free(img2);
	void *data;
	size_t n;
	CHECK(!fatbin__entry_data(fatbin__entry(fb, 3), &data, &n, err, sizeof(err)) && n == 7 &&
	      !strcmp(data, "entry 3"), "synthetic PTX payload");
	free(data);
	fatbin__close(fb);
	free(img);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fatbin_unit SEED_DIR REGRESSION_DIR\n");
		return 2;
	}
	seed_dir = argv[1];
	test_regressions(argv[2]);
	test_seeds();
	test_unknown_size();
	test_corrupt_fields();
	test_wrappers_and_concat();
	test_elf_errors();
	test_module_image();
	test_best_ptx();
	static const char *const files[] = { "tiny_default.fatbin", "tiny_speed.fatbin", "tiny_size.fatbin",
					     "tiny_object.o", "tiny_rdc.o", "tiny_lto.o" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		test_truncation(files[i]);
		test_flips(files[i]);
	}
	test_flips("tiny_lib.a"); /* (an archive cut at a member boundary is a valid archive) */
	printf("fatbin_unit: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
