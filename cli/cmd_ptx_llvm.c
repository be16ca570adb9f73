/* gpuprobe ptx llvm FILE.ptx --target amdgcn|nvptx [-o OUT.ll]: the module lowered to LLVM IR
 * (amdgpu/), and gpuprobe ptx amdgpu FILE.ptx --arch gfx90a|gfx942|gfx1100 -o OUT.co: an AMDGCN
 * code object. */
#include "cli/cmd_ptx.h"

#include "amdgpu/amdgpu.h"
#include "amdgpu/module.h"
#include "amdgpu/ptx_key.h"
#include "ptx-frontend/fatbin.h"
#include "cli/cli.h"
#include "cli/file_kind.h"
#include "ptx-frontend/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* amdgpu/ and LLVM 19 live in lib/libgpuprobe-amdgpu.so beside this program (../lib), opened
 * when needed: the command runs where LLVM 19 is absent. */
static const struct amdgpu_module_api *A;

static int load_module(const char *cmd)
{
	if (A)
		return 0;
	char path[4096] = AMDGPU_MODULE_NAME;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	if (n > 0) {
		path[n] = 0;
		char *slash = strrchr(path, '/');
		if (slash)
			snprintf(slash, sizeof(path) - (size_t)(slash - path), "/../lib/%s", AMDGPU_MODULE_NAME);
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen(AMDGPU_MODULE_NAME, RTLD_NOW | RTLD_LOCAL);
	amdgpu_module_api_fn get = h ? (amdgpu_module_api_fn)dlsym(h, "amdgpu_module_api") : NULL;
	if (!get || !(A = get()) || A->version != AMDGPU_MODULE_API_VERSION) {
		const char *why = dlerror();
		A = NULL;
		return cli_error("%s: the LLVM 19 lowering is not available here (%s: %s); it needs a build with "
				 "llvm-19-dev and LLVM 19's libraries where it runs", cmd, path, why ? why : "no amdgpu_module_api");
	}
	return 0;
}

static void llvm_usage(FILE *out)
{
	fputs("usage: gpuprobe ptx llvm --target amdgcn|nvptx [--arch ARCH] [--ptx] [-O0] [-o OUT] FILE.ptx\n\n"
	      "Lower a PTX module to LLVM IR (LLVM 19) for the AMD GPU target (amdgcn-amd-amdhsa) or\n"
	      "NVIDIA's (nvptx64-nvidia-cuda), optimised by LLVM's -O2 pipeline. What cannot be lowered\n"
	      "is named with its line; a kernel that needs it is left out (one line each: exit status 0\n"
	      "while other kernels lower, 1 when none does).\n\n"
	      "  --target T    amdgcn or nvptx (required)\n"
	      "  --arch ARCH   amdgcn: gfx90a (default), gfx942, gfx1100; nvptx: sm_60 .. sm_90 (default sm_80)\n"
	      "  --ptx         nvptx only: write the PTX LLVM's NVPTX backend makes instead of LLVM IR\n"
	      "  -O0           the IR as lowered (registers promoted), without LLVM's optimisations\n"
	      "  --cache DIR   nvptx only: lower every PTX module of each FILE (PTX, fatbin, cubin-free\n"
	      "                binaries with embedded fatbins) and write LLVM's PTX into DIR under its\n"
	      "                original's key, for the shim's GPUPROBE_LLVM_CACHE=DIR mode (many FILEs)\n"
	      "  -o, --output OUT  write there ('-' or absent: standard output)\n"
	      "  -h, --help    this text\n\n"
	      "Exit status: 0 written, 1 not lowered or the output cannot be written, 2 bad usage or a\n"
	      "file that is not PTX.\n", out);
}

static void amdgpu_usage(FILE *out)
{
	fputs("usage: gpuprobe ptx amdgpu --arch gfx90a|gfx942|gfx1100 [--cov 4|5] -o OUT.co FILE.ptx\n\n"
	      "Lower a PTX module through LLVM 19 to an AMDGCN code object (linked by ld.lld-19), which\n"
	      "hipModuleLoadData loads. A warp stays 32 lanes: on wave64 devices two warps share a\n"
	      "wavefront. What cannot be lowered is named with its line; a kernel that needs it is left\n"
	      "out (one line each: exit status 0 while other kernels lower, 1 when none does).\n\n"
	      "  --arch ARCH   gfx90a (MI200), gfx942 (MI300) or gfx1100 (RDNA3); required\n"
	      "  --cov N       code-object version: 4 (Debian's HIP 5.2) or 5 (ROCm 6; default)\n"
	      "  -o, --output OUT  the code object (required)\n"
	      "  -h, --help    this text\n\n"
	      "Exit status: 0 written, 1 not lowered or the output cannot be written, 2 bad usage or a\n"
	      "file that is not PTX.\n", out);
}

static void skipped(void *arg, const char *kernel, const char *why)
{
	fprintf(stderr, "gpuprobe: %s: kernel %s left out: %s\n", (const char *)arg, kernel, why);
}

static int write_out(const char *cmd, const char *path, const void *p, size_t n)
{
	FILE *f = !path || !strcmp(path, "-") ? stdout : fopen(path, "wb");
	if (!f)
		return cli_error("%s: cannot create %s", cmd, path);
	int bad = fwrite(p, 1, n, f) != n;
	bad |= f != stdout ? fclose(f) : fflush(f);
	if (bad)
		return cli_error("%s: write failed on %s", cmd, path ? path : "standard output");
	return 0;
}

/* --cache DIR: every PTX module of each file, lowered to LLVM's PTX, in DIR/<key of the original>. */
static int fill_one(const char *dir, const char *what, const char *ptx, size_t len, const struct amdgpu_options *o,
		    unsigned *ok, unsigned *failed)
{
	char key[48], path[4096], err[1024];
	amdgpu_ptx_key(ptx, len, key);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	struct stat st;
	if (stat(path, &st) == 0) {
		(*ok)++;
		return 0;
	}
	ir_module *m = ptx_parse(ptx, strnlen(ptx, len), err, sizeof(err));
	char *out = NULL;
	size_t n = 0;
	int r = m ? A->lower_ptx(m, o, &out, &n, err, sizeof(err)) : -EINVAL;
	if (m)
		ir_module_free(m);
	if (r < 0) {
		/* the key is the name the shim's GPUPROBE_LLVM_CACHE mode looks for, and names when it
		 * loads such a module unchanged (tests/gpu/amdgpu.sh matches the two) */
		fprintf(stderr, "gpuprobe: %s: not lowered (key %s): %s%s\n", what, key,
			err[0] >= '0' && err[0] <= '9' ? "line " : "", err);
		(*failed)++;
		return 0;
	}
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "wb");
	int bad = !f || fwrite(out, 1, n, f) != n;
	bad |= f ? fclose(f) : 0;
	free(out);
	if (bad || rename(tmp, path)) {
		unlink(tmp);
		return cli_error("ptx llvm: cannot write %s", path);
	}
	(*ok)++;
	return 0;
}

