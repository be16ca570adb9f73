/* SHA-256 (FIPS 180-4), for the cubin cache's keys: no crypto library is a dependency, and the
 * key must not collide for different instrumented PTX (a collision would run the wrong code). */
#ifndef GPUPROBE_SHIM_SHA256_H
#define GPUPROBE_SHIM_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct gp_sha256 {
	uint32_t h[8];
	uint64_t bytes;        /* message length so far */
	uint8_t buf[64];       /* the partial block */
	size_t fill;
};

void gp_sha256_init(struct gp_sha256 *s);
void gp_sha256_update(struct gp_sha256 *s, const void *data, size_t n);
void gp_sha256_final(struct gp_sha256 *s, uint8_t out[32]);

#endif
