/* gpuprobe: how `gpuprobe run` prints a probe's maps. Included by gpuprobe/gpuprobe.h.
 *
 * The map's key type decides, read from the object's BTF (compile with -g):
 *   __type(key, gp_kernel_id_t)    table keyed by kernel: the key holds ctx->thread.kernel_hash
 *                                  (gp_name_hash() of the mangled name); printed with the
 *                                  kernel's demangled name ("kernel#<hash>" when never seen).
 *   __type(key, gp_api_id_t)       table keyed by driver function: the key holds ctx->api_id
 *                                  (gpuprobe/api.h); printed as its name, e.g. cuLaunchKernel.
 *   __type(key, gp_log2_key_t)     log2 histogram (bpftrace's hist()): key = gp_log2_bucket(v);
 *                                  bucket 0 counts 0, 1 counts 1, k >= 2 counts [2^(k-1), 2^k).
 *   __type(key, gp_lhist_key_t)    linear histogram, with GP_LHIST_STEP(step) after the map's
 *                                  name: key = gp_lhist_bucket(v, step), bucket k counts values
 *                                  in [k*step, (k+1)*step).
 *   __type(key, gp_no_key_t)       a map of one value, at key 0: printed "@name: value".
 *   a struct of integers and of the types above, each member at its natural alignment, in
 *   order, at most 8 (struct { gp_kernel_id_t k; __u32 block; })
 *                                  a tuple: "@name[vecAdd(float*, int), 3]: value", kernel and
 *                                  API members by name, the others as unsigned integers.
 * A typedef of one of these (typedef gp_kernel_id_t my_key;) counts as it.
 *
 * Without such a type (objects built without -g, probes older than these types) the map's name
 * decides, as it always did; a type wins over a name:
 *   name contains "lhist_<step>"   linear histogram (e.g. lat_lhist_100), 4- or 8-byte key
 *   name ends in "hist"            log2 histogram (e.g. lat_hist, size_hist), 4- or 8-byte key
 *   name contains "kernel"         table keyed by kernel (e.g. loads_by_kernel), 4- or 8-byte key
 * Every other map prints as counts: "@name[key]: value", largest last, like bpftrace. A key of
 * 1, 2, 4 or 8 bytes prints as an unsigned integer, a NUL-terminated printable key as a string,
 * others as hex bytes; a value of 1, 2, 4 or 8 bytes as an integer, longer values as their 8-byte
 * words: "(w0, w1, ...)". Names starting with "." or "_" are not printed (.rodata, private
 * maps); ".bss" and ".data" are printed when they hold nonzero words.
 * Sharded maps print their sums; per-CPU and per-thread maps print the sum of their copies.
 * Ring buffers (RINGBUF, PERF_EVENT_ARRAY, 1527) print each record as it arrives as hex words, and
 * at exit how many records were lost. bpf_printk / bpf_trace_printk and bpftime's puts print
 * their line as it arrives. With --json every item is one JSON object per line (docs/guide.md
 * documents every record type). */
#ifndef GPUPROBE_OUTPUT_H
#define GPUPROBE_OUTPUT_H

/* Key types `gpuprobe run` prints by (above). Distinct typedefs, so BTF tells them apart. */
typedef unsigned int gp_kernel_id_t;   /* ctx->thread.kernel_hash */
typedef unsigned int gp_api_id_t;      /* ctx->api_id (gpuprobe/api.h) */
typedef unsigned int gp_log2_key_t;    /* gp_log2_bucket(v) */
typedef unsigned int gp_lhist_key_t;   /* gp_lhist_bucket(v, step), with GP_LHIST_STEP(step) */
typedef unsigned int gp_no_key_t;      /* always 0: the map holds one value */

/* The bucket width of a gp_lhist_key_t map, as a BTF tag on the map (clang 14 and later):
 *   struct { ... __type(key, gp_lhist_key_t); ... } lat SEC(".maps") GP_LHIST_STEP(100); */
#define GP_LHIST_STEP(step) __attribute__((btf_decl_tag("gp_lhist_step:" #step)))

/* The log2 bucket of v: 0 for 0, else 1 + floor(log2(v)) (1 -> 1, 2..3 -> 2, 4..7 -> 3 ...). */
static inline unsigned gp_log2_bucket(unsigned long long v)
{
	/* no loop: the verifier accepts straight-line code without a bound to prove */
	if (!v)
		return 0;
	unsigned b = 1;
	if (v >> 32) { v >>= 32; b += 32; }
	if (v >> 16) { v >>= 16; b += 16; }
	if (v >> 8) { v >>= 8; b += 8; }
	if (v >> 4) { v >>= 4; b += 4; }
	if (v >> 2) { v >>= 2; b += 2; }
	if (v >> 1) b += 1;
	return b;
}

/* The linear bucket of v for buckets `step` wide. */
static inline unsigned gp_lhist_bucket(unsigned long long v, unsigned long long step)
{
	return (unsigned)(v / (step ? step : 1));
}

#endif
