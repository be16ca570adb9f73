/* bench/ptx_parse: PTX parse and print throughput and peak memory, one module at a time.
 *
 * usage: ptx_parse [-t SECONDS] FILE.ptx...
 * Each file is measured in a fresh child process (so peak RSS belongs to that module alone):
 * parse and print repeat until SECONDS of CPU time have passed (default 2, at least 3 rounds);
 * throughput is input bytes over CPU time of this one thread (CLOCK_THREAD_CPUTIME_ID), so other
 * load on the machine does not distort it. Peak memory is getrusage's maxrss, minus the RSS
 * before the first parse (the file's own buffer), given both ways. Prints one markdown table. */
#include "ptx-frontend/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long maxrss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

static int measure(const char *path, double min_s)
{
	size_t len;
	char *text = read_all(path, &len);
	if (!text) {
		fprintf(stderr, "ptx_parse: cannot read %s\n", path);
		return 1;
	}
	/* touch the buffer so it counts in the baseline */
	volatile char sink = 0;
	for (size_t i = 0; i < len; i += 4096)
		sink ^= text[i];
	long base = maxrss_kib();
	double t_parse = 0, t_print = 0;
	int rounds = 0;
	size_t out_len = 0;
	char err[256];
	while (rounds < 3 || t_parse + t_print < min_s) {
		double t0 = cpu_now();
		ir_module *m = ptx_parse(text, len, err, sizeof(err));
		double t1 = cpu_now();
		if (!m) {
			fprintf(stderr, "ptx_parse: %s:%s\n", path, err);
			return 1;
		}
		char *out = ptx_print(m, &out_len);
		double t2 = cpu_now();
		if (out_len != len || memcmp(out, text, len)) {
			fprintf(stderr, "ptx_parse: %s: printed text differs from the input\n", path);
			return 1;
		}
		free(out);
		ir_module_free(m);
		t_parse += t1 - t0;
		t_print += t2 - t1;
		rounds++;
	}
	long peak = maxrss_kib();
	double mb = len / 1e6;
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	printf("| %s | %.2f | %d | %.0f | %.0f | %.0f | %.1f | %.1f |\n", name, mb, rounds,
	       mb * rounds / t_parse, mb * rounds / t_print, mb * rounds / (t_parse + t_print),
	       peak / 1024.0, (peak - base) / 1024.0);
	fflush(stdout);
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	double min_s = 2;
	int i = 1;
	if (i + 1 < argc && !strcmp(argv[i], "-t")) {
		min_s = atof(argv[i + 1]);
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: ptx_parse [-t SECONDS] FILE.ptx...\n");
		return 2;
	}
	printf("| module | MB | rounds | parse MB/s | print MB/s | parse+print MB/s | peak RSS MiB | "
	       "peak minus input MiB |\n|---|---|---|---|---|---|---|---|\n");
	fflush(stdout);
	int bad = 0;
	for (; i < argc; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(measure(argv[i], min_s));
		int st = 0;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	return bad;
}
