/* The memory layout of every map, shared by the device code (maps/map_device.c emits IR that
 * uses these offsets as constants) and the host (maps/map_host.c creates and reads the maps).
 *
 * Every map has a 128-byte descriptor in device-reachable memory; the probe's ld_imm64 of a map
 * puts the descriptor's device address in a register, and the helpers read the fields below.
 * All sizes are in bytes; every value is 8-byte aligned.
 *
 * Shards. The GPU's "CPU" is the SM (docs/architecture.md, "Hot map values are sharded per SM"): a map with
 * nshards > 1 holds nshards copies of its values, copy s starting at s * shard_stride (a multiple
 * of 128, so two SMs never share a cache line). The device picks its copy with %smid % nshards
 * (per-thread arrays: the global linear thread id % nshards). Who reads what:
 *   GP_MAPF_PERCPU  (PERCPU_ARRAY, PERCPU_HASH): the host reads every copy, like Linux per-CPU;
 *   GP_MAPF_SHARDED (ARRAY/HASH changed only by atomic add, and BPF_NOEXIST inserts): the host
 *                   sums the copies;
 *   GP_MAPF_PERTHREAD (bpftime's 1502 and 1512): one copy per thread slot, read like per-CPU
 *                   values.
 * bpftime's single-copy types (1501 hash, 1503/1504/1513 arrays) are never sharded: every thread
 * and the host see the one copy (a device read returns what all threads wrote, as in bpftime).
 *
 * Array:   value(i, s) = data + s * shard_stride + i * value_stride.
 * Hash:    open addressing over `capacity` buckets (a power of two >= 2 * max_entries), linear
 *          probing from hash(key) = FNV-1a-32 of the key bytes. Bucket b at data + b * bucket_stride:
 *            +0 u32 state (EMPTY, BUSY, FULL, DELETED), +4 u32 hash, +8 key (key_size, padded to 8),
 *            then, without shards, the value (value_stride). With shards the value of bucket b in
 *            copy s lives at vdata + s * shard_stride + b * value_stride.
 *          Inserters claim an EMPTY bucket with CAS EMPTY->BUSY, write key and value, then publish
 *          FULL; a DELETED bucket keeps its key and is revived only by the same key, so a key is
 *          never in two buckets and nothing ever locks. `count` (atomic) enforces max_entries.
 * Ring:    one ring per SM (no shared hot head). Ring r: producer state (head, drops) in device
 *          memory at prod + r * 128; data bytes (capacity, a power of two) in host-mapped memory at
 *          rdata + r * capacity; the host's consumer position at cons + r * 128, also host-mapped.
 *          A record is an 8-byte header then the payload, padded to 8, never split at the end
 *          (a PAD record fills the tail instead). Header: u32 len (payload bytes), u32 state
 *          (0 until committed, then COMMITTED, DISCARDED or PAD): len written at reservation, the
 *          state at commit after a system-scope release fence (PAD headers in one 64-bit store);
 *          the host consumes committed records in order, zeroes
 *          them and advances cons. On the device a warp reserves once: the lanes outputting to the
 *          same ring with the same record size elect a leader, which claims k <= n records with one
 *          CAS on head (a batch crossing the end is split around a PAD record), hands the position
 *          out by shfl, and adds n - k to drops: every lost record is counted, no lane waits for
 *          the host. The host's producer (host probes) reserves one record per CAS.
 */
#ifndef GPUPROBE_MAPS_MAP_LAYOUT_H
#define GPUPROBE_MAPS_MAP_LAYOUT_H

#include <stdint.h>

/* Layout classes (the device code switches on these, not on the BPF type). */
enum gp_map_kind {
	GP_MAP_KIND_ARRAY = 1,    /* ARRAY, PERCPU_ARRAY, bpftime's 1502/1503/1504/1512/1513, global data */
	GP_MAP_KIND_HASH = 2,     /* HASH, PERCPU_HASH, LRU_HASH (no eviction), bpftime's 1501 */
	GP_MAP_KIND_RING = 3,     /* RINGBUF, PERF_EVENT_ARRAY, 1527, the printk ring */
};