static int fill_cache(const char *dir, char **files, int nfiles, const struct amdgpu_options *o)
{
	if (mkdir(dir, 0700) && errno != EEXIST)
		return cli_error("ptx llvm: cannot create %s: %s", dir, strerror(errno));
	unsigned ok = 0, failed = 0, files_without = 0;
	for (int i = 0; i < nfiles; i++) {
		char err[512];
		struct fatbin *fb = NULL;
		if (fatbin__open_file(files[i], &fb, err, sizeof(err)) == 0) {
			unsigned seen = 0;
			for (size_t k = 0; k < fatbin__entry_count(fb); k++) {
				const struct fatbin_entry *e = fatbin__entry(fb, k);
				void *data = NULL;
				size_t len = 0;
				if (e->kind != FATBIN_KIND_PTX || fatbin__entry_data(e, &data, &len, err, sizeof(err)))
					continue;
				char what[4200];
				snprintf(what, sizeof(what), "%s (PTX entry %zu, sm_%u)", files[i], k, e->sm);
				int r = fill_one(dir, what, data, len, o, &ok, &failed);
				free(data);
				seen++;
				if (r)
					return fatbin__close(fb), r;
			}
			fatbin__close(fb);
			files_without += !seen;
			continue;
		}
		size_t len;
		char *text = cli_read_file(files[i], &len);
		if (!text)
			return 2;
		if (strstr(text, ".version") && strstr(text, ".target")) {
			int r = fill_one(dir, files[i], text, len, o, &ok, &failed);
			free(text);
			if (r)
				return r;
		} else {
			free(text);
			files_without++;
		}
	}
	printf("%u module(s) in %s, %u not lowered, %u file(s) without PTX\n", ok, dir, failed, files_without);
	return failed ? 1 : 0;
}

