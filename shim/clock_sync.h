/* One clock for host and device probes (docs/architecture.md "One clock"). Host probes read the host's
 * clocks; device probes read the GPU's %globaltimer, which is not the same clock everywhere (on
 * the H100 test machine, a VM, blocks appeared to start before their launch). When probes start,
 * the shim measures how far the host's CLOCK_REALTIME and CLOCK_MONOTONIC are from %globaltimer
 * with a kernel of its own, writes the offsets into the words device probes add to %globaltimer
 * (ebpf/lower.h clock_addr), and re-checks them every few seconds from the output thread
 * (GPUPROBE_CLOCK_INTERVAL=N seconds, default 5; 0: only at start and at the end). The final
 * report says which clock times are on and what was measured (maps/output.h).
 * GPUPROBE_CLOCK=0 turns the correction off (device times are %globaltimer itself), to compare. */
#ifndef GPUPROBE_SHIM_CLOCK_SYNC_H
#define GPUPROBE_SHIM_CLOCK_SYNC_H

#include <stdint.h>

#include "shim/forward.h"

struct gp_map_allocator;
struct gp_output_clock;

/* Measure in ctx (the maps' context) and write the offsets at word_addr through a's copies.
 * word_addr 0: no device probe reads a clock; nothing is measured. Never waits on the
 * application's streams and never disturbs a stream capture in progress. A failure costs only
 * the correction: the words stay zero and the report says why. Returns 0 when corrected. */
int shim_clock_start(CUcontext ctx, const struct gp_map_allocator *a, uint64_t word_addr);

/* Measure again if the interval has passed (force: now), and rewrite the words when the offset
 * moved by more than the measurement's uncertainty. Safe from any thread. */
void shim_clock_check(int force);

/* For the output's opts.tick and opts.clock (user is unused). */
void shim_clock_tick(void *user);
int shim_clock_report(void *user, struct gp_output_clock *c);

#endif
