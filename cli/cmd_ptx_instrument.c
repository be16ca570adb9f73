/* gpuprobe ptx instrument -p PROG.bpf.o [-p ...] [-o OUT.ptx] [--sms N] FILE.ptx: the probe pipeline of the
 * shim (nvidia/probes.h) on one PTX file, printing the instrumented module. The maps are created
 * in host memory here, so the map addresses in the output are placeholders.
 * Exit status: 0 printed, 1 a probe is rejected or the module cannot be instrumented, 2 bad usage
 * or file. */
#include "cli/cli.h"
#include "cli/cmd_ptx.h"
#include "cli/file_kind.h"

#include "nvidia/probes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs("usage: gpuprobe ptx instrument -p PROG.bpf.o [-p ...] [-o OUT.ptx] [--sms N] FILE.ptx\n\n"
	      "Splice the device probes of the BPF objects into the kernels of FILE.ptx at the\n"
	      "attach points their sections name, and print the result. Map addresses are\n"
	      "placeholders (the maps are made in host memory).\n\n"
	      "  -p, --probe FILE     BPF object (repeatable)\n"
	      "  -o, --output FILE    write the PTX there instead of stdout\n"
	      "      --sms N          make the maps for a device of N SMs (default 1): per-SM\n"
	      "                       and sharded maps then show their %smid-indexed form\n"
	      "  -h, --help           this text\n\n"
	      "Exit status: 0 printed, 1 a probe is rejected or does not lower, 2 bad usage or file.\n",
	      out);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

/* What the probe set-up says without failing (the verifier's warnings), as the shim says it. */
static void warn_line(void *user, const char *line)
{
	(void)user;
	fprintf(stderr, "gpuprobe: %s\n", line);
}

int cmd_ptx_instrument(int argc, char **argv)
{
	const char *probes[64], *path = NULL, *out_path = NULL;
	size_t nprobes = 0;
	unsigned nsms = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if ((!strcmp(a, "-p") || !strcmp(a, "--probe")) && i + 1 < argc) {
			if (nprobes == 64) {
				cli_error("ptx instrument: at most 64 probe objects");
				return 2;
			}
			probes[nprobes++] = argv[++i];
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
			out_path = argv[++i];
		} else if (!strcmp(a, "--sms") && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);
			if (*end || end == argv[i] || !v || v > 4096) {
				cli_error("ptx instrument: --sms '%s': a number of SMs in 1..4096", argv[i]);
				return 2;
			}
			nsms = (unsigned)v;
		} else if (a[0] == '-' && a[1]) {
			cli_error("ptx instrument: unknown option or missing value '%s' (see 'gpuprobe ptx instrument --help')", a);
			return 2;
		} else if (path) {
			cli_error("ptx instrument: one PTX file at a time ('%s' and '%s')", path, a);
			return 2;
		} else {
			path = a;
		}
	}
	if (!path || !nprobes) {
		usage(stderr);
		return 2;
	}
	int krc = cli_expect_kind("ptx instrument", path, CLI_READS(CLI_FILE_PTX), "a PTX file", NULL);
	if (krc)
		return krc;
	for (size_t i = 0; i < nprobes; i++)
		if ((krc = cli_expect_kind("ptx instrument", probes[i], CLI_READS(CLI_FILE_BPF),
					   "a BPF object (-p takes a probe; the PTX file is the last argument)", NULL)))
			return krc;
	size_t len;
	char *ptx = slurp(path, &len);
	if (!ptx) {
		cli_error("%s: cannot read: %m", path);
		return 2;
	}
	char err[1024] = "";
	struct gp_nv_probes *ps = NULL;
	struct gp_map_allocator *alloc = gp_map_allocator_host(nsms);
	if (!alloc) {
		free(ptx);
		cli_error("out of memory");
		return 2;
	}
	struct gp_nv_probes_opts o = {.alloc = alloc, .warn = warn_line};
	int rc = gp_nv_probes__open(probes, NULL, nprobes, &o, &ps, err, sizeof(err));
	if (rc) {
		free(ptx);
		free(alloc);
		cli_error("%s", err);
		return rc == -EACCES ? 1 : 2;
	}
	char *out = NULL;
	size_t out_len = 0;
	struct gp_inst_stats st;
	rc = gp_nv_probes__instrument(ps, ptx, len, &out, &out_len, &st, err, sizeof(err));
	free(ptx);
	if (rc) {
		gp_nv_probes__close(ps);
		free(alloc);
		cli_error("%s: %s", path, err);
		return 1;
	}
	if (!out) {
		gp_nv_probes__close(ps);
		free(alloc);
		cli_error("%s: no probe has a site in this module (check the section globs)", path);
		return 1;
	}
	FILE *f = out_path ? fopen(out_path, "w") : stdout;
	if (!f) {
		cli_error("%s: cannot write: %m", out_path);
		rc = 1;
	} else {
		fwrite(out, 1, out_len, f);
		if (out_path && fclose(f)) {
			cli_error("%s: write failed: %m", out_path);
			rc = 1;
		}
	}
	char merged[96] = "", deferred[96] = "";
	if (st.merged)
		snprintf(merged, sizeof(merged), " (%u more counted by another site's weighted call)",
			 st.merged);
	if (st.deferred)   /* gp_inst_probe.deferred */
		snprintf(deferred, sizeof(deferred), "; %u count into per-thread accumulators",
			 st.deferred);
	fprintf(stderr, "gpuprobe: %s: %u probe sites in %u functions%s%s\n", path, st.sites,
		st.functions, merged, deferred);
	free(out);
	gp_nv_probes__close(ps);
	free(alloc);
	return rc;
}