static int run(bool code_object, int argc, char **argv)
{
	const char *cmd = code_object ? "ptx amdgpu" : "ptx llvm";
	const char *path = NULL, *out = NULL, *target = code_object ? "amdgcn" : NULL, *arch = NULL;
	struct amdgpu_options o = {0};
	int want_ptx = 0;
	const char *cache = NULL;
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	int nfiles = 0;
	if (!files)
		return cli_error("out of memory");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			code_object ? amdgpu_usage(stdout) : llvm_usage(stdout);
			return 0;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--target") || !strcmp(a, "--arch") ||
			   !strcmp(a, "--cov")) {
			if (++i == argc)
				return cli_usage_error("%s: %s needs a value", cmd, a);
			if (a[1] == 'o' || !strcmp(a, "--output"))
				out = argv[i];
			else if (!strcmp(a, "--target") && !code_object)
				target = argv[i];
			else if (!strcmp(a, "--arch"))
				arch = argv[i];
			else if (!strcmp(a, "--cov") && code_object) {
				if (strcmp(argv[i], "4") && strcmp(argv[i], "5"))
					return cli_usage_error("%s: --cov takes 4 or 5, not '%s'", cmd, argv[i]);
				o.cov = (unsigned)atoi(argv[i]);
			} else
				return cli_usage_error("%s: unknown option '%s' (see 'gpuprobe %s --help')", cmd, a, cmd);
		} else if (!strcmp(a, "--cache") && !code_object) {
			if (++i == argc)
				return cli_usage_error("%s: --cache needs a directory", cmd);
			cache = argv[i];
		} else if (!strcmp(a, "--ptx") && !code_object) {
			want_ptx = 1;
		} else if (!strcmp(a, "-O0") && !code_object) {
			o.no_opt = 1;
		} else if (a[0] == '-' && a[1]) {
			return cli_usage_error("%s: unknown option '%s' (see 'gpuprobe %s --help')", cmd, a, cmd);
		} else {
			files[nfiles++] = argv[i];
			path = path ? path : a;
		}
	}
	if (load_module(cmd)) {
		free(files);
		return 1;
	}
	if (cache) {
		if (!target || A->target_parse(target) != AMDGPU_TARGET_NVPTX)
			return free(files), cli_usage_error("%s: --cache needs --target nvptx", cmd);
		if (!nfiles)
			return free(files), cli_usage_error("%s: --cache needs files", cmd);
		if (arch && !A->arch_ok(AMDGPU_TARGET_NVPTX, arch))
			return free(files), cli_usage_error("%s: unknown architecture '%s' for nvptx (sm_60 .. sm_90)", cmd, arch);
		o.target = AMDGPU_TARGET_NVPTX;
		o.arch = arch;
		o.whole_module = 1;   /* the shim loads it in place of the original: no kernel may be missing */
		int r = fill_cache(cache, files, nfiles, &o);
		free(files);
		return r;
	}
	free(files);
	if (nfiles > 1)
		return cli_usage_error("%s: one input file only", cmd);
	if (!path || !target || (code_object && (!out || !arch))) {
		code_object ? amdgpu_usage(stderr) : llvm_usage(stderr);
		return 2;
	}
	int t = A->target_parse(target);
	if (t < 0)
		return cli_usage_error("%s: unknown target '%s' (amdgcn or nvptx)", cmd, target);
	o.target = (enum amdgpu_target)t;
	if (arch && !A->arch_ok(o.target, arch))
		return cli_usage_error("%s: unknown architecture '%s' for %s (%s)", cmd, arch, target,
				       t == AMDGPU_TARGET_AMDGCN ? "gfx90a, gfx942 or gfx1100" : "sm_60 .. sm_90");
	o.arch = arch;
	if (want_ptx && o.target != AMDGPU_TARGET_NVPTX)
		return cli_usage_error("%s: --ptx needs --target nvptx", cmd);
	int krc = cli_expect_kind(cmd, path, CLI_READS(CLI_FILE_PTX), "a PTX file", NULL);
	if (krc)
		return krc;
	size_t len;
	char *text = cli_read_file(path, &len);
	if (!text)
		return 2;
	char err[1024];
	ir_module *m = ptx_parse(text, len, err, sizeof(err));
	free(text);
	if (!m) {
		fprintf(stderr, "gpuprobe: %s:%s\n", path, err);
		return 1;
	}
	void *res = NULL;
	size_t n = 0;
	int r;
	o.skipped = skipped;
	o.skipped_arg = (void *)path;
	if (code_object) {
		r = A->lower_code_object(m, &o, &res, &n, err, sizeof(err));
	} else if (want_ptx) {
		r = A->lower_ptx(m, &o, (char **)&res, &n, err, sizeof(err));
	} else {
		r = A->lower_ll(m, &o, (char **)&res, err, sizeof(err));
		n = res ? strlen(res) : 0;
	}
	ir_module_free(m);
	if (r < 0) {
		fprintf(stderr, "gpuprobe: %s:%s%s\n", path, err[0] >= '0' && err[0] <= '9' ? "" : " ", err);
		return 1;
	}
	int w = write_out(cmd, out, res, n);
	free(res);
	return w;
}

int cmd_ptx_llvm(int argc, char **argv) { return run(false, argc, argv); }
int cmd_ptx_amdgpu(int argc, char **argv) { return run(true, argc, argv); }