enum gp_map_flags {
	GP_MAPF_SHARDED = 1u << 0,   /* per-SM copies the host sums */
	GP_MAPF_PERCPU = 1u << 1,    /* per-SM copies read one by one */
	GP_MAPF_PERTHREAD = 1u << 2, /* per-thread-slot copies (shard = global thread id) */
	GP_MAPF_RDONLY = 1u << 3,    /* .rodata: the device never writes it */
	GP_MAPF_HOSTMAPPED = 1u << 4,/* values live in host-mapped memory */
	GP_MAPF_LOSSLESS = 1u << 5,  /* ring: a producer waits for space instead of dropping */
	GP_MAPF_SAMPLED = 1u << 6,   /* ring: keeps 1 in sample_rate warp batches per SM */
};

/* bpftime's GPU map types (its runtime's numbering) and what they become here:
 *   1501 GPU hash: one shared copy, device-resident (bpftime serves it through the host; here
 *        the device helpers reach it directly)                       -> HASH, never sharded
 *   1502 per-thread array: one copy per thread slot                  -> ARRAY + PERTHREAD
 *   1503 GPU array: one shared copy in device memory                 -> ARRAY, never sharded
 *   1504 kernel-shared array (BPF_F_MMAPABLE; bpftime maps a Linux BPF array's pages into the
 *        GPU): one shared copy in host-mapped memory                 -> ARRAY, host placement
 *   1512 per-thread array in host memory                             -> ARRAY + PERTHREAD, host
 *   1513 GPU array in host memory: one shared copy                   -> ARRAY, host placement
 *   1527 GPU ring buffer (perf_event_output)                         -> RING */
#define GP_BPFTIME_MAP_GPU_HASH 1501
#define GP_BPFTIME_MAP_PERTHREAD_ARRAY 1502
#define GP_BPFTIME_MAP_GPU_ARRAY 1503
#define GP_BPFTIME_MAP_KERNEL_SHARED_ARRAY 1504
#define GP_BPFTIME_MAP_PERTHREAD_ARRAY_HOST 1512
#define GP_BPFTIME_MAP_GPU_ARRAY_HOST 1513
#define GP_BPFTIME_MAP_GPU_RINGBUF 1527

/* ---- descriptor: 128 bytes, 128-aligned ------------------------------------------------ */
#define GP_MD_BPF_TYPE      0   /* u32 the BPF map type */
#define GP_MD_KIND          4   /* u32 enum gp_map_kind */
#define GP_MD_KEY_SIZE      8   /* u32 */
#define GP_MD_VALUE_SIZE    12  /* u32 */
#define GP_MD_MAX_ENTRIES   16  /* u32 */
#define GP_MD_FLAGS         20  /* u32 enum gp_map_flags */
#define GP_MD_NSHARDS       24  /* u32 >= 1 */
#define GP_MD_VALUE_STRIDE  28  /* u32 value_size rounded up to 8 */
#define GP_MD_SHARD_STRIDE  32  /* u64 bytes between copies (0 when nshards == 1) */
#define GP_MD_DATA          40  /* u64 array values / hash buckets / ring producer states */
#define GP_MD_VDATA         48  /* u64 hash: sharded values (0: values inline); ring: data bytes */
#define GP_MD_CONS          56  /* u64 ring: consumer positions (host-mapped) */
#define GP_MD_CAPACITY      64  /* u32 hash: buckets (power of two); ring: bytes per ring */
#define GP_MD_BUCKET_STRIDE 68  /* u32 hash: bytes per bucket */
#define GP_MD_COUNT         72  /* u32 hash: live elements (atomic) */
#define GP_MD_RESERVED      76
#define GP_MD_SAMPLE_RATE   80  /* u32 ring with GP_MAPF_SAMPLED: N of "1 in N" (>= 2) */
#define GP_MAP_DESC_SIZE    128

struct gp_map_desc {
	uint32_t bpf_type, kind, key_size, value_size, max_entries, flags, nshards, value_stride;
	uint64_t shard_stride, data, vdata, cons;
	uint32_t capacity, bucket_stride, count, reserved;
	uint32_t sample_rate;
	uint8_t pad[GP_MAP_DESC_SIZE - 84];
};
_Static_assert(sizeof(struct gp_map_desc) == GP_MAP_DESC_SIZE, "descriptor size");
_Static_assert(__builtin_offsetof(struct gp_map_desc, shard_stride) == GP_MD_SHARD_STRIDE, "layout");
_Static_assert(__builtin_offsetof(struct gp_map_desc, capacity) == GP_MD_CAPACITY, "layout");
_Static_assert(__builtin_offsetof(struct gp_map_desc, count) == GP_MD_COUNT, "layout");
_Static_assert(__builtin_offsetof(struct gp_map_desc, sample_rate) == GP_MD_SAMPLE_RATE, "layout");

