/* gpuprobe run --trace, the shim's half (shim/api_trace.c): a span per driver API call and, per
 * kernel launch, what was launched and when it finished, written as JSON lines (the records of
 * the --json stream, docs/guide.md "Traces") into a file of the trace folder that `gpuprobe run`
 * names in GPUPROBE_TRACE. `gpuprobe` builds the trace from them (cli/trace*.c).
 *
 * Off unless GPUPROBE_TRACE is set: then, once the forwarding table is filled, the slot of every
 * traced export (GPUPROBE_TRACE_API: comma-separated globs, default all) is swapped for its
 * timing wrapper (generated: shim_trace.c). Without tracing nothing is swapped, so the plain
 * forwarding path is exactly what it was. */
#ifndef GPUPROBE_SHIM_API_TRACE_H
#define GPUPROBE_SHIM_API_TRACE_H

#include <stdint.h>

#define GP_ENV_TRACE "GPUPROBE_TRACE"           /* folder for api-PID.jsonl (0700, the user's) */
#define GP_ENV_TRACE_API "GPUPROBE_TRACE_API"   /* globs of the calls to trace (default "*") */
#define GP_ENV_TRACE_DONE "GPUPROBE_TRACE_DONE" /* 0: no completion callback after launches */

/* The real function of each slot the tracer swapped (generated shim_trace.c), and the timing
 * wrapper of every export. */
extern void *shim_trace_real[];
extern void *const shim_trace_fns[];

/* Called once the forwarding table is filled (driver.c): installs the wrappers when tracing. */
void shim_api_trace_install(void);

/* The trace clock: CLOCK_REALTIME in ns (the clock device probe times are corrected onto). */
uint64_t shim_api_trace_now(void);
/* One call of export id that began at t0 and returned rc. */
void shim_api_trace_call(int id, uint64_t t0, int rc);

#endif
