/* An in-process fake of the driver calls shim/probes_alloc.c makes, standing in for the shim's
 * forwarding table (the test fills shim_real_fn[] itself): no driver, no shim library. Device
 * memory is never touched (copies and memsets only record); host memory is real. Knobs and
 * counters in fk; the shim's log lines, each ending in a newline, in logbuf. */
#ifndef GPUPROBE_TESTS_SHIM_FAKE_MEM_H
#define GPUPROBE_TESTS_SHIM_FAKE_MEM_H

#include "shim/forward.h"

#define FAKE_MOVED 0x480000000000ull      /* where a refused hint lands */
#define FAKE_ALLOC_BASE 0x7a0000000000ull /* cuMemAlloc's first address (never touched) */

struct fake_state {
	/* knobs */
	int vmm, hostptr;
	int ndev, peer_ok, peer_refused;   /* devices; device 1 can reach device 0; access refused for peers */
	int access_n, access_ids;           /* the last cuMemSetAccess: descriptors, ids as a bit set */
	size_t gran;
	int reserve_mode;          /* 0 honour the hint, 1 place elsewhere, 2 refuse */
	int create_fails_after;    /* cuMemCreate fails once this many succeeded (-1: never) */
	/* counters */
	int reserved, reserves, creates, releases, maps, unmaps, accesses;
	unsigned long long mapped_bytes, reserved_size, reserve_align;
	int allocs, frees, host_allocs, host_frees, registers, unregisters;
	int streams, stream_destroys;
	unsigned long long memset_at, memset_n;
	unsigned long long next_alloc;
	unsigned long long moved;   /* where reserve_mode 1 puts the range */
};
extern struct fake_state fk;
extern char logbuf[8192];
extern int nlog;

/* Defaults: one device with VMM, 2 MiB granularity, hints honoured; counters and log cleared. */
void fake_reset(void);
/* Point the forwarding table at the fake. */
void fake_install(void);

#endif
