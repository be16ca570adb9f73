/* gpuprobe ptx llvm FILE.ptx --target amdgcn|nvptx [-o OUT.ll]: the module lowered to LLVM IR
 * (amdgpu/), and gpuprobe ptx amdgpu FILE.ptx --arch gfx90a|gfx942|gfx1100 -o OUT.co: an AMDGCN
 * code object. */
#include "cli/cmd_ptx.h"

#include "amdgpu/amdgpu.h"
#include "cli/cli.h"
#include "cli/file_kind.h"
#include "ptx-frontend/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void llvm_usage(FILE *out)
{
	fputs("usage: gpuprobe ptx llvm --target amdgcn|nvptx [--arch ARCH] [--ptx] [-O0] [-o OUT] FILE.ptx\n\n"
	      "Lower a PTX module to LLVM IR (LLVM 19) for the AMD GPU target (amdgcn-amd-amdhsa) or\n"
	      "NVIDIA's (nvptx64-nvidia-cuda), optimised by LLVM's -O2 pipeline. What cannot be lowered\n"
	      "is named with its line (one line, exit status 1).\n\n"
	      "  --target T    amdgcn or nvptx (required)\n"
	      "  --arch ARCH   amdgcn: gfx90a (default), gfx942, gfx1100; nvptx: sm_60 .. sm_90 (default sm_80)\n"
	      "  --ptx         nvptx only: write the PTX LLVM's NVPTX backend makes instead of LLVM IR\n"
	      "  -O0           the IR as lowered (registers promoted), without LLVM's optimisations\n"
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
	      "wavefront. What cannot be lowered is named with its line (one line, exit status 1).\n\n"
	      "  --arch ARCH   gfx90a (MI200), gfx942 (MI300) or gfx1100 (RDNA3); required\n"
	      "  --cov N       code-object version: 4 (Debian's HIP 5.2) or 5 (ROCm 6; default)\n"
	      "  -o, --output OUT  the code object (required)\n"
	      "  -h, --help    this text\n\n"
	      "Exit status: 0 written, 1 not lowered or the output cannot be written, 2 bad usage or a\n"
	      "file that is not PTX.\n", out);
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

static int run(bool code_object, int argc, char **argv)
{
	const char *cmd = code_object ? "ptx amdgpu" : "ptx llvm";
	const char *path = NULL, *out = NULL, *target = code_object ? "amdgcn" : NULL, *arch = NULL;
	struct amdgpu_options o = {0};
	int want_ptx = 0;
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
		} else if (!strcmp(a, "--ptx") && !code_object) {
			want_ptx = 1;
		} else if (!strcmp(a, "-O0") && !code_object) {
			o.no_opt = 1;
		} else if (a[0] == '-' && a[1]) {
			return cli_usage_error("%s: unknown option '%s' (see 'gpuprobe %s --help')", cmd, a, cmd);
		} else if (path) {
			return cli_usage_error("%s: one input file only", cmd);
		} else {
			path = a;
		}
	}
	if (!path || !target || (code_object && (!out || !arch))) {
		code_object ? amdgpu_usage(stderr) : llvm_usage(stderr);
		return 2;
	}
	int t = amdgpu_target_parse(target);
	if (t < 0)
		return cli_usage_error("%s: unknown target '%s' (amdgcn or nvptx)", cmd, target);
	o.target = (enum amdgpu_target)t;
	if (arch && !amdgpu_arch_ok(o.target, arch))
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
	if (code_object) {
		r = amdgpu_lower_code_object(m, &o, &res, &n, err, sizeof(err));
	} else if (want_ptx) {
		r = amdgpu_lower_ptx(m, &o, (char **)&res, &n, err, sizeof(err));
	} else {
		r = amdgpu_lower_ll(m, &o, (char **)&res, err, sizeof(err));
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