#define GP_SHARD_ALIGN 128       /* copies of a value on different SMs never share a line */

/* ---- hash buckets ------------------------------------------------------------------------ */
#define GP_HB_STATE 0            /* u32 */
#define GP_HB_HASH  4            /* u32 */
#define GP_HB_KEY   8
enum gp_hash_state { GP_HASH_EMPTY = 0, GP_HASH_BUSY = 1, GP_HASH_FULL = 2, GP_HASH_DELETED = 3 };
#define GP_HASH_SPIN_LIMIT 100000 /* a BUSY bucket is finished by a running thread within this */
#define GP_FNV_OFFSET 2166136261u
#define GP_FNV_PRIME 16777619u

/* ---- rings ------------------------------------------------------------------------------- */
#define GP_RP_HEAD   0           /* u64 producer position (device memory, atomic) */
#define GP_RP_DROPS  8           /* u64 records lost because the ring was full */
#define GP_RP_CONS_SEEN 16       /* u64 device copy of the consumer position (never ahead of it) */
#define GP_RP_REFRESHED 24       /* u64 %globaltimer of the last read of the host's position */
/* A ring that looks full rereads the host's position (a PCIe read, claimed by one warp per ring)
 * at most this often: 132 SMs rereading every microsecond would make up to 1.3e8 PCIe reads a
 * second, while the consumer moves once per poll (50 ms by default). After a drain, at most
 * 10 us of records that a reread would have placed are dropped (and counted). */
#define GP_RING_REFRESH_NS 10000
/* Lossless rings (GP_MAPF_LOSSLESS): a warp's leader that finds too little space sleeps
 * (nanosleep, doubling from GP_RING_WAIT_MIN_NS to GP_RING_WAIT_MAX_NS) and rereads the host's
 * position (still at most once per GP_RING_REFRESH_NS per ring) until its whole batch fits, or
 * the ring is empty (a batch larger than the ring takes what fits; the rest is counted as
 * dropped). A leader that waits GP_RING_LOSSLESS_TIMEOUT_NS without seeing the consumer's
 * position move (no consumer: killed, stopped) marks the ring given up (GP_RP_GAVE_UP), and from then on it drops and counts as a lossy ring
 * does: a dead consumer slows the application by one timeout, never hangs it. */
#define GP_RP_WAIT_NS 32         /* u64 ns leaders spent waiting for space (lossless) */
#define GP_RP_SAMPLE_SEQ 40      /* u64 warp batches offered to a sampled ring (kept or not) */
#define GP_RP_OFFERED 48         /* u64 records offered to a sampled ring (kept or not) */
#define GP_RP_GAVE_UP 56         /* u64 %globaltimer when a lossless producer gave up, else 0 */
#define GP_RING_WAIT_MIN_NS 128
#define GP_RING_WAIT_MAX_NS 32768
#define GP_RING_LOSSLESS_TIMEOUT_NS 2000000000ull
#define GP_RING_WAIT_REREAD 64   /* a waiting leader rereads the host's position every 64 waits */
#define GP_RING_STATE_STRIDE 128 /* per-ring producer state and consumer position */
#define GP_RC_POS    0           /* u64 consumer position (host-mapped, written by the host) */
#define GP_RING_HDR  8           /* u32 len, u32 state */
enum gp_ring_state { GP_REC_COMMITTED = 1, GP_REC_DISCARDED = 2, GP_REC_PAD = 3 };
#define GP_RING_MIN_BYTES 4096u
#define GP_RING_CAS_LIMIT 4096   /* reserve attempts before a record is counted as dropped */

/* printk records (the set's internal ring): u32 fmt_len, u32 nargs, u64 args[3], fmt bytes. */
#define GP_PRINTK_ARGS 8
#define GP_PRINTK_FMT  32
#define GP_PRINTK_MAX_FMT 256
#define GP_PRINTK_LITERAL 255   /* nargs of a puts record: the text is printed as it is */

/* FNV-1a over the key bytes, the hash both sides use. */
static inline uint32_t gp_map_hash(const void *key, uint32_t size)
{
	const uint8_t *p = key;
	uint32_t h = GP_FNV_OFFSET;
	for (uint32_t i = 0; i < size; i++)
		h = (h ^ p[i]) * GP_FNV_PRIME;
	return h;
}

static inline uint64_t gp_round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

#endif
