/* The shim's messages: every line starts "gpuprobe: " and goes to stderr in one write(), so
 * lines from concurrent threads never interleave. */
#ifndef GPUPROBE_SHIM_LOG_H
#define GPUPROBE_SHIM_LOG_H

/* Set once at load time from the environment (GPUPROBE_LOG=1). */
extern int shim_log_enabled;

/* Always printed: errors and the one line about a missing driver. */
void shim_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The driver's name of a CUresult ("CUDA_ERROR_OUT_OF_MEMORY"), or "unknown CUDA error". */
const char *shim_err_name(int rc);

#define shim_log(...) do { if (shim_log_enabled) shim_msg(__VA_ARGS__); } while (0)

#endif
