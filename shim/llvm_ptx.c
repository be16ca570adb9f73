/* GPUPROBE_LLVM_CACHE=DIR: every module with PTX for this GPU is loaded from the PTX that
 * amdgpu/'s LLVM lowering (target nvptx64) made of it, in place of the original: the AMD path's
 * lowering executed end to end on an NVIDIA GPU. LLVM itself never runs inside the application:
 * the lowered module is read from DIR/<key of the original PTX> (amdgpu/ptx_key.h), filled
 * beforehand by `gpuprobe ptx llvm --target nvptx --cache DIR FILE...` (on any machine with LLVM
 * 19: the GPU machines have none), or at load time by that command run as a child process when
 * GPUPROBE_LLVM_LOWER names a gpuprobe binary built with amdgpu/. A module without a lowered
 * form is loaded as given, with one line saying so. With probes, probes.c instruments the
 * original PTX (the whole module at load: no per-kernel instrumentation in this mode) and lowers
 * the instrumented PTX here (shim_llvm_lower), as the AMD path merges probes before LLVM; the
 * key is then the instrumented text's (byte-identical across runs: fixed map addresses). */
#include "common/env.h"
#include "shim/llvm_ptx.h"
#include "shim/forward.h"
#include "shim/log.h"

#include "amdgpu/ptx_key.h"
#include "ptx-frontend/fatbin.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int shim_llvm_enabled;
static const char *cache_dir, *lower_bin;

__attribute__((constructor)) static void llvm_env(void)
{
	cache_dir = gp_env_str(GP_VAR_LLVM_CACHE);   /* common/env.c: none in a setuid process */
	shim_llvm_enabled = cache_dir != NULL;
	lower_bin = gp_env_str(GP_VAR_LLVM_LOWER);
}

static unsigned current_sm(void)
{
	CUdevice dev;
	int major = 0, minor = 0;
	if (SHIM_REAL(cuCtxGetDevice)(&dev) != CUDA_SUCCESS ||
	    SHIM_REAL(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != CUDA_SUCCESS ||
	    SHIM_REAL(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != CUDA_SUCCESS)
		return 0;
	return (unsigned)(major * 10 + minor);
}

static char *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = 0;
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* Run `LOWER ptx llvm --target nvptx --arch sm_XX --cache DIR IN.ptx`; 0 when it made the file. */
static int lower_now(const char *ptx, size_t len, unsigned sm, char *why, size_t whylen)
{
	char in[] = "/tmp/gpuprobe-llvm-XXXXXX";
	int fd = mkstemp(in);
	if (fd < 0)
		return snprintf(why, whylen, "mkstemp: %s", strerror(errno)), -1;
	size_t n = strnlen(ptx, len);
	int bad = write(fd, ptx, n) != (ssize_t)n;
	close(fd);
	char arch[16];
	snprintf(arch, sizeof(arch), "sm_%u", !sm ? 80 : sm > 90 ? 90 : sm);   /* LLVM 19 knows up to sm_90 */
	char *argv[] = {(char *)lower_bin, "ptx", "llvm", "--target", "nvptx", "--arch", arch, "--cache",
			(char *)cache_dir, in, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int st = 0;
	if (!bad && posix_spawn(&pid, lower_bin, &fa, NULL, argv, environ) == 0) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		bad = !WIFEXITED(st) || WEXITSTATUS(st);
		if (bad)
			snprintf(why, whylen, "%s failed (status %d; its message is above)", lower_bin,
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else {
		snprintf(why, whylen, "cannot run %s", lower_bin);
		bad = 1;
	}
	posix_spawn_file_actions_destroy(&fa);
	unlink(in);
	return bad ? -1 : 0;
}

/* LLVM's PTX for ptx (from the cache, or lowered now by GPUPROBE_LLVM_LOWER), malloc'd, or NULL
 * with one line naming the module (what: "loaded unchanged" or "loaded without LLVM"). */
char *shim_llvm_lower(const char *ptx, size_t len, unsigned seq, const char *what, size_t *out_len)
{
	char key[48], path[4096];
	amdgpu_ptx_key(ptx, len, key);
	snprintf(path, sizeof(path), "%s/%s", cache_dir, key);
	char *out = read_whole(path, out_len);
	if (!out && lower_bin) {
		char why[512] = "";
		if (lower_now(ptx, len, current_sm(), why, sizeof(why)) == 0)
			out = read_whole(path, out_len);
		else
			shim_msg("module %u: LLVM path: %s", seq, why);
	}
	if (!out) {
		shim_msg("module %u: LLVM path: no lowered module %s in %s%s; %s", seq, key, cache_dir,
			 lower_bin ? "" : " (fill it with 'gpuprobe ptx llvm --target nvptx --cache DIR FILE...', "
					  "or set GPUPROBE_LLVM_LOWER to such a gpuprobe)", what);
		return NULL;
	}
	shim_log("module %u: LLVM path: loaded LLVM's PTX %s", seq, key);
	return out;
}

int shim_llvm_transform(struct shim_image *img, const struct shim_module *m)
{
	char err[512] = "";
	void *payload = NULL;
	const char *ptx = NULL;
	size_t len = 0;
	unsigned sm = current_sm();
	if (!img->data)
		return 0;
	if (img->kind == MODULE_IMAGE_PTX) {
		ptx = img->data;
		len = strlen(ptx);
	} else if (img->kind == MODULE_IMAGE_FATBIN || img->kind == MODULE_IMAGE_WRAPPER) {
		struct fatbin *fb = NULL;
		if (!sm || fatbin__open_mem(img->data, img->size, &fb, err, sizeof(err)))
			return 0;
		const struct fatbin_entry *e = fatbin__best_ptx(fb, sm);
		int rc = e ? fatbin__entry_data(e, &payload, &len, err, sizeof(err)) : -1;
		fatbin__close(fb);
		if (rc) {
			shim_msg("module %u: LLVM path: no PTX for sm_%u in it; loaded unchanged", m->seq, sm);
			return 0;
		}
		ptx = payload;
	} else {
		shim_msg("module %u: LLVM path: a cubin without PTX; loaded unchanged", m->seq);
		return 0;
	}
	size_t out_len = 0;
	char *out = shim_llvm_lower(ptx, len, m->seq, "loaded unchanged", &out_len);
	free(payload);
	if (!out)
		return 0;
	free(img->owned);
	img->owned = out;
	img->data = out;
	img->size = out_len + 1;
	img->kind = MODULE_IMAGE_PTX;
	return 1;
}
