/* Where the real NVIDIA driver library is: shared by the shim and `gpuprobe run`.
 *
 * Order: $GPUPROBE_REAL_LIBCUDA alone when set; else every libcuda.so.1 the loader cache
 * (/etc/ld.so.cache) names; else the usual install paths. A candidate that is the same file
 * (device and inode) as `self` is never taken: the shim must not load itself as its driver.
 */
#ifndef GPUPROBE_SHIM_DRIVER_FIND_H
#define GPUPROBE_SHIM_DRIVER_FIND_H

#include <stddef.h>

/* Called for each existing candidate; return 0 to take it, nonzero to go on. */
typedef int (*driver_try_fn)(const char *path, void *ctx);

/* 0 with the taken path in out, or -ENOENT with `looked` holding one readable phrase of
 * everything that was tried (for the one error line). self may be NULL. */
int driver_find(const char *self, driver_try_fn try_fn, void *ctx, char *out, size_t outlen,
		char *looked, size_t lookedlen);

/* The test a candidate must pass (driver_check.c), the same for the shim and `gpuprobe run`:
 * it loads (dlopen RTLD_NOW | RTLD_LOCAL, by a path the LD_AUDIT module leaves alone), exports
 * cuInit and cuGetProcAddress, and its cuInit is neither self_sym (the shim's own, may be NULL)
 * nor in the file `self`. 0 with the handle in *handle, or -1 with one phrase in why. */
int driver_check(const char *path, const char *self, const void *self_sym, void **handle,
		 char *why, size_t whylen);

/* 1 when a and b name the same file. */
int driver_same_file(const char *a, const char *b);

#endif
