/* The launch window (launch_window.h): a counter per kernel handle in a fixed open-addressing
 * table, claimed by compare-and-swap, so a launch takes no lock and allocates nothing. A full
 * table (more kernels than slots) leaves further kernels unwindowed: probes rather than none. */
#include "shim/launch_window.h"

#include <stdint.h>

#include "common/env.h"

#define SLOTS 8192u   /* a power of two */

static struct slot {
	const void *key;
	uint64_t launches;
} slots[SLOTS];

static uint64_t skip, count;   /* count 0: no upper end */
static int state;              /* 0 not read yet, 1 no window, 2 a window */

static int window(void)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	if (__builtin_expect(s, 1))
		return s == 2;
	/* reading twice on a race is harmless: both readers find the same values */
	uint64_t k = gp_env_uint(GP_VAR_LAUNCH_SKIP), c = gp_env_uint(GP_VAR_LAUNCH_COUNT);
	skip = k;
	count = c;
	s = k || c ? 2 : 1;
	__atomic_store_n(&state, s, __ATOMIC_RELEASE);
	return s == 2;
}

static struct slot *slot_of(const void *f)
{
	uintptr_t h = (uintptr_t)f;
	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0, j = (unsigned)(h >> 40) & (SLOTS - 1); i < SLOTS; i++, j = (j + 1) & (SLOTS - 1)) {
		const void *k = __atomic_load_n(&slots[j].key, __ATOMIC_ACQUIRE);
		if (k == f)
			return &slots[j];
		if (!k) {
			const void *expected = NULL;
			if (__atomic_compare_exchange_n(&slots[j].key, &expected, f, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE) || expected == f)
				return &slots[j];
		}
	}
	return NULL;
}

int shim_launch_window_take(const void *f)
{
	if (!window())
		return 1;
	struct slot *s = slot_of(f);
	if (!s)
		return 1;
	uint64_t n = __atomic_fetch_add(&s->launches, 1, __ATOMIC_RELAXED);
	return n >= skip && (!count || n - skip < count);
}
