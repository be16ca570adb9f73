/* The bpf_conformance corpus through the verifier, in its generic mode (GP_ATTACH_NONE: r1 points
 * to the test's memory, read-only, ctx_size = its length; r2 = that length).
 *   verifier_conformance tests DIR [MIN_PASS]     positives: how many verify; fails below MIN_PASS
 *   verifier_conformance negative DIR [MIN_REJ]   negatives: how many are rejected (by the
 *                                                  assembler/reader or by the verifier)
 *   verifier_conformance seeds DIR OUTDIR         writes each positive as a seed for
 *                                                  fuzz/verifier_fuzz.c (flags, ctx/8, insns)
 * Prints one line per program that does not behave, then the count. */
#include "ebpf/asm.h"
#include "ebpf/verifier.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *last_line(char *log)
{
	size_t len = strlen(log);
	while (len && log[len - 1] == '\n')
		log[--len] = 0;
	char *p = strrchr(log, '\n');
	return p ? p + 1 : log;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s tests|negative DIR [MIN]\n", argv[0]);
		return 2;
	}
	int negative = !strcmp(argv[1], "negative");
	const char *seed_dir = !strcmp(argv[1], "seeds") && argc > 3 ? argv[3] : NULL;
	long min = argc > 3 && !seed_dir ? strtol(argv[3], NULL, 10) : 0;
	DIR *d = opendir(argv[2]);
	if (!d) {
		fprintf(stderr, "cannot open %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	char **names = NULL;
	size_t nn = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".data")) {
			names = realloc(names, (nn + 1) * sizeof(*names));
			names[nn++] = strdup(e->d_name);
		}
	}
	closedir(d);
	qsort(names, nn, sizeof(*names), cmp);
	int good = 0, total = 0;
	static char log[65536];
	for (size_t i = 0; i < nn; i++) {
		char path[4096], err[256] = "";
		snprintf(path, sizeof(path), "%s/%s", argv[2], names[i]);
		struct bpf_conformance_case c;
		memset(&c, 0, sizeof(c));
		total++;
		struct bpf_insn *insns = NULL;
		size_t n = 0;
		int rc = bpf_conformance_read(path, &c, err, sizeof(err));
		if (!rc && c.raw) {
			n = c.raw_len / 8;
			insns = malloc(c.raw_len ? c.raw_len : 1);
			memcpy(insns, c.raw, c.raw_len);
		} else if (!rc) {
			rc = bpf_asm(c.asm_text ? c.asm_text : "", &insns, &n, err, sizeof(err));
		}
		if (rc) {
			if (negative)
				good++;
			else
				printf("%s: cannot assemble: %s\n", names[i], err);
			bpf_conformance_free(&c);
			free(insns);
			continue;
		}
		if (seed_dir) {
			char out[4096];
			snprintf(out, sizeof(out), "%s/%s.seed", seed_dir, names[i]);
			FILE *f = fopen(out, "wb");
			uint8_t hdr[2] = {0, (uint8_t)((c.mem_len + 7) / 8)};
			if (f) {
				fwrite(hdr, 1, 2, f);
				fwrite(insns, sizeof(*insns), n, f);
				fclose(f);
			}
		}
		struct gp_verify_opts o = {0};
		o.attach = GP_ATTACH_NONE;
		o.ctx_size = (uint32_t)c.mem_len;
		o.r2_is_ctx_size = 1;
		o.log = log;
		o.log_size = sizeof(log);
		int vr = gp_verify(insns, n, &o);
		if (negative) {
			if (vr) {
				good++;
				printf("%s: rejected: %s\n", names[i], last_line(log));
			} else {
				printf("%s: NOT rejected by the verifier\n", names[i]);
			}
		} else if (!vr) {
			good++;
		} else {
			printf("%s: rejected (%d): %s\n", names[i], vr, last_line(log));
		}
		bpf_conformance_free(&c);
		free(insns);
	}
	printf("%s: %d of %d %s\n", argv[2], good, total, negative ? "rejected" : "verify");
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	return good >= min ? 0 : 1;
}
