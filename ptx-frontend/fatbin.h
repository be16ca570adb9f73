/* Fatbin reading: the containers nvcc embeds in executables and that module loads hand the driver.
 *
 * Layout (little endian), as docs/architecture.md "Facts to build on" states it, plus what nvcc 13 output shows:
 *   wrapper   (magic 0x466243B1, 24 bytes): u32 magic, u32 version, u64 pointer to a fatbin;
 *             version 2 (-rdc) adds a u64 pointer to a NULL-terminated array of prelinked fatbins.
 *   container (magic 0xBA55ED50): u32 magic, u16 version 1, u16 header size 16, u64 size of what
 *             follows the header (a sequence of entries). .nv_fatbin holds several back to back.
 *   entry:    +0x00 u16 kind (1 PTX, 2 ELF, 8 LTO IR), +0x04 u32 header size, +0x08 u64 payload
 *             size (with padding), +0x10 u32 compressed size, +0x14 u32 offset in the header of a
 *             (u32 offset, u32 length) pair naming the JIT options, +0x18 u16 minor, u16 major,
 *             +0x1c u32 SM, +0x20 u32 offset and +0x24 u32 length of the source file name (-G),
 *             +0x28 u64 flags, +0x38 u64 uncompressed size.
 *   flags:    0x8000 zstd frame, 0x2000 raw LZ4 block, 0x10000 encoded (LTO IR; not decodable),
 *             0x100000 arch-specific target (sm_90a), 0x200000 family target (sm_100f).
 * fatbinary strips comments and collapses blanks in the PTX it embeds (line structure kept), so
 * embedded PTX equals `nvcc -ptx` output token for token, not byte for byte; cubins are stored
 * exactly as `nvcc -cubin` writes them. Some libraries (cuFFT) keep containers in ordinary data
 * sections and load them themselves: the ELF reader finds those too.
 *
 * libbpf-style: opaque objects, object__verb names, negative errno, and one line in err naming the
 * offset and the problem. Nothing here reads outside the image it was given (when its size is known).
 */
#ifndef GPUPROBE_FATBIN_H
#define GPUPROBE_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FATBIN_WRAPPER_MAGIC   0x466243B1u
#define FATBIN_CONTAINER_MAGIC 0xBA55ED50u

#define FATBIN_FLAG_64BIT      0x0001ull /* 64-bit address model */
#define FATBIN_FLAG_DEBUG      0x0002ull
#define FATBIN_FLAG_LINUX      0x0010ull
#define FATBIN_FLAG_LZ4        0x2000ull /* payload is one raw LZ4 block */
#define FATBIN_FLAG_ZSTD       0x8000ull /* payload is one zstd frame */

#define FATBIN_FLAG_ARCH_SPECIFIC 0x100000ull /* sm_90a-style target */
#define FATBIN_FLAG_FAMILY        0x200000ull /* sm_100f-style target */

/* PTX and ELF (cubin) are the contract; other kinds (NVVM LTO IR from code=lto_XX, 8) are kept as
 * read so that a listing can name them, but they are not decoded. */
enum fatbin_kind { FATBIN_KIND_PTX = 1, FATBIN_KIND_ELF = 2, FATBIN_KIND_LTOIR = 8 };

enum fatbin_compression { FATBIN_COMPRESS_NONE, FATBIN_COMPRESS_ZSTD, FATBIN_COMPRESS_LZ4 };

struct fatbin_entry {
	enum fatbin_kind kind;
	unsigned sm;                      /* e.g. 90 for sm_90 / compute_90 */
	unsigned version_major, version_minor;
	uint64_t flags;
	enum fatbin_compression compression;
	const uint8_t *payload;           /* points into the image (or the file's buffer) */
	size_t payload_size;              /* bytes at payload (compressed size when compressed) */
	size_t uncompressed_size;         /* size after decompression (payload_size when raw) */
	size_t offset;                    /* of the entry header, from the image start (for a
	                                     container reached through a wrapper pointer outside a
	                                     sized image: from that container's start) */
	/* Beyond the contract: the options nvcc recorded for the JIT (e.g. " -g --dont-merge-
	 * basicblocks", "--compile-only") and the source file name (-G builds); both point into the
	 * image, are not NUL-terminated, and are NULL/0 when absent. */
	const char *options;
	size_t options_len;
	const char *source_name;
	size_t source_name_len;
};

/* Every fatbin found in one image (wrapper v1/v2, container(s), ELF sections, ar archive). */
struct fatbin;

/* size SIZE_MAX when unknown (a pointer the driver API got): then sizes come from headers.
 * The image must stay alive while fb is open (entries point into it). */
int fatbin__open_mem(const void *image, size_t size, struct fatbin **out, char *err, size_t errlen);

/* A fatbin file, or an ELF executable/shared library/object with .nv_fatbin / __nv_relfatbin /
 * .nvFatBinSegment (and containers embedded in its data sections), or a static library (ar
 * archive) of such objects. The file is mapped and kept by fb. */
int fatbin__open_file(const char *path, struct fatbin **out, char *err, size_t errlen);

size_t fatbin__entry_count(const struct fatbin *fb);
const struct fatbin_entry *fatbin__entry(const struct fatbin *fb, size_t i);

/* Decompressed payload (malloc'd; PTX NUL-terminated, trailing NULs stripped from len).
 * Free with free(). */
int fatbin__entry_data(const struct fatbin_entry *e, void **out, size_t *len, char *err, size_t errlen);

void fatbin__close(struct fatbin *fb);

/* The PTX entry a device of compute capability device_sm (e.g. 90) would JIT: the highest target
 * not above it; arch-specific PTX (compute_90a) only for exactly that SM, family PTX
 * (compute_100f) only within its family (same major). NULL when none fits. */
const struct fatbin_entry *fatbin__best_ptx(const struct fatbin *fb, unsigned device_sm);
/* The PTX entry of the lowest target that is not arch-specific (sm_XXa) or family-specific
 * (sm_XXf), whatever the device; NULL when there is none. For a device that is no NVIDIA GPU
 * (gpuprobe's own driver), which runs any portable PTX: libraries such as cuBLAS and cuRAND ship
 * machine code per GPU and PTX only for the newest target (compute_120 or 121 in CUDA 13). */
const struct fatbin_entry *fatbin__lowest_portable_ptx(const struct fatbin *fb);

/* Names for printing: "ptx", "cubin", "ltoir" ("other" otherwise); "none", "zstd", "lz4";
 * the target as "sm_90", "sm_90a", "sm_100f" (buf of at least 16 bytes). */
const char *fatbin_kind_name(enum fatbin_kind kind);
const char *fatbin_compression_name(enum fatbin_compression c);
const char *fatbin_entry_target(const struct fatbin_entry *e, char *buf, size_t buflen);

enum module_image_kind { MODULE_IMAGE_UNKNOWN, MODULE_IMAGE_PTX, MODULE_IMAGE_CUBIN,
	MODULE_IMAGE_FATBIN, MODULE_IMAGE_WRAPPER };

/* What a cuModuleLoadData-style pointer holds: PTX text, an ELF cubin, a fatbin container
 * (magic 0xBA55ED50) or a wrapper (0x466243B1). size may be SIZE_MAX when unknown. */
enum module_image_kind module_image_classify(const void *image, size_t size);

/* Byte size of an image given without size (headers for fatbins, ELF headers for cubins,
 * strlen+1 for PTX). For a wrapper: the wrapper struct (24 bytes). Returns 0 or -EINVAL. */
int module_image_size(const void *image, enum module_image_kind kind, size_t *size);

#ifdef __cplusplus
}
#endif

#endif
