/* Lock-free handle maps (see registry.h): fixed bucket arrays of singly linked chains. Inserts
 * push at a chain head with compare-and-swap; values are swapped atomically in place. */
#include "shim/registry.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define BUCKETS 8192   /* power of two; PyTorch-sized apps hold a few thousand kernels */

struct node {
	const void *key;
	void *value;       /* atomic */
	struct node *next; /* immutable once published */
};

static struct node *tables[3][BUCKETS];

static size_t bucket_of(const void *key)
{
	uint64_t h = (uintptr_t)key;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h & (BUCKETS - 1);
}

static struct node *find(struct node *n, const void *key)
{
	for (; n; n = n->next)
		if (n->key == key)
			return n;
	return NULL;
}

int registry_put(enum registry_kind kind, const void *handle, void *value)
{
	struct node **head = &tables[kind][bucket_of(handle)];
	struct node *first = __atomic_load_n(head, __ATOMIC_ACQUIRE);
	struct node *n = find(first, handle);
	if (n) {
		__atomic_store_n(&n->value, value, __ATOMIC_RELEASE);
		return 0;
	}
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->key = handle;
	n->value = value;
	do {
		/* Someone may have inserted the same key meanwhile: update theirs instead. */
		struct node *dup = find(first, handle);
		if (dup) {
			free(n);
			__atomic_store_n(&dup->value, value, __ATOMIC_RELEASE);
			return 0;
		}
		n->next = first;
	} while (!__atomic_compare_exchange_n(head, &first, n, 1, __ATOMIC_RELEASE,
					      __ATOMIC_ACQUIRE));
	return 0;
}

void *registry_get(enum registry_kind kind, const void *handle)
{
	struct node *n = find(__atomic_load_n(&tables[kind][bucket_of(handle)], __ATOMIC_ACQUIRE),
			      handle);
	return n ? __atomic_load_n(&n->value, __ATOMIC_ACQUIRE) : NULL;
}
