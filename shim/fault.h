/* GPUPROBE_TEST_FAULT=STEP[,STEP...]: for tests, each named step of the probe set-up fails as if
 * the driver or the library had failed it, so that tests watch what the application sees then
 * (nothing: the same output as without gpuprobe) on a fake driver and on a real one. Steps:
 *   memory      map memory cannot be set up in the context (after its stream and address range
 *               were made: they must be given back)
 *   descriptor  every device allocation for maps fails (the first is a map's descriptor)
 *   config      the configuration cannot be read
 *   objects     the BPF objects fail to open or verify (after their maps were made)
 *   output      the output (collector) cannot be set up
 *   capture     the first driver call of the set-up fails as a call refused inside a stream
 *               capture does (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), without being made
 *   instrument  every module fails to instrument
 *   compile     the instrumented PTX gets a line no compiler accepts
 *   load        every instrumented module fails to load
 *   function    the first function of every instrumented module fails to load
 * The first six disable probes (one line); the last four load that module's original (one line
 * per module). An unknown step gets one line naming the known ones. */
#ifndef GPUPROBE_SHIM_FAULT_H
#define GPUPROBE_SHIM_FAULT_H

enum shim_fault_step {
	SHIM_FAULT_MEMORY,
	SHIM_FAULT_DESCRIPTOR,
	SHIM_FAULT_CONFIG,
	SHIM_FAULT_OBJECTS,
	SHIM_FAULT_OUTPUT,
	SHIM_FAULT_CAPTURE,
	SHIM_FAULT_INSTRUMENT,
	SHIM_FAULT_COMPILE,
	SHIM_FAULT_LOAD,
	SHIM_FAULT_FUNCTION,
	SHIM_FAULT_COUNT
};

/* Bit s set: step s fails. Set once at load time. */
extern unsigned shim_faults;

static inline int shim_fault(enum shim_fault_step s)
{
	return __builtin_expect((shim_faults >> s) & 1u, 0);
}

/* "memory", "descriptor", ... */
const char *shim_fault_name(enum shim_fault_step s);

#endif
