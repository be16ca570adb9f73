/* libFuzzer target for the fatbin reader: any bytes as a sized image (container(s), wrapper,
 * host ELF), every entry decoded; a container whose header fits the input is read again as an
 * image of unknown size, the way the shim reads a bare cuModuleLoadFatBinary pointer.
 * Seeds: tests/fatbin/fuzz-seeds/fatbin/. */
#include "ptx-frontend/fatbin.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Wrapper pointers are addresses, which fuzzed bytes cannot guess: read small values in the
 * wrapper and in the list it points to as offsets into the input and make them addresses. */
static void relocate_wrapper(uint8_t *p, size_t size)
{
	if (size < 24)
		return;
	for (size_t field = 8; field <= 16; field += 8) {
		uint64_t off = get64(p + field);
		if (off && off < size)
			put64(p + field, (uint64_t)(uintptr_t)(p + off));
	}
	uint64_t list = get64(p + 16) - (uint64_t)(uintptr_t)p;
	for (size_t i = 0; i < 8 && list < size && size - list >= 8 * (i + 1); i++) {
		uint64_t off = get64(p + list + 8 * i);
		if (off && off < size)
			put64(p + list + 8 * i, (uint64_t)(uintptr_t)(p + off));
	}
}

static void read_all(const void *image, size_t size)
{
	struct fatbin *fb;
	char err[256];
	if (fatbin__open_mem(image, size, &fb, err, sizeof(err)))
		return;
	for (size_t i = 0; i < fatbin__entry_count(fb); i++) {
		const struct fatbin_entry *e = fatbin__entry(fb, i);
		char target[32];
		fatbin_entry_target(e, target, sizeof(target));
		void *data;
		size_t len;
		if (!fatbin__entry_data(e, &data, &len, err, sizeof(err))) {
			if (e->kind == FATBIN_KIND_PTX && ((char *)data)[len] != 0)
				abort(); /* PTX must come back NUL-terminated */
			free(data);
		}
	}
	fatbin__close(fb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);
	enum module_image_kind kind = module_image_classify(p, size);
	if (kind == MODULE_IMAGE_WRAPPER)
		relocate_wrapper(p, size);
	read_all(p, size);
	size_t n;
	if (kind == MODULE_IMAGE_FATBIN && size >= 16 && !module_image_size(p, kind, &n) && n <= size)
		read_all(p, SIZE_MAX);
	if (kind == MODULE_IMAGE_PTX && memchr(p, 0, size) && !module_image_size(p, kind, &n) && n > size)
		abort();
	free(p);
	return 0;
}
