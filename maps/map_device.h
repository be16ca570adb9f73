/* The device side of maps: IR for the map references and the helpers of a lowered probe
 * (ebpf/lower.h: gp_lower_opts.emit_map_ref, .helper_func, .puts_func), emitted with the ir.h
 * constructors. Every helper is one .func per module, written once, that reads the map's
 * descriptor (maps/map_layout.h) at run time, so one function serves every map of its kind.
 * Nothing waits on the host: hashes are lock-free, rings drop (and count) when full.
 *
 * Use:
 *   struct gp_maps_device dev;
 *   gp_maps_device__init_from_set(&dev, set);          (or fill the fields by hand in tests)
 *   struct gp_lower_opts lo = { .emit_map_ref = gp_maps_emit_map_ref,
 *                               .helper_func = gp_maps_helper_func,
 *                               .puts_func = gp_maps_puts_func(&dev, m),
 *                               .user = &dev, ... };
 *   gp_lower_program(m, insns, n, name, &lo, err, errlen);
 *   gp_maps_device__release(&dev);
 */
#ifndef GPUPROBE_MAPS_MAP_DEVICE_H
#define GPUPROBE_MAPS_MAP_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "maps/map_layout.h"
#include "ptx-frontend/ir.h"

struct gp_map_set;

struct gp_maps_device {
	const struct gp_map_desc *descs;   /* nmaps descriptors (host copies, with device addresses) */
	const uint64_t *desc_addrs;        /* device address of each descriptor */
	size_t nmaps;
	uint64_t printk_desc;              /* device address of the printk ring's descriptor; 0: none */
	void *owned;                       /* what init_from_set allocated */
	/* No program of the object deletes from its maps (helper 3, device or host): a bucket,
	 * once a key's, stays that key's, and a lookup in place may remember where it found a key
	 * (emit_hash_lookup_var's site cache). Set by the caller after init_from_set. */
	int hash_site_cache;
	unsigned ncaches;                  /* site caches made (their names' numbers) */
};

/* Fill dev from a created map set (descriptors and addresses of every map and the printk ring).
 * Returns 0 or -ENOMEM. */
int gp_maps_device__init_from_set(struct gp_maps_device *dev, const struct gp_map_set *set);
void gp_maps_device__release(struct gp_maps_device *dev);

/* gp_lower_opts.emit_map_ref (user = struct gp_maps_device *). The map form puts the descriptor's
 * address in dst; the value form (global data) the value's address + off, in this SM's copy when
 * the map is sharded. Returns 0, -ENOENT (no such map), -EINVAL (value form of a non-array). */
int gp_maps_emit_map_ref(void *user, ir_module *m, ir_func *f, const char *dst, int map_index,
			 int value_form, int32_t off);

/* gp_lower_opts.emit_map_lookup: map_lookup_elem of a constant key as a direct address: the
 * element's (this SM's copy for per-CPU and sharded arrays), or 0 past max_entries. Returns
 * GP_LOWER_WARP_UNIFORM (ebpf/lower.h), with GP_LOWER_NONNULL but past max_entries, or
 * -ENOTSUP (not an array, or per-thread: the lowering then calls the helper). */
int gp_maps_emit_map_lookup(void *user, ir_module *m, ir_func *f, const char *dst, int map_index,
			    uint32_t key);
/* emit_map_lookup_var (ebpf/lower.h): dst = the address of element `key` (a 64-bit register
 * holding a u32, at most key_max) of an array's copy on this SM, or 0 past max_entries (no test
 * where key_max is below it); for a hash map with 4-byte keys, the value of that key or 0 (the
 * lookup emitted in place). -ENOTSUP for other hashes and per-thread maps (their helper stays). */
int gp_maps_emit_map_lookup_var(void *user, ir_module *m, ir_func *f, const char *dst,
				int map_index, const char *key, uint32_t key_max);

/* gp_lower_opts.update_by_value: for a map with keys and values of 4 or 8 bytes, adds (once per
 * module) and names a cold .func (ret) f(desc, key, value, flags, unused) that copies the two
 * words into its own frame and calls map_update_elem with them; NULL for other maps. */
const char *gp_maps_update_by_value(void *user, ir_module *m, int map_index, unsigned *key_size,
				    unsigned *value_size);

/* gp_lower_opts.helper_func: adds (once per module) and names the .func for helper_id:
 * 1 map_lookup_elem, 2 map_update_elem, 3 map_delete_elem, 6 trace_printk, 25 perf_event_output,
 * 130 ringbuf_output, 131 ringbuf_reserve, 132 ringbuf_submit, 133 ringbuf_discard.
 * NULL for any other id, and for trace_printk when dev has no printk ring. */
const char *gp_maps_helper_func(void *user, ir_module *m, int helper_id);

/* gp_lower_opts.puts_func for bpftime's puts (501): a .func (.param .b64 ret) f(.param .b64 str)
 * that writes the string (up to 255 bytes) to the printk ring; NULL without a printk ring. */
const char *gp_maps_puts_func(struct gp_maps_device *dev, ir_module *m);

/* Error codes the device helpers return (negative errno, as Linux's helpers). */
#define GP_DEV_EPERM 1
#define GP_DEV_ENOENT 2
#define GP_DEV_E2BIG 7
#define GP_DEV_EAGAIN 11
#define GP_DEV_EBUSY 16
#define GP_DEV_EEXIST 17
#define GP_DEV_EINVAL 22
#define GP_DEV_ENOSPC 28

#endif
