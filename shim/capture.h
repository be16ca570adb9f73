/* The shim's own driver calls and the application's stream captures.
 *
 * While an application captures a stream in global mode (cudaStreamCaptureModeGlobal, the
 * default), every thread whose capture mode is global is refused "potentially unsafe" calls
 * (allocating, freeing, registering or mapping memory, loading or unloading modules,
 * synchronising): the call fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and the driver
 * invalidates the application's capture, whose cudaGraphInstantiate then fails (graphExecution
 * crashed so: CUDA's lazy loading set the probes up at its first launch, inside its capture).
 * None of the calls the shim makes on its own behalf belongs to the application's graph, so they
 * run with the thread's mode relaxed (CUDA's documented push-pop use of
 * cuThreadExchangeStreamCaptureMode) and never on the legacy stream, which a capturing blocking
 * stream would have to synchronise with; copies go through a non-blocking stream of our own.
 * Nothing is ever enqueued into an application's stream. */
#ifndef GPUPROBE_SHIM_CAPTURE_H
#define GPUPROBE_SHIM_CAPTURE_H

/* The calling thread's mode before shim_relax (give it to shim_unrelax). Nests. */
struct shim_relaxed {
	int mode;
	int swapped;
};

/* This thread's stream-capture mode becomes relaxed until shim_unrelax(r). A driver without
 * cuThreadExchangeStreamCaptureMode (before CUDA 10.1) has no capture modes: nothing to do. */
void shim_relax(struct shim_relaxed *r);
void shim_unrelax(const struct shim_relaxed *r);

#endif
