/* The configuration parser against careless and hostile files (issue 12): a key repeated in any
 * mapping is one error at its second appearance (it overflowed a heap buffer), and size, nesting
 * and the number of values are limited, each with one error, fast, in bounded memory. Text from
 * the file is escaped in messages. */
#include "maps/config.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long max_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* text gives exactly msg, within a second. */
static void expect_len(const char *text, size_t len, const char *msg)
{
	struct gp_config cfg;
	char err[512] = "";
	double t = now_s();
	int rc = gp_config__parse(text, len, "t.yaml", "/cfg", &cfg, err, sizeof(err));
	t = now_s() - t;
	CHECK_EQ(rc, -EINVAL);
	CHECK_STR(err, msg);
	if (t > 1.0) {
		fprintf(stderr, "took %.2f s: %s\n", t, msg);
		check_failures++;
	}
	if (!rc)
		gp_config__free(&cfg);
}

static void expect(const char *text, const char *msg)
{
	expect_len(text, strlen(text), msg);
}

/* A growing string for the generated files. */
struct buf {
	char *s;
	size_t len, cap;
};

static void add(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

static void repeated_keys(void)
{
	/* every kind of mapping: the root, a probe, kernels, maps, a map, output, limits */
	expect("probes: [a.o]\nprobes: [b.o]\n",
	       "t.yaml:2:1: key 'probes' repeated (first at line 1, column 1): YAML keys are unique");
	expect("probes:\n  - path: a.o\n    kernels: [x]\n    kernels: [y, z, w, v]\n",
	       "t.yaml:4:5: key 'kernels' repeated (first at line 3, column 5): YAML keys are unique");
	expect("probes:\n  - path: a.o\n    path: b.o\n",
	       "t.yaml:3:5: key 'path' repeated (first at line 2, column 5): YAML keys are unique");
	expect("kernels:\n  include: [a]\n  exclude: [b]\n  include: [c, d, e, f, g]\n",
	       "t.yaml:4:3: key 'include' repeated (first at line 2, column 3): YAML keys are unique");
	expect("kernels:\n  exclude: a\n  exclude: [b, c]\n",
	       "t.yaml:3:3: key 'exclude' repeated (first at line 2, column 3): YAML keys are unique");
	expect("kernels: {include: [a]}\nkernels: {include: [b, c]}\n",
	       "t.yaml:2:1: key 'kernels' repeated (first at line 1, column 1): YAML keys are unique");
	expect("maps:\n  counts: {placement: host}\n  counts: {placement: device}\n",
	       "t.yaml:3:3: key 'counts' repeated (first at line 2, column 3): YAML keys are unique");
	expect("maps: {a: {}}\nmaps: {b: {}, c: {}}\n",
	       "t.yaml:2:1: key 'maps' repeated (first at line 1, column 1): YAML keys are unique");
	expect("maps:\n  counts:\n    placement: host\n    placement: device\n",
	       "t.yaml:4:5: key 'placement' repeated (first at line 3, column 5): YAML keys are unique");
	expect("output:\n  json: a.json\n  interval: 1\n  json: b.json\n",
	       "t.yaml:4:3: key 'json' repeated (first at line 2, column 3): YAML keys are unique");
	expect("limits: {perthread_slots: 1, perthread_slots: 2}\n",
	       "t.yaml:1:30: key 'perthread_slots' repeated (first at line 1, column 10): YAML keys are unique");
	/* the earliest repetition in the file, whichever section comes first in the walk */
	expect("output: {top: 1, top: 2}\nprobes:\n  - {path: a.o, path: b.o}\n",
	       "t.yaml:1:18: key 'top' repeated (first at line 1, column 10): YAML keys are unique");
	/* a third appearance names the first */
	expect("output: {top: 1}\nlimits: {}\noutput: {}\noutput: {}\n",
	       "t.yaml:3:1: key 'output' repeated (first at line 1, column 1): YAML keys are unique");
	/* the same key through quoting */
	expect("probes: [a.o]\n\"probes\": [b.o]\n",
	       "t.yaml:2:1: key 'probes' repeated (first at line 1, column 1): YAML keys are unique");
}

/* Empty mappings: the repeated-key check once passed qsort a NULL array (UBSan, found by
 * fuzz_config on "!!mapt: {}"). */
static void empty(void)
{
	static const char *const ok[] = {"{}\n", "!!mapt: {}\n", "maps: {}\nkernels: {}\noutput: {}\n"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct gp_config cfg;
		char err[512] = "";
		CHECK_EQ(gp_config__parse(ok[i], strlen(ok[i]), "t.yaml", NULL, &cfg, err, sizeof(err)), 0);
		gp_config__free(&cfg);
	}
}

static void limits(void)
{
	/* 100,000 nested '[': libyaml alone took 12.8 s */
	size_t n = 100000;
	char *deep = malloc(2 * n + 1);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = 0;
	expect(deep, "t.yaml:1:33: nested more than 32 levels deep (the limit for a probe configuration)");
	/* block nesting counts the same */
	struct buf b = {0};
	for (int i = 0; i < 40; i++) {
		char line[128];
		snprintf(line, sizeof(line), "%*sk%d:\n", 2 * i, "", i);
		add(&b, line);
	}
	expect(b.s, "t.yaml:33:65: nested more than 32 levels deep (the limit for a probe configuration)");
	free(b.s);
	/* 32 levels are fine (as far as the limit goes: the walker then names the section) */
	memset(deep, '[', 32);
	memset(deep + 32, ']', 32);
	expect_len(deep, 64, "t.yaml:1:1: the configuration must be a mapping (probes:, kernels:, maps:, output:, limits:)");
	free(deep);

	/* values */
	b = (struct buf){0};
	add(&b, "kernels:\n  include: [");
	for (int i = 0; i < 20000; i++)
		add(&b, i ? ",a" : "a");
	add(&b, "]\n");
	expect(b.s, "t.yaml:2:20003: more than 10000 values (the limit for a probe configuration)");
	free(b.s);

	/* aliases: a small file that names one long list many times */
	b = (struct buf){0};
	add(&b, "kernels:\n  include: &k [");
	for (int i = 0; i < 100; i++)
		add(&b, i ? ",a" : "a");
	add(&b, "]\nprobes:\n");
	for (int i = 0; i < 120; i++)
		add(&b, "  - {path: p.o, kernels: *k}\n");
	expect(b.s, "t.yaml:2:18: more than 10000 entries once aliases are expanded (the limit for a probe configuration)");
	free(b.s);

	/* probe objects: the shim's limit */
	b = (struct buf){0};
	add(&b, "probes:\n");
	for (int i = 0; i < 129; i++)
		add(&b, "  - p.o\n");
	expect(b.s, "t.yaml:130:5: more than 128 probe objects");
	free(b.s);

	/* size: text over the limit is refused before libyaml sees it */
	size_t big = GP_CONFIG_MAX_BYTES + 1;
	char *text = malloc(big + 1);
	memset(text, '#', big);
	text[big] = 0;
	expect_len(text, big, "t.yaml: 1048577 bytes is larger than the 1048576-byte limit for a probe configuration");
	free(text);

	/* an empty entry is no path (it resolved to the configuration's folder) */
	expect("probes:\n  -\n  - a.o\n", "t.yaml:2:4: a probe needs a path");
	expect("probes:\n  - path: \"\"\n", "t.yaml:2:11: path must be a file name");

	/* one document */
	expect("output: {top: 1}\n---\noutput: {top: 2}\n",
	       "t.yaml:2:1: a second YAML document: a probe configuration is one document");
	/* an alias to nothing (the composer's error, after the scan) */
	expect("output: *nothing\n", "t.yaml:1:9: found undefined alias");
}

static void escaped(void)
{
	/* "\e" in a double-quoted key is ESC: it must not reach the terminal */
	expect("\"\\e[31mred\\n\": 1\n",
	       "t.yaml:1:1: unknown section '\\x1b[31mred\\x0a' (expected probes, kernels, maps, output, limits)");
	expect("output:\n  top: \"\\x07\\xff\"\n",
	       "t.yaml:2:8: output.top must be a whole number from 0 to 1000000, not '\\x07\\xc3\\xbf'");
}

static char tmpdir[] = "/tmp/gp_config_limits_XXXXXX";

static void big_file(void)
{
	/* a 100 MB file (sparse: what matters is what the parser reads): one error, fast, and no
	 * more memory than the limit (it once took 520 MB) */
	char path[256], want[512], err[512] = "";
	snprintf(path, sizeof(path), "%s/big.yaml", tmpdir);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 100 << 20), 0);
	CHECK_EQ(pwrite(fd, "output: {top: 1}\n", 17, 0), 17);
	close(fd);
	struct gp_config cfg;
	long rss = max_rss_kb();
	double t = now_s();
	CHECK_EQ(gp_config__load(path, &cfg, err, sizeof(err)), -EINVAL);
	t = now_s() - t;
	snprintf(want, sizeof(want), "%s: larger than the 1048576-byte limit for a probe configuration", path);
	CHECK_STR(err, want);
	CHECK(t < 1.0);
	long grown = max_rss_kb() - rss;
	if (grown > 16 * 1024) {
		fprintf(stderr, "loading a 100 MB file grew the peak RSS by %ld kB\n", grown);
		check_failures++;
	}
	unlink(path);

	/* a FIFO in place of the file: refused at once, not waited on */
	snprintf(path, sizeof(path), "%s/fifo.yaml", tmpdir);
	CHECK_EQ(mkfifo(path, 0600), 0);
	alarm(10);
	CHECK_EQ(gp_config__load(path, &cfg, err, sizeof(err)), -EINVAL);
	alarm(0);
	snprintf(want, sizeof(want), "%s: a probe configuration is not a regular file", path);
	CHECK_STR(err, want);
	unlink(path);

	/* a probe's path keeps where it was written, for `gpuprobe run`'s messages */
	snprintf(path, sizeof(path), "%s/ok.yaml", tmpdir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	const char *text = "probes:\n  - a.o\n  - path:   sub/b.o\n";
	CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	CHECK_EQ(gp_config__load(path, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(cfg.nprobes, 2);
	if (cfg.nprobes == 2) {
		CHECK_EQ(cfg.probes[0].line, 2);
		CHECK_EQ(cfg.probes[0].col, 5);
		CHECK_EQ(cfg.probes[1].line, 3);
		CHECK_EQ(cfg.probes[1].col, 13);
		snprintf(want, sizeof(want), "%s/sub/b.o", tmpdir);
		CHECK_STR(cfg.probes[1].path, want);
	}
	gp_config__free(&cfg);
	unlink(path);
}

int main(void)
{
	repeated_keys();
	empty();
	limits();
	escaped();
	CHECK(mkdtemp(tmpdir) != NULL);
	big_file();
	rmdir(tmpdir);
	CHECK_DONE();
}
