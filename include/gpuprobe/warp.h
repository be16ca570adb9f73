/* gpuprobe: event streams at the speed of the bus. Included by gpuprobe/gpuprobe.h; host C (a
 * decoder) may include it alone.
 *
 * Ring buffer modes, chosen per map (RINGBUF, PERF_EVENT_ARRAY, bpftime's 1527):
 *   lossy (default)  a full ring drops the record and counts it exactly; the kernel never waits.
 *   lossless         __uint(map_flags, GP_RINGBUF_LOSSLESS): a warp whose records do not fit
 *                    waits (nanosleep, rereading the host's position) until they do, so the
 *                    kernel slows instead of losing events. A batch larger than the whole ring
 *                    takes what fits, the rest counted as dropped; a producer that waits 2 s
 *                    (the consumer is gone or stopped) turns the ring lossy for the rest of the
 *                    run, so a dead consumer never hangs the application.
 *   sampled          __uint(map_extra, N), N >= 2 (with or without GP_RINGBUF_LOSSLESS): each
 *                    SM's ring keeps 1 in N of the warp batches offered to it (batch: the
 *                    records the lanes of one warp write together at one call, or one
 *                    bpf_gpu_warp_output record), counted in order, so the lanes of an access
 *                    stay together. N is in the map's descriptor and the records offered are
 *                    counted exactly beside the ones kept: multiply counts by N. A sampled-out
 *                    batch is not a drop: bpf_ringbuf_output and bpf_gpu_warp_output return 0,
 *                    bpf_ringbuf_reserve returns NULL.
 *
 * Warp records: bpf_gpu_warp_output(&ring, value, tag, flags) called by the lanes of a warp
 * together (a gpu/mem probe at its access: value = ctx->addr) writes ONE record for all of
 * them, struct gp_warp_record below: when every lane's value is base + stride * (lane - the
 * lowest lane) the record is 32 bytes whatever the lanes (a coalesced warp access: 1/24 of 32
 * 24-byte per-lane records); otherwise the values of the active lanes follow in lane order
 * (8 bytes each). NVBit's mem_trace writes one such record per warp access too. */
#ifndef GPUPROBE_WARP_H
#define GPUPROBE_WARP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* map_flags bit of a ring buffer (gpuprobe's own; Linux takes none for RINGBUF). */
#define GP_RINGBUF_LOSSLESS (1U << 28)

/* bpf_gpu_warp_output's flags (any other bit is rejected by the verifier):
 * GP_WARP_VALUES: always write every lane's value (no base + stride folding). */
#define GP_WARP_VALUES 1U
#define GP_WARP_FLAGS_ALL GP_WARP_VALUES

/* One warp access, as bpf_gpu_warp_output writes it (little endian, 8-byte aligned). */
struct gp_warp_record {
	__u64 tag;     /* the probe's tag argument, from the lowest lane */
	__u64 base;    /* the lowest active lane's value */
	__u32 mask;    /* active lanes: bit i = lane i */
	__s32 stride;  /* nvals == 0: lane i's value = base + stride * (i - lowest lane) */
	__u32 block;   /* linear block index: (ctaid.z * nctaid.y + ctaid.y) * nctaid.x + ctaid.x */
	__u16 warp;    /* warp in the block: linear thread index / 32 */
	__u8 nvals;    /* 0: regular (base, stride); else popcount(mask) values follow */
	__u8 flags;    /* bpf_gpu_warp_output's flags */
	/* __u64 values[nvals]: the active lanes' values, lowest lane first */
};
#define GP_WARP_REC_BYTES 32
#ifndef __cplusplus
_Static_assert(sizeof(struct gp_warp_record) == GP_WARP_REC_BYTES, "gp_warp_record layout");
#endif

/* The value of lane `lane` (in mask) of record r, whose values (if any) follow it (the caller
 * checks the record's size against nvals first). */
static inline __u64 gp_warp_record_value(const struct gp_warp_record *r, unsigned lane)
{
	if (!r->mask || lane > 31)
		return r->base;   /* not a record bpf_gpu_warp_output writes */
	unsigned lowest = (unsigned)__builtin_ctz(r->mask);
	if (!r->nvals)
		return r->base + (__u64)((long long)r->stride * ((long long)lane - (long long)lowest));
	unsigned rank = (unsigned)__builtin_popcount(r->mask & ((1u << lane) - 1u));
	return ((const __u64 *)(r + 1))[rank];
}

#endif
