/* gpuprobe: how `gpuprobe run` prints a probe's maps, decided by the map's name (BTF-free, so
 * any object built with any clang works). Include it in probes for the bucket functions.
 *
 *   name contains "lhist_<step>"   linear histogram: key = bucket index (u32 or u64), bucket k
 *                                  counts values in [k*step, (k+1)*step). Fill with
 *                                  gp_lhist_bucket(v, step). Example: lat_lhist_100.
 *   name ends in "hist"            log2 histogram (bpftrace's hist()): key = gp_log2_bucket(v);
 *                                  bucket 0 counts 0, 1 counts 1, k >= 2 counts [2^(k-1), 2^k).
 *                                  Example: lat_hist, size_hist.
 *   name contains "kernel"         top-N table keyed by kernel: key = ctx->kernel_hash (u32, or
 *                                  u64 holding it), gp_name_hash() of the mangled name; printed
 *                                  with the kernel's demangled name.
 *   name starts with "." or "_"    not printed (.rodata, .bss, .data, private maps);
 *                                  ".bss" and ".data" are printed when they hold nonzero words.
 *   anything else                  counts: "@name[key]: value", largest last, like bpftrace.
 *                                  A key of 1, 2, 4 or 8 bytes prints as an unsigned integer, a
 *                                  NUL-terminated printable key as a string, others as hex bytes.
 *                                  A value of 1, 2, 4 or 8 bytes prints as an integer, longer
 *                                  values as their 8-byte words: "(w0, w1, ...)".
 * Sharded maps print their sums; per-CPU and per-thread maps print the sum of their copies.
 * Ring buffers (RINGBUF, PERF_EVENT_ARRAY, 1527) print each record as it arrives as hex words, and
 * at exit how many records were lost. bpf_printk / bpf_trace_printk and bpftime's puts print
 * their line as it arrives. With --json every item is one JSON object per line (docs/guide.md
 * documents every record type). */
#ifndef GPUPROBE_OUTPUT_H
#define GPUPROBE_OUTPUT_H

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
