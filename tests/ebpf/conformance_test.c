/* The bpf-conformance corpus on the host interpreter.
 *   conformance_test tests/ DIR       every *.data must give its "-- result" (r0); prints counts,
 *                                     exits 1 when any differs or fails
 *   conformance_test negative DIR     every *.data must be rejected: by the reader, the assembler,
 *                                     the encoding check, the verifier (when built), or by giving a
 *                                     result other than its "-- result"; prints each reason
 * Corpus convention: r1 = pointer to "-- mem" (0 without), r2 = its length, result = r0. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/asm.h"
#include "ebpf/interp.h"
#ifdef GP_HAVE_VERIFIER
#include "ebpf/verifier.h"
#endif

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted *.data names of dir. */
static char **list_cases(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "conformance_test: %s: %s\n", dir, strerror(errno));
		return NULL;
	}
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".data") != 0)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 256;
			v = realloc(v, cap * sizeof *v);
		}
		v[cnt++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(v, cnt, sizeof *v, cmp_str);
	*n = cnt;
	return v;
}

enum stage { ST_OK, ST_READ, ST_ASM, ST_CHECK, ST_VERIFY, ST_RUN, ST_RESULT };
static const char *stage_name[] = { "ok", "read", "assemble", "encoding check", "verifier", "run", "result" };

/* Load and run one case. Returns the stage that refused it (ST_OK when r0 == result). */
static enum stage run_case(const char *path, int verify, char *why, size_t whylen, uint64_t *got, int *raw_mismatch)
{
	struct bpf_conformance_case c;
	char err[256];
	struct bpf_insn *insns = NULL;
	size_t n = 0;
	enum stage st = ST_OK;
	*raw_mismatch = 0;
	if (bpf_conformance_read(path, &c, err, sizeof err)) {
		snprintf(why, whylen, "%s", err);
		return ST_READ;
	}
	if (c.asm_text) {
		if (bpf_asm(c.asm_text, &insns, &n, err, sizeof err)) {
			snprintf(why, whylen, "%s", err);
			st = ST_ASM;
			goto out;
		}
		if (c.raw && (c.raw_len != n * sizeof *insns || memcmp(c.raw, insns, c.raw_len) != 0))
			*raw_mismatch = 1;
	} else if (c.raw) {
		n = c.raw_len / sizeof *insns;
		insns = malloc(c.raw_len ? c.raw_len : 1);
		memcpy(insns, c.raw, c.raw_len);
	} else {
		snprintf(why, whylen, "no program (neither -- asm nor -- raw)");
		st = ST_READ;
		goto out;
	}
	if (gp_interp_check(insns, n, err, sizeof err)) {
		snprintf(why, whylen, "%s", err);
		st = ST_CHECK;
		goto out;
	}
#ifdef GP_HAVE_VERIFIER
	/* Only negatives go through the verifier: the corpus's positive programs write through r1,
	 * which the verifier (rightly, for probes) treats as a read-only context. */
	if (verify) {
		char log[4096] = "";
		struct gp_verify_opts vo;
		memset(&vo, 0, sizeof vo);
		vo.attach = GP_ATTACH_NONE;
		vo.ctx_size = (uint32_t)c.mem_len;
		vo.r2_is_ctx_size = 1;
		vo.log = log;
		vo.log_size = sizeof log;
		int vr = gp_verify(insns, n, &vo);
		if (vr) {
			/* the log's last line says why */
			size_t l = strlen(log);
			while (l && log[l - 1] == '\n')
				log[--l] = '\0';
			char *last = strrchr(log, '\n');
			snprintf(why, whylen, "%s (%s)", last ? last + 1 : log, strerror(-vr));
			st = ST_VERIFY;
			goto out;
		}
	}
#endif
	uint8_t *mem = c.mem_len ? c.mem : NULL;
	uint64_t r0 = 0;
	struct gp_interp_env env;
	memset(&env, 0, sizeof env);
	env.max_steps = 10000000;
	if (gp_interp_run(insns, n, (uint64_t)(uintptr_t)mem, c.mem_len, &env, &r0, err, sizeof err)) {
		snprintf(why, whylen, "%s", err);
		st = ST_RUN;
		goto out;
	}
	*got = r0;
	/* Without a "-- result" the program ran: accepted (only a verifier can still refuse it). */
	if (c.has_result && r0 != c.result) {
		snprintf(why, whylen, "r0 = 0x%llx, expected 0x%llx", (unsigned long long)r0,
			 (unsigned long long)c.result);
		st = ST_RESULT;
	}
out:
	free(insns);
	bpf_conformance_free(&c);
	return st;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "tests") && strcmp(argv[1], "negative"))) {
		fprintf(stderr, "usage: conformance_test tests|negative DIR\n");
		return 2;
	}
	int negative = strcmp(argv[1], "negative") == 0;
	size_t n;
	char **names = list_cases(argv[2], &n);
	if (!names)
		return 2;
	if (n == 0) {
		fprintf(stderr, "conformance_test: no *.data files in %s\n", argv[2]);
		return 2;
	}
	size_t pass = 0, fail = 0, by_stage[7] = { 0 }, raw_bad = 0;
#ifndef GP_HAVE_VERIFIER
	size_t needs_verifier = 0;
#endif
	for (size_t i = 0; i < n; i++) {
		char path[4096], why[512] = "";
		snprintf(path, sizeof path, "%s/%s", argv[2], names[i]);
		uint64_t got = 0;
		int raw_mismatch;
		enum stage st = run_case(path, negative, why, sizeof why, &got, &raw_mismatch);
		if (raw_mismatch) {
			printf("FAIL %s: assembled instructions differ from its -- raw section\n", names[i]);
			raw_bad++;
		}
		if (!negative) {
			if (st == ST_OK)
				pass++;
			else {
				fail++;
				printf("FAIL %s: %s: %s\n", names[i], stage_name[st], why);
			}
		} else {
			by_stage[st]++;
			if (st == ST_OK) {
#ifdef GP_HAVE_VERIFIER
				fail++;
				printf("FAIL %s: accepted (ran, r0 = 0x%llx)\n", names[i],
				       (unsigned long long)got);
#else
				needs_verifier++;
				printf("accepted %s: only a verifier rejects it (not built yet)\n", names[i]);
#endif
			} else {
				pass++;
				printf("rejected %s: %s: %s\n", names[i], stage_name[st], why);
			}
		}
		free(names[i]);
	}
	free(names);
	if (!negative) {
		printf("conformance: %zu/%zu programs give their expected result on the host interpreter"
		       " (%zu failed)\n", pass, n, fail);
	} else {
		printf("negative: %zu/%zu programs rejected (read %zu, assemble %zu, encoding check %zu,"
		       " verifier %zu, run error %zu, wrong result %zu); %zu accepted\n",
		       pass, n, by_stage[ST_READ], by_stage[ST_ASM], by_stage[ST_CHECK], by_stage[ST_VERIFY],
		       by_stage[ST_RUN], by_stage[ST_RESULT], fail);
#ifndef GP_HAVE_VERIFIER
		printf("negative: built without the verifier (no gp_verify in ebpf/verifier*.c): %zu"
		       " program(s) only verification rejects\n", needs_verifier);
#endif
	}
	return fail || raw_bad ? 1 : 0;
}
