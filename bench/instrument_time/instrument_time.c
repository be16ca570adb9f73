/* bench/instrument_time: where the time of a cached first launch goes on the host, without a GPU.
 *
 * usage: instrument_time [-n ROUNDS] [--sms N] [-o OUT.ptx] -p PROG.bpf.o [-p ...] FILE.ptx
 * Times, each in milliseconds of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID: a loaded
 * machine does not distort it), as the minimum and median over ROUNDS (default 21):
 *   open        gp_nv_probes__open over host-memory maps (libbpf open, verify, map creation)
 *   parse       ptx_parse of the module alone
 *   print       ptx_print of that parsed module (the zero-probe round trip's printer cost)
 *   instrument  gp_nv_probes__instrument on a fresh probe set: parse, lower, splice, inline,
 *               print (the shim's per-module cost on a cache miss of its PTX cache)
 * and the first round of each on its own (cold: page faults of fresh memory, as in the shim,
 * counted beside it).
 * -o writes the instrumented PTX, to compare outputs byte for byte across changes. */
#include "nvidia/probes.h"
#include "ptx-frontend/ir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_ROUNDS 1001

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t k = fread(buf + n, 1, cap - n, f);
		if (!k)
			break;
		n += k;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static void report(const char *what, double *v, int n, long faults)
{
	double first = v[0];
	double med = median(v, n);   /* sorts v */
	printf("%-11s first %8.3f ms (%5ld page faults)   min %8.3f ms   median %8.3f ms\n", what,
	       first, faults, v[0], med);
}

static int open_set(const char **probes, size_t nprobes, unsigned sms,
		    struct gp_map_allocator **alloc, struct gp_nv_probes **ps)
{
	char err[512] = "";
	if (!(*alloc = gp_map_allocator_host(sms))) {
		fputs("instrument_time: out of memory\n", stderr);
		return -ENOMEM;
	}
	struct gp_nv_probes_opts o = {.alloc = *alloc};
	int rc = gp_nv_probes__open(probes, NULL, nprobes, &o, ps, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "instrument_time: %s\n", err);
		free(*alloc);
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *probes[64], *path = NULL, *out_path = NULL;
	size_t nprobes = 0;
	int rounds = 21;
	unsigned sms = 132;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc && nprobes < 64)
			probes[nprobes++] = argv[++i];
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--sms") && i + 1 < argc)
			sms = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out_path = argv[++i];
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "instrument_time: bad argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!path || !nprobes || rounds < 1 || rounds > MAX_ROUNDS || !sms) {
		fputs("usage: instrument_time [-n ROUNDS] [--sms N] [-o OUT.ptx] -p PROG.bpf.o [-p ...] FILE.ptx\n",
		      stderr);
		return 2;
	}
	size_t len;
	char *ptx = read_all(path, &len);
	if (!ptx) {
		fprintf(stderr, "instrument_time: %s: cannot read\n", path);
		return 2;
	}
	static double t_open[MAX_ROUNDS], t_parse[MAX_ROUNDS], t_print[MAX_ROUNDS], t_inst[MAX_ROUNDS];
	size_t out_len = 0, print_len = 0;
	long f_open = 0, f_parse = 0, f_print = 0, f_inst = 0;
	for (int r = 0; r < rounds; r++) {
		struct gp_map_allocator *alloc;
		struct gp_nv_probes *ps;
		long f0 = minflt();
		double t0 = now_ms();
		if (open_set(probes, nprobes, sms, &alloc, &ps))
			return 1;
		double t1 = now_ms();
		long f1 = minflt();
		char err[512], perr[256];
		ir_module *m = ptx_parse(ptx, len, perr, sizeof(perr));
		double t2 = now_ms();
		long f2 = minflt();
		if (!m) {
			fprintf(stderr, "instrument_time: %s: %s\n", path, perr);
			return 1;
		}
		char *printed = ptx_print(m, &print_len);
		double t3 = now_ms();
		long f3 = minflt();
		free(printed);
		ir_module_free(m);
		char *out = NULL;
		struct gp_inst_stats st;
		long f4 = minflt();
		double t4 = now_ms();
		int rc = gp_nv_probes__instrument(ps, ptx, len, &out, &out_len, &st, err, sizeof(err));
		double t5 = now_ms();
		long f5 = minflt();
		if (r == 0) {
			f_open = f1 - f0;
			f_parse = f2 - f1;
			f_print = f3 - f2;
			f_inst = f5 - f4;
		}
		if (rc || !out) {
			fprintf(stderr, "instrument_time: %s: %s\n", path, rc ? err : "no probe site");
			return 1;
		}
		if (r == 0 && out_path) {
			FILE *f = fopen(out_path, "w");
			if (!f || fwrite(out, 1, out_len, f) != out_len || fclose(f)) {
				fprintf(stderr, "instrument_time: %s: cannot write\n", out_path);
				return 2;
			}
		}
		free(out);
		gp_nv_probes__close(ps);
		free(alloc);
		t_open[r] = t1 - t0;
		t_parse[r] = t2 - t1;
		t_print[r] = t3 - t2;
		t_inst[r] = t5 - t4;
	}
	printf("%s: %zu bytes in, %zu printed, %zu instrumented; %d rounds\n", path, len, print_len,
	       out_len, rounds);
	report("open", t_open, rounds, f_open);
	report("parse", t_parse, rounds, f_parse);
	report("print", t_print, rounds, f_print);
	report("instrument", t_inst, rounds, f_inst);
	free(ptx);
	return 0;
}
