/* gpuprobe fatbin FILE -o DIR [--kind K] [--target sm_XX]: write the fatbin entries, decompressed,
 * one file per entry. */
#include "cli/cli.h"
#include "cli/file_kind.h"
#include "ptx-frontend/fatbin.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *out)
{
	fputs("usage: gpuprobe fatbin [--kind ptx|cubin|ltoir] [--target sm_XX] -o DIR FILE\n\n"
	      "Write every fatbin entry of FILE (an executable, shared library, object file, static\n"
	      "library or fatbin) into DIR, decompressed, as <index>-<target>.<kind>: 0-sm_90.ptx,\n"
	      "1-sm_90.cubin.\n"
	      "Prints one line per entry: file, kind, target, size, compression, offset in FILE.\n\n"
	      "options:\n"
	      "  -o, --output DIR   where to write the entries (created if missing)\n"
	      "  --kind ptx|cubin|ltoir   only entries of that kind\n"
	      "  --target sm_XX     only entries for that target (sm_90 also takes sm_90a)\n"
	      "  -h, --help         this text\n\n"
	      "Exit status: 0 written, 1 a damaged file or a write that fails, 2 bad usage or a file\n"
	      "that holds no fatbin (a PTX file or cubin is one module already).\n", out);
}

static const char *extension(enum fatbin_kind kind)
{
	switch (kind) {
	case FATBIN_KIND_PTX: return "ptx";
	case FATBIN_KIND_ELF: return "cubin";
	case FATBIN_KIND_LTOIR: return "ltoir";
	}
	return "bin";
}

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return cli_error("cannot create %s: %s", path, strerror(errno));
	size_t n = fwrite(data, 1, len, f);
	int bad = n != len || ferror(f);
	if (fclose(f) || bad)
		return cli_error("cannot write %s: %s", path, strerror(errno));
	return 0;
}

int cmd_fatbin(int argc, char **argv)
{
	enum { OPT_KIND = 256, OPT_TARGET };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "kind", required_argument, NULL, OPT_KIND },
		{ "target", required_argument, NULL, OPT_TARGET },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dir = NULL, *want_kind = NULL, *want_target = NULL;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 'h': usage(stdout); return 0;
		case OPT_KIND:
			if (strcmp(optarg, "ptx") && strcmp(optarg, "cubin") && strcmp(optarg, "ltoir"))
				return cli_usage_error("fatbin: --kind wants ptx, cubin or ltoir, not '%s'", optarg);
			want_kind = optarg;
			break;
		case OPT_TARGET:
			if (strncmp(optarg, "sm_", 3) && strncmp(optarg, "compute_", 8))
				return cli_usage_error("fatbin: --target wants sm_XX, not '%s'", optarg);
			want_target = optarg;
			break;
		case ':': return cli_usage_error("fatbin: option '%s' needs an argument", argv[optind - 1]);
		default: return cli_usage_error("fatbin: unknown option '%s' (see 'gpuprobe fatbin --help')", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("fatbin: no FILE given (see 'gpuprobe fatbin --help')");
	if (optind + 1 < argc)
		return cli_usage_error("fatbin: one FILE only ('%s' is extra)", argv[optind + 1]);
	if (!dir)
		return cli_usage_error("fatbin: no output directory given (-o DIR)");
	const char *path = argv[optind];
	int krc = cli_expect_kind("fatbin", path, CLI_READS_BINARIES,
				  "an executable, library, object file, static library or fatbin", NULL);
	if (krc)
		return krc;

	char err[512];
	struct fatbin *fb;
	if (fatbin__open_file(path, &fb, err, sizeof(err)))
		return cli_error("%s", err);
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fatbin__close(fb);
		return cli_error("cannot create %s: %s", dir, strerror(errno));
	}
	int status = 0;
	size_t skipped = 0;
	for (size_t i = 0; i < fatbin__entry_count(fb); i++) {
		const struct fatbin_entry *e = fatbin__entry(fb, i);
		char target[32], name[64], *out_path;
		fatbin_entry_target(e, target, sizeof(target));
		if ((want_kind && strcmp(want_kind, extension(e->kind))) || !cli_target_kept(want_target, target)) {
			skipped++;
			continue;
		}
		snprintf(name, sizeof(name), "%zu-%s.%s", i, target, extension(e->kind));
		if (asprintf(&out_path, "%s/%s", dir, name) < 0) {
			status = cli_error("out of memory");
			break;
		}
		void *data;
		size_t len;
		int rc = fatbin__entry_data(e, &data, &len, err, sizeof(err));
		if (rc == -ENOTSUP) { /* not corrupt, just not decodable: say so and go on */
			fprintf(stderr, "gpuprobe: %s: entry %zu skipped: %s\n", path, i, err);
			free(out_path);
			continue;
		}
		if (rc) {
			free(out_path);
			status = cli_error("%s: entry %zu: %s", path, i, err);
			break;
		}
		rc = write_file(out_path, data, len);
		free(data);
		if (rc) {
			free(out_path);
			status = rc;
			break;
		}
		char comp[64] = "uncompressed";
		if (e->compression != FATBIN_COMPRESS_NONE)
			snprintf(comp, sizeof(comp), "%s from %zu", fatbin_compression_name(e->compression),
				 e->payload_size);
		printf("%-24s %-5s %-7s %9zu bytes  %-18s offset 0x%zx\n", out_path, fatbin_kind_name(e->kind),
		       target, len, comp, e->offset);
		free(out_path);
	}
	if (skipped && !status)
		fprintf(stderr, "gpuprobe: fatbin: %zu entr%s left out by --kind/--target\n", skipped,
			skipped == 1 ? "y" : "ies");
	fatbin__close(fb);
	return status;
}
